import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/deterministic.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { DeterministicExtractor, LlmExtractor } from '../../src/memory/graph/extract.js';
import { KG_TOOL_NAMES, KnowledgeGraphTools } from '../../src/memory/graph/knowledge-graph.js';
import {
  GRAPH_KIND,
  canonicalJson,
  safeDecodeGraphObject,
} from '../../src/memory/graph/objects.js';
import { GraphMemory } from '../../src/memory/graph/graph.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { ledgerGraph } from '../../src/eval/authselect/ledger-graph.js';
import type { LlmProvider } from '../../src/ports/llm.js';
import type { StorageBackend } from '../../src/ports/storage.js';
import { ManualClock, MemoryKeySource, SeededRandom } from '../../src/testing/doubles.js';

async function setup(storage?: StorageBackend, keys = new MemoryKeySource()) {
  const store = storage ?? (await MemoryBackend.open());
  const ledger = await Ledger.open({
    storage: store,
    keys,
    clock: new ManualClock(),
    random: new SeededRandom('graph-test'),
  });
  return { store, keys, ledger };
}

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  await expect(p).rejects.toSatisfy((e: unknown) => isMemwardenError(e) && e.code === code);
}

describe('graph objects', () => {
  it('canonical JSON and a closed decoder', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: 1, c: 0 }] })).toBe('{"a":[2,{"c":0,"d":1}],"b":1}');
    expect(
      safeDecodeGraphObject('{"from":"a","relationType":"r","t":"relation","to":"b"}'),
    ).toEqual({ t: 'relation', from: 'a', to: 'b', relationType: 'r' });
    expect(
      safeDecodeGraphObject('{"from":"a","relationType":"r","t":"relation","to":"b","x":1}'),
    ).toBeUndefined();
    expect(safeDecodeGraphObject('not json')).toBeUndefined();
    expect(safeDecodeGraphObject('{"t":"synonym","a":"x","b":"y","score":7}')).toBeUndefined();
  });
});

describe('GraphMemory over the ledger', () => {
  it('every structural write is a signed, logged graph entry; the index rebuilds from verified entries', async () => {
    const { store, keys, ledger } = await setup();
    const alice = await ledger.registerPrincipal('user', 'alice');
    const g = await GraphMemory.open({
      ...ledgerGraph(ledger),
      extractor: new DeterministicExtractor(['Zdeno Chara', 'Boston Bruins', 'Boston']),
    });
    const tools = new KnowledgeGraphTools(g);
    await tools.create_entities(
      { entities: [{ name: 'Boston', entityType: 'city', observations: ['in Massachusetts'] }] },
      { principal: alice.id, tier: 'USER_VERIFIED' },
    );
    const pid = await g.addPassage('Zdeno Chara captains the Boston Bruins.', {
      principal: alice.id,
      tier: 'USER_VERIFIED',
    });
    await g.addPassage('The Boston Bruins are based in Boston.', {
      principal: alice.id,
      tier: 'USER_VERIFIED',
    });
    const entries = await store.listEntries({});
    const graphEntries = entries.filter((e) => e.kind === GRAPH_KIND);
    expect(graphEntries.length).toBe(3); // entity + 2 extractions
    for (const e of entries) expect((await ledger.verifyStored(e)).ok).toBe(true);
    expect(g.authorityOfEntry(pid)).toBe('A');
    const again = await GraphMemory.open(
      ledgerGraph(
        await Ledger.open({
          storage: store,
          keys,
          clock: new ManualClock(),
          random: new SeededRandom('g2'),
        }),
      ),
    );
    expect(again.entityNames().sort()).toEqual(g.entityNames().sort());
    expect(again.index.edgeCount).toBe(g.index.edgeCount);
    expect(again.entity('Boston')?.observations.map((o) => o.text)).toEqual(['in Massachusetts']);
  });

  it('integrity follows the write, and derived objects take the minimum over their closure', async () => {
    const { ledger } = await setup();
    const alice = await ledger.registerPrincipal('user', 'alice');
    const tool = await ledger.registerPrincipal('tool', 'importer');
    const g = await GraphMemory.open({
      ...ledgerGraph(ledger),
      embedder: new DeterministicEmbedder(),
    });
    const A = { principal: alice.id, tier: 'USER_VERIFIED' } as const;
    const U = { principal: tool.id, tier: 'EXTERNAL_TOOL' } as const;
    const tools = new KnowledgeGraphTools(g);
    await tools.create_entities(
      {
        entities: [
          { name: 'Karen Fowler', entityType: 'person', observations: [] },
          { name: 'Bruce Chatwin', entityType: 'person', observations: [] },
        ],
      },
      A,
    );
    const [edge] = await tools.create_relations(
      { relations: [{ from: 'Karen Fowler', to: 'Bruce Chatwin', relationType: 'knows' }] },
      U,
    );
    expect(edge!.provenance!.authority).toBe('U'); // both endpoints A, the edge stays U
    expect(g.index.unauthenticatedCount).toBe(1);
    // A U passage, extracted by an A principal: the extraction inherits U from its parent.
    const p = await g.addPassage('Fowler Karen wrote a novel.', U, {
      entities: ['Karen Fowler'],
      triples: [],
    });
    expect(g.authorityOfEntry(p)).toBe('U');
    expect(g.index.unauthenticatedCount).toBe(2);
    // A synonym link written by A over a U-created entity is U (merge evidence closure).
    await tools.create_entities(
      { entities: [{ name: 'Fowler Karen', entityType: 'person', observations: [] }] },
      U,
    );
    const ids = await g.mergeSynonyms(A, ['Karen Fowler', 'Fowler Karen']);
    expect(ids.length).toBe(1);
    expect(g.authorityOfEntry(ids[0]!)).toBe('U');
    // A U principal cannot delete authenticated structure; it can delete its own.
    await tools.create_relations(
      { relations: [{ from: 'Bruce Chatwin', to: 'Karen Fowler', relationType: 'met' }] },
      A,
    );
    await tools.delete_relations(
      {
        relations: [
          { from: 'Bruce Chatwin', to: 'Karen Fowler', relationType: 'met' },
          { from: 'Karen Fowler', to: 'Bruce Chatwin', relationType: 'knows' },
        ],
      },
      U,
    );
    expect(g.allRelations().map((r) => r.relationType)).toEqual(['met']);
  });

  it('AuthSelect on graph memory: an unauthenticated edge diverges and the gate routes it', async () => {
    const { ledger } = await setup();
    const alice = await ledger.registerPrincipal('user', 'alice');
    const peer = await ledger.registerPrincipal('tool', 'peer');
    const names = [
      'Zdeno Chara',
      'Boston Bruins',
      'Boston',
      'Karen Fowler',
      'Providence',
      'Lake Placid',
    ];
    const g = await GraphMemory.open({
      ...ledgerGraph(ledger),
      extractor: new DeterministicExtractor(names),
    });
    const A = { principal: alice.id, tier: 'USER_VERIFIED' } as const;
    await g.addPassage('Zdeno Chara captains the Boston Bruins.', A);
    const gold = await g.addPassage('The Boston Bruins are based in Boston.', A);
    const wrong = await g.addPassage('Karen Fowler lives in Providence.', A);
    await g.addPassage('Lake Placid hosted the games.', A);
    const clean = g.select('Where is the team Zdeno Chara captains based?', 2);
    expect(clean.mode).toBe('clean');
    expect(clean.fullIds).toContain(gold);
    const tools = new KnowledgeGraphTools(g);
    const U = { principal: peer.id, tier: 'EXTERNAL_TOOL' } as const;
    for (let i = 0; i < 6; i++)
      await tools.create_relations(
        { relations: [{ from: 'Zdeno Chara', to: 'Providence', relationType: `r${i}` }] },
        U,
      );
    const sel = g.select('Where is the team Zdeno Chara captains based?', 2);
    expect(sel.fullIds).toContain(wrong);
    expect(sel.diverged).toBe(true);
    expect(sel.authIds).toEqual(clean.fullIds);
    expect(sel.authority).toBe('U');
    expect(g.decide(sel, 'A', { mode: 'require_user', tool: 'commit_action' }).kind).toBe(
      'require_user',
    );
    expect(g.decide(clean, 'A').kind).toBe('allow');
  });
});

describe('MCP-compatible operations', () => {
  it('names, shapes, pagination and coded errors', async () => {
    const { ledger } = await setup();
    const u = await ledger.registerPrincipal('user', 'u');
    const ctx = { principal: u.id, tier: 'USER_VERIFIED' } as const;
    const g = await GraphMemory.open({ ...ledgerGraph(ledger) });
    const t = new KnowledgeGraphTools(g);
    expect(KG_TOOL_NAMES).toEqual([
      'create_entities',
      'create_relations',
      'add_observations',
      'delete_entities',
      'delete_observations',
      'delete_relations',
      'read_graph',
      'search_nodes',
      'open_nodes',
    ]);
    const created = (
      await t.call(
        'create_entities',
        {
          entities: ['a', 'b', 'c', 'd', 'e'].map((n) => ({
            name: n,
            entityType: 'thing',
            observations: [`obs ${n}`],
          })),
        },
        ctx,
      )
    ).result as unknown[];
    expect(created.length).toBe(5);
    expect(
      (
        (
          await t.call(
            'create_entities',
            { entities: [{ name: 'a', entityType: 'x', observations: [] }] },
            ctx,
          )
        ).result as unknown[]
      ).length,
    ).toBe(0);
    await t.call(
      'create_relations',
      {
        relations: [
          { from: 'a', to: 'b', relationType: 'r' },
          { from: 'a', to: 'b', relationType: 'r' },
          { from: 'c', to: 'e', relationType: 's' },
        ],
      },
      ctx,
    );
    expect(g.allRelations().length).toBe(2);
    expect(
      await t.call(
        'add_observations',
        { observations: [{ entityName: 'a', contents: ['new', 'obs a'] }] },
        ctx,
      ),
    ).toEqual({ result: [{ entityName: 'a', addedObservations: ['new'] }], held: [] });
    await expectCode(
      t.call('add_observations', { observations: [{ entityName: 'zz', contents: ['x'] }] }, ctx),
      'STORAGE_NOT_FOUND',
    );
    await expectCode(t.call('create_entities', { entities: [{ name: 5 }] }, ctx), 'INPUT_INVALID');
    await expectCode(t.call('nope', {}, ctx), 'INPUT_INVALID');
    const p1 = t.read_graph({ limit: 2 });
    expect(p1.entities.map((e) => e.name)).toEqual(['a', 'b']);
    expect(p1.relations.map((r) => r.to)).toEqual(['b']);
    const p2 = t.read_graph({ limit: 2, cursor: p1.nextCursor });
    expect(p2.entities.map((e) => e.name)).toEqual(['c', 'd']);
    const p3 = t.read_graph({ limit: 2, cursor: p2.nextCursor });
    expect(p3.entities.map((e) => e.name)).toEqual(['e']);
    expect(p3.nextCursor).toBeUndefined();
    expect(t.search_nodes({ query: 'OBS C' }).entities.map((e) => e.name)).toEqual(['c']);
    expect(t.open_nodes({ names: ['a', 'b', 'missing'] }).relations.length).toBe(1);
    await t.call(
      'delete_observations',
      { deletions: [{ entityName: 'a', observations: ['new'] }] },
      ctx,
    );
    expect(g.entity('a')?.observations.map((o) => o.text)).toEqual(['obs a']);
    await t.call('delete_entities', { entityNames: ['b'] }, ctx);
    expect(g.allRelations().length).toBe(1);
    expect(g.index.edgeCount).toBe(1);
  });
});

describe('extraction', () => {
  it('LLM OpenIE is validated; a malformed answer is LLM_MALFORMED', async () => {
    const llm = (text: string): LlmProvider => ({
      name: 'scripted:openie',
      generate: async () => ({ text, toolCalls: [] }),
    });
    const good = await new LlmExtractor(
      llm('{"entities":["A"],"triples":[["A","founded","B"]]}'),
    ).extract('A founded B.');
    expect(good).toEqual({ entities: ['A', 'B'], triples: [['A', 'founded', 'B']] });
    await expectCode(new LlmExtractor(llm('{"entities":"A"}')).extract('x'), 'LLM_MALFORMED');
    await expectCode(new LlmExtractor(llm('nope')).extract('x'), 'LLM_MALFORMED');
  });

  it('the deterministic extractor finds gazetteer names and joins them', () => {
    const x = new DeterministicExtractor(['Boston Bruins', 'Boston', 'Zdeno Chara']).extractSync(
      'Zdeno Chara captains the Boston Bruins. Boston is big.',
    );
    expect(x.entities).toEqual(['Zdeno Chara', 'Boston Bruins', 'Boston']);
    expect(x.triples).toEqual([['Zdeno Chara', 'captains the', 'Boston Bruins']]);
    expect(
      new DeterministicExtractor().extractSync('Alice Varga met Bob in Lakeview.').entities,
    ).toEqual(['Alice Varga', 'Bob', 'Lakeview']);
  });
});
