/**
 * The reference MCP memory server's own test cases, re-expressed against memwarden's MCP server
 * over its real Streamable HTTP transport (a bearer key per principal; each case gets a fresh
 * principal, so a fresh, empty graph — what the reference gets from a fresh JSONL file).
 *
 * SOURCE (cases re-expressed, not copied):
 * - modelcontextprotocol/servers, src/memory/__tests__/knowledge-graph.test.ts
 *   @ 061ece3b43fb7a741ce0239cdd7157445f9dccf8 — 38 cases (describe groups createEntities …
 *   file persistence); MIT licence.
 * - modelcontextprotocol/servers, src/memory/__tests__/delete-reporting.test.ts
 *   @ a216dd9ab912129ce032eda61ddd6dae950cf44a — 7 cases, checked through the delete tools'
 *   `message` (the reference's schema has success + message only).
 * - modelcontextprotocol/servers, src/memory/index.ts @ 18e1918a038097ec2d02d88a771b056c40b822e7 —
 *   the tools' output schemas, titles and annotations, re-expressed below as zod shapes.
 *
 * The adapter `Kg` gives each case the reference manager's method names; each method is one MCP
 * tool call, and a tool error becomes a thrown Error carrying the tool's text (the reference's
 * manager throws). Every structured result is also parsed with the reference's output schema
 * (strict: an extra field such as memwarden's provenance fails). docs/compatibility.md lists
 * each case with its outcome.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  MCP_PROVENANCE_META_KEY,
  McpBackend,
  serveHttp,
  toolErrorCode,
} from '../../src/mcp/index.js';
import { Memory } from '../../src/open.js';

// ---- the reference's output schemas (index.ts @ 18e1918a), strict ------------------------------

const RefEntity = z
  .object({ name: z.string(), entityType: z.string(), observations: z.array(z.string()) })
  .strict();
const RefRelation = z
  .object({ from: z.string(), to: z.string(), relationType: z.string() })
  .strict();
const RefGraph = z
  .object({ entities: z.array(RefEntity), relations: z.array(RefRelation) })
  .strict();
const RefStatus = z.object({ success: z.boolean(), message: z.string() }).strict();
const REF_OUTPUT: Record<string, z.ZodTypeAny> = {
  create_entities: z.object({ entities: z.array(RefEntity) }).strict(),
  create_relations: z.object({ relations: z.array(RefRelation) }).strict(),
  add_observations: z
    .object({
      results: z.array(
        z.object({ entityName: z.string(), addedObservations: z.array(z.string()) }).strict(),
      ),
    })
    .strict(),
  delete_entities: RefStatus,
  delete_observations: RefStatus,
  delete_relations: RefStatus,
  read_graph: RefGraph,
  search_nodes: RefGraph,
  open_nodes: RefGraph,
};

type Entity = z.infer<typeof RefEntity>;
type Relation = z.infer<typeof RefRelation>;
type Graph = z.infer<typeof RefGraph>;

// ---- the adapter ---------------------------------------------------------------------------------

/** The reference manager's surface, each method one MCP tool call. */
class Kg {
  readonly results: CallToolResult[] = [];
  constructor(private readonly client: Client) {}

  async tool(name: string, args: Record<string, unknown>): Promise<unknown> {
    const r = (await this.client.callTool({ name, arguments: args })) as CallToolResult;
    this.results.push(r);
    if (r.isError === true) throw new Error((r.content[0] as { text: string }).text);
    // The reference's schema must accept what memwarden returns.
    return REF_OUTPUT[name]!.parse(r.structuredContent);
  }
  /** A call whose result is not held to the reference's schema (memwarden extensions). */
  async raw(name: string, args: Record<string, unknown>): Promise<unknown> {
    const r = (await this.client.callTool({ name, arguments: args })) as CallToolResult;
    this.results.push(r);
    return r.structuredContent;
  }
  async createEntities(entities: Entity[]): Promise<Entity[]> {
    return ((await this.tool('create_entities', { entities })) as { entities: Entity[] }).entities;
  }
  async createRelations(relations: Relation[]): Promise<Relation[]> {
    return ((await this.tool('create_relations', { relations })) as { relations: Relation[] })
      .relations;
  }
  async addObservations(
    observations: { entityName: string; contents: string[] }[],
  ): Promise<{ entityName: string; addedObservations: string[] }[]> {
    return (
      (await this.tool('add_observations', { observations })) as {
        results: { entityName: string; addedObservations: string[] }[];
      }
    ).results;
  }
  async deleteEntities(entityNames: string[]): Promise<string> {
    return ((await this.tool('delete_entities', { entityNames })) as { message: string }).message;
  }
  async deleteObservations(
    deletions: { entityName: string; observations: string[] }[],
  ): Promise<string> {
    return ((await this.tool('delete_observations', { deletions })) as { message: string }).message;
  }
  async deleteRelations(relations: Relation[]): Promise<string> {
    return ((await this.tool('delete_relations', { relations })) as { message: string }).message;
  }
  async readGraph(): Promise<Graph> {
    return (await this.tool('read_graph', {})) as Graph;
  }
  async searchNodes(query: string): Promise<Graph> {
    return (await this.tool('search_nodes', { query })) as Graph;
  }
  async openNodes(names: string[]): Promise<Graph> {
    return (await this.tool('open_nodes', { names })) as Graph;
  }
}

// A shared, busy machine: opening PGlite and the first HTTP round trips can take seconds.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let dir = '';
let memory: Memory;
let backend: McpBackend;
let http: HttpServer;
let url = '';
const clients: Client[] = [];

async function clientFor(endpoint: string, key: string): Promise<Client> {
  const c = new Client({ name: 'compat-reference', version: '0.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(endpoint), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(c);
  return c;
}

/** A fresh principal (an empty graph) and its key. */
let n = 0;
async function freshPrincipal(): Promise<{ id: string; apiKey: string }> {
  return memory.createPrincipal('user', `kg-${++n}`);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mw-compat-mcp-'));
  memory = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  backend = await McpBackend.open(memory);
  ({ server: http, url } = await serveHttp(backend, { port: 0 }));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  http.closeAllConnections();
  await new Promise<void>((r) => http.close(() => r()));
  await memory?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('reference knowledge-graph.test.ts, through memwarden MCP (Streamable HTTP)', () => {
  let manager: Kg;
  let key = '';
  beforeEach(async () => {
    ({ apiKey: key } = await freshPrincipal());
    manager = new Kg(await clientFor(url, key));
  });

  describe('createEntities', () => {
    it('creates new entities and returns exactly them', async () => {
      const entities = [
        { name: 'Alice', entityType: 'person', observations: ['works at Acme Corp'] },
        { name: 'Bob', entityType: 'person', observations: ['likes programming'] },
      ];
      const created = await manager.createEntities(entities);
      expect(created).toEqual(entities);
      expect((await manager.readGraph()).entities).toHaveLength(2);
    });

    it('skips an entity whose name exists', async () => {
      const entities = [
        { name: 'Alice', entityType: 'person', observations: ['works at Acme Corp'] },
      ];
      await manager.createEntities(entities);
      expect(await manager.createEntities(entities)).toHaveLength(0);
      expect((await manager.readGraph()).entities).toHaveLength(1);
    });

    it('accepts an empty batch', async () => {
      expect(await manager.createEntities([])).toHaveLength(0);
    });
  });

  describe('createRelations', () => {
    beforeEach(async () => {
      await manager.createEntities([
        { name: 'Alice', entityType: 'person', observations: [] },
        { name: 'Bob', entityType: 'person', observations: [] },
      ]);
    });

    it('creates new relations and returns exactly them', async () => {
      const relations = [{ from: 'Alice', to: 'Bob', relationType: 'knows' }];
      expect(await manager.createRelations(relations)).toEqual(relations);
      expect((await manager.readGraph()).relations).toHaveLength(1);
    });

    it('skips a relation that exists', async () => {
      const relations = [{ from: 'Alice', to: 'Bob', relationType: 'knows' }];
      await manager.createRelations(relations);
      expect(await manager.createRelations(relations)).toHaveLength(0);
      expect((await manager.readGraph()).relations).toHaveLength(1);
    });

    it('accepts an empty batch', async () => {
      expect(await manager.createRelations([])).toHaveLength(0);
    });

    it('refuses a relation from a missing entity, writing nothing', async () => {
      await expect(
        manager.createRelations([{ from: 'Ghost', to: 'Alice', relationType: 'knows' }]),
      ).rejects.toThrow('Entity with name Ghost not found');
      expect(toolErrorCode(manager.results.at(-1)!)).toBe('STORAGE_NOT_FOUND');
      expect((await manager.readGraph()).relations).toHaveLength(0);
    });

    it('refuses a relation to a missing entity, writing nothing', async () => {
      await expect(
        manager.createRelations([{ from: 'Alice', to: 'Ghost', relationType: 'knows' }]),
      ).rejects.toThrow('Entity with name Ghost not found');
      const g = await manager.readGraph();
      expect(g.relations).toHaveLength(0);
      expect(g.entities.map((e) => e.name).sort()).toEqual(['Alice', 'Bob']);
    });
  });

  describe('addObservations', () => {
    beforeEach(async () => {
      await manager.createEntities([
        { name: 'Alice', entityType: 'person', observations: ['works at Acme Corp'] },
      ]);
    });

    it('adds observations to an existing entity', async () => {
      const r = await manager.addObservations([
        { entityName: 'Alice', contents: ['likes coffee', 'has a dog'] },
      ]);
      expect(r).toHaveLength(1);
      expect(r[0]!.entityName).toBe('Alice');
      expect(r[0]!.addedObservations).toHaveLength(2);
      const alice = (await manager.readGraph()).entities.find((e) => e.name === 'Alice');
      expect(alice?.observations).toHaveLength(3);
    });

    it('does not add an observation twice', async () => {
      await manager.addObservations([{ entityName: 'Alice', contents: ['likes coffee'] }]);
      const r = await manager.addObservations([
        { entityName: 'Alice', contents: ['likes coffee', 'has a dog'] },
      ]);
      expect(r[0]!.addedObservations).toEqual(['has a dog']);
      const alice = (await manager.readGraph()).entities.find((e) => e.name === 'Alice');
      expect(alice?.observations).toHaveLength(3);
    });

    it('fails for an entity that does not exist', async () => {
      await expect(
        manager.addObservations([{ entityName: 'NonExistent', contents: ['some observation'] }]),
      ).rejects.toThrow('Entity with name NonExistent not found');
    });
  });

  describe('deleteEntities', () => {
    it('deletes an entity', async () => {
      await manager.createEntities([
        { name: 'Alice', entityType: 'person', observations: [] },
        { name: 'Bob', entityType: 'person', observations: [] },
      ]);
      await manager.deleteEntities(['Alice']);
      const g = await manager.readGraph();
      expect(g.entities.map((e) => e.name)).toEqual(['Bob']);
    });

    it('removes the relations of a deleted entity', async () => {
      await manager.createEntities(
        ['Alice', 'Bob', 'Charlie'].map((name) => ({
          name,
          entityType: 'person',
          observations: [],
        })),
      );
      await manager.createRelations([
        { from: 'Alice', to: 'Bob', relationType: 'knows' },
        { from: 'Bob', to: 'Charlie', relationType: 'knows' },
      ]);
      await manager.deleteEntities(['Bob']);
      const g = await manager.readGraph();
      expect(g.entities).toHaveLength(2);
      expect(g.relations).toHaveLength(0);
    });

    it('is quiet about a name that does not exist', async () => {
      await manager.deleteEntities(['NonExistent']);
      expect((await manager.readGraph()).entities).toHaveLength(0);
    });
  });

  describe('deleteObservations', () => {
    it('deletes an observation', async () => {
      await manager.createEntities([
        {
          name: 'Alice',
          entityType: 'person',
          observations: ['works at Acme Corp', 'likes coffee'],
        },
      ]);
      await manager.deleteObservations([{ entityName: 'Alice', observations: ['likes coffee'] }]);
      const alice = (await manager.readGraph()).entities.find((e) => e.name === 'Alice');
      expect(alice?.observations).toEqual(['works at Acme Corp']);
    });

    it('is quiet about an entity that does not exist', async () => {
      await manager.deleteObservations([
        { entityName: 'NonExistent', observations: ['some observation'] },
      ]);
      expect((await manager.readGraph()).entities).toHaveLength(0);
    });
  });

  describe('deleteRelations', () => {
    it('deletes only the named relation', async () => {
      await manager.createEntities([
        { name: 'Alice', entityType: 'person', observations: [] },
        { name: 'Bob', entityType: 'person', observations: [] },
      ]);
      await manager.createRelations([
        { from: 'Alice', to: 'Bob', relationType: 'knows' },
        { from: 'Alice', to: 'Bob', relationType: 'works_with' },
      ]);
      await manager.deleteRelations([{ from: 'Alice', to: 'Bob', relationType: 'knows' }]);
      const g = await manager.readGraph();
      expect(g.relations.map((r) => r.relationType)).toEqual(['works_with']);
    });
  });

  describe('readGraph', () => {
    it('is empty before anything is written', async () => {
      expect(await manager.readGraph()).toEqual({ entities: [], relations: [] });
    });

    it('returns entities and relations, a self-relation included', async () => {
      await manager.createEntities([
        { name: 'Alice', entityType: 'person', observations: ['works at Acme Corp'] },
      ]);
      await manager.createRelations([{ from: 'Alice', to: 'Alice', relationType: 'self' }]);
      const g = await manager.readGraph();
      expect(g.entities).toHaveLength(1);
      expect(g.relations).toHaveLength(1);
    });
  });

  describe('searchNodes', () => {
    beforeEach(async () => {
      await manager.createEntities([
        {
          name: 'Alice',
          entityType: 'person',
          observations: ['works at Acme Corp', 'likes programming'],
        },
        { name: 'Bob', entityType: 'person', observations: ['works at TechCo'] },
        { name: 'Acme Corp', entityType: 'company', observations: ['tech company'] },
      ]);
      await manager.createRelations([
        { from: 'Alice', to: 'Acme Corp', relationType: 'works_at' },
        { from: 'Bob', to: 'Acme Corp', relationType: 'competitor' },
      ]);
    });
    const names = (g: Graph): string[] => g.entities.map((e) => e.name).sort();

    it('matches an entity name', async () => {
      expect(names(await manager.searchNodes('Alice'))).toEqual(['Alice']);
    });
    it('matches an entity type', async () => {
      expect(names(await manager.searchNodes('company'))).toEqual(['Acme Corp']);
    });
    it('matches observation text', async () => {
      expect(names(await manager.searchNodes('programming'))).toEqual(['Alice']);
    });
    it('ignores case', async () => {
      expect(names(await manager.searchNodes('ALICE'))).toEqual(['Alice']);
    });
    it('returns every relation with at least one matched endpoint', async () => {
      const g = await manager.searchNodes('Acme');
      expect(names(g)).toEqual(['Acme Corp', 'Alice']);
      expect(g.relations).toHaveLength(2);
    });
    it('returns a matched entity’s relation to an unmatched one', async () => {
      const g = await manager.searchNodes('Alice');
      expect(g.relations).toEqual([{ from: 'Alice', to: 'Acme Corp', relationType: 'works_at' }]);
    });
    it('returns an empty graph when nothing matches', async () => {
      expect(await manager.searchNodes('NonExistent')).toEqual({ entities: [], relations: [] });
    });
  });

  describe('openNodes', () => {
    beforeEach(async () => {
      await manager.createEntities(
        ['Alice', 'Bob', 'Charlie'].map((name) => ({
          name,
          entityType: 'person',
          observations: [],
        })),
      );
      await manager.createRelations([
        { from: 'Alice', to: 'Bob', relationType: 'knows' },
        { from: 'Bob', to: 'Charlie', relationType: 'knows' },
      ]);
    });
    const has = (g: Graph, from: string, to: string): boolean =>
      g.relations.some((r) => r.from === from && r.to === to);

    it('opens the named nodes', async () => {
      const g = await manager.openNodes(['Alice', 'Bob']);
      expect(g.entities.map((e) => e.name).sort()).toEqual(['Alice', 'Bob']);
    });
    it('returns every relation touching an opened node (two opened)', async () => {
      const g = await manager.openNodes(['Alice', 'Bob']);
      expect(g.relations).toHaveLength(2);
      expect(has(g, 'Alice', 'Bob') && has(g, 'Bob', 'Charlie')).toBe(true);
    });
    it('returns both relations of a node in the middle', async () => {
      const g = await manager.openNodes(['Bob']);
      expect(g.relations).toHaveLength(2);
      expect(has(g, 'Alice', 'Bob') && has(g, 'Bob', 'Charlie')).toBe(true);
    });
    it('returns an outgoing relation to a node not opened', async () => {
      const g = await manager.openNodes(['Alice']);
      expect(g.entities.map((e) => e.name)).toEqual(['Alice']);
      expect(g.relations).toEqual([{ from: 'Alice', to: 'Bob', relationType: 'knows' }]);
    });
    it('returns an incoming relation from a node not opened', async () => {
      const g = await manager.openNodes(['Charlie']);
      expect(g.entities).toHaveLength(1);
      expect(g.relations).toEqual([{ from: 'Bob', to: 'Charlie', relationType: 'knows' }]);
    });
    it('skips a name that does not exist', async () => {
      expect((await manager.openNodes(['NonExistent'])).entities).toHaveLength(0);
    });
    it('returns an empty graph for no names', async () => {
      expect(await manager.openNodes([])).toEqual({ entities: [], relations: [] });
    });
  });

  // The reference's "file persistence" group: a second manager on the same file. Here: a second
  // backend (a fresh fold of the ledger) behind a second HTTP endpoint, same principal and key.
  describe('persistence (a second server over the same store)', () => {
    let http2: HttpServer;
    let url2 = '';
    let manager2: Kg;
    let client2: Client;
    beforeEach(async () => {
      const b2 = await McpBackend.open(memory);
      ({ server: http2, url: url2 } = await serveHttp(b2, { port: 0 }));
      client2 = await clientFor(url2, key);
      manager2 = new Kg(client2);
    });
    afterEach(async () => {
      await client2.close();
      http2.closeAllConnections();
      await new Promise<void>((r) => http2.close(() => r()));
    });

    it('a second server reads what the first wrote', async () => {
      await manager.createEntities([
        { name: 'Alice', entityType: 'person', observations: ['persistent data'] },
      ]);
      const g = await manager2.readGraph();
      expect(g.entities.map((e) => e.name)).toEqual(['Alice']);
    });

    it('each create is one stored record, entity before relation (departure: no JSONL file)', async () => {
      // The reference reads its JSONL file; memwarden has no such file. The equivalent fact:
      // each create is one signed graph entry, in order, and they fold back to the same graph.
      await manager.createEntities([{ name: 'Alice', entityType: 'person', observations: [] }]);
      await manager.createRelations([{ from: 'Alice', to: 'Alice', relationType: 'self' }]);
      const prov = manager.results.map(
        (r) =>
          (r._meta?.[MCP_PROVENANCE_META_KEY] ?? {}) as {
            entities?: Record<string, { entryId: string }>;
            relations?: { provenance: { entryId: string } }[];
          },
      );
      const entityEntry = prov[0]!.entities!.Alice!.entryId;
      const relationEntry = prov[1]!.relations![0]!.provenance.entryId;
      expect(entityEntry).not.toBe(relationEntry);
      expect(await manager2.readGraph()).toEqual({
        entities: [{ name: 'Alice', entityType: 'person', observations: [] }],
        relations: [{ from: 'Alice', to: 'Alice', relationType: 'self' }],
      });
    });

    it('a reloaded graph has no storage-only fields on entities or relations', async () => {
      await manager.createEntities([
        { name: 'Alice', entityType: 'person', observations: ['test observation'] },
        { name: 'Bob', entityType: 'person', observations: [] },
      ]);
      await manager.createRelations([{ from: 'Alice', to: 'Bob', relationType: 'knows' }]);
      const g = await manager2.readGraph(); // strict schema: any extra field would fail here
      expect(g.entities).toHaveLength(2);
      for (const e of g.entities)
        expect(Object.keys(e).sort()).toEqual(['entityType', 'name', 'observations']);
      expect(g.relations).toHaveLength(1);
      for (const r of g.relations)
        expect(Object.keys(r).sort()).toEqual(['from', 'relationType', 'to']);
    });

    it('reloaded search results have no storage-only fields', async () => {
      await manager.createEntities([
        { name: 'Alice', entityType: 'person', observations: ['works at Acme'] },
      ]);
      await manager.createRelations([{ from: 'Alice', to: 'Alice', relationType: 'self' }]);
      const g = await manager2.searchNodes('Alice');
      expect(g.entities).toHaveLength(1);
      expect(g.entities[0]).not.toHaveProperty('type');
      expect(g.relations).toHaveLength(1);
      expect(g.relations[0]).not.toHaveProperty('type');
    });

    it('reloaded open results have no storage-only fields', async () => {
      await manager.createEntities([
        { name: 'Alice', entityType: 'person', observations: [] },
        { name: 'Bob', entityType: 'person', observations: [] },
      ]);
      await manager.createRelations([{ from: 'Alice', to: 'Bob', relationType: 'knows' }]);
      const g = await manager2.openNodes(['Alice', 'Bob']);
      expect(g.entities).toHaveLength(2);
      for (const e of g.entities) expect(e).not.toHaveProperty('type');
      expect(g.relations).toHaveLength(1);
      expect(g.relations[0]).not.toHaveProperty('type');
    });
  });
});

describe('reference delete-reporting.test.ts, through memwarden MCP (Streamable HTTP)', () => {
  let manager: Kg;
  beforeEach(async () => {
    manager = new Kg(await clientFor(url, (await freshPrincipal()).apiKey));
    await manager.createEntities([
      { name: 'Alice', entityType: 'person', observations: ['works at Acme Corp', 'likes tea'] },
      { name: 'Bob', entityType: 'person', observations: ['likes programming'] },
    ]);
    await manager.createRelations([{ from: 'Alice', to: 'Bob', relationType: 'works_with' }]);
  });

  it('delete_entities names what matched and what did not', async () => {
    expect(await manager.deleteEntities(['Alice', 'Alise'])).toBe(
      'Deleted 1 of 2 entities. Not found: Alise',
    );
  });
  it('delete_entities reports nothing deleted when no name matches', async () => {
    expect(await manager.deleteEntities(['Nobody'])).toBe(
      'Deleted 0 of 1 entities. Not found: Nobody',
    );
    expect((await manager.readGraph()).entities).toHaveLength(2);
  });
  it('delete_entities still removes the entity and its relations', async () => {
    expect(await manager.deleteEntities(['Alice'])).toBe('Entities deleted successfully');
    const g = await manager.readGraph();
    expect(g.entities.map((e) => e.name)).toEqual(['Bob']);
    expect(g.relations).toHaveLength(0);
  });
  it('delete_observations counts only observations that were there', async () => {
    expect(
      await manager.deleteObservations([
        { entityName: 'Alice', observations: ['likes tea', 'never said this'] },
      ]),
    ).toBe('Deleted 1 of 2 observations.');
  });
  it('delete_observations names a missing entity', async () => {
    expect(
      await manager.deleteObservations([{ entityName: 'Carol', observations: ['anything'] }]),
    ).toBe('Deleted 0 of 1 observations. Entities not found: Carol');
  });
  it('delete_relations counts only relations that matched', async () => {
    expect(
      await manager.deleteRelations([
        { from: 'Alice', to: 'Bob', relationType: 'works_with' },
        { from: 'Alice', to: 'Bob', relationType: 'never_existed' },
      ]),
    ).toBe('Deleted 1 of 2 relations. The rest matched nothing.');
  });
  it('delete_relations reports nothing deleted for a wrong type', async () => {
    expect(
      await manager.deleteRelations([{ from: 'Alice', to: 'Bob', relationType: 'manages' }]),
    ).toBe('Deleted 0 of 1 relations. The rest matched nothing.');
    expect((await manager.readGraph()).relations).toHaveLength(1);
  });
});

describe('the reference server’s surface beyond its knowledge-graph tests', () => {
  it('advertises the reference titles and annotations on the nine graph tools', async () => {
    const c = await clientFor(url, (await freshPrincipal()).apiKey);
    const { tools } = await c.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const write = {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    };
    const del = {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    };
    const read = {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    };
    const expected: [string, string, object][] = [
      ['create_entities', 'Create Entities', write],
      ['create_relations', 'Create Relations', write],
      ['add_observations', 'Add Observations', write],
      ['delete_entities', 'Delete Entities', del],
      ['delete_observations', 'Delete Observations', del],
      ['delete_relations', 'Delete Relations', del],
      ['read_graph', 'Read Graph', read],
      ['search_nodes', 'Search Nodes', read],
      ['open_nodes', 'Open Nodes', read],
    ];
    for (const [name, title, annotations] of expected) {
      const t = byName.get(name);
      expect(t?.title).toBe(title);
      expect(t?.annotations).toEqual(annotations);
      expect(t?.outputSchema).toBeDefined();
    }
  });

  it('read_graph {} returns the whole graph: 151 entities and their relations, no cursor', async () => {
    const kg = new Kg(await clientFor(url, (await freshPrincipal()).apiKey));
    const entities = Array.from({ length: 151 }, (_, i) => ({
      name: `node-${String(i).padStart(3, '0')}`,
      entityType: 'thing',
      observations: [],
    }));
    await kg.createEntities(entities);
    await kg.createRelations(
      entities
        .slice(1)
        .map((e, i) => ({ from: entities[i]!.name, to: e.name, relationType: 'next' })),
    );
    const g = await kg.readGraph(); // strict reference schema: a nextCursor would fail
    expect(g.entities).toHaveLength(151);
    expect(g.relations).toHaveLength(150);
    // A client that pages still can.
    const page = (await kg.raw('read_graph', { limit: 100 })) as {
      entities: unknown[];
      nextCursor?: string;
    };
    expect(page.entities).toHaveLength(100);
    expect(typeof page.nextCursor).toBe('string');
  });

  it('provenance travels in _meta, keyed by entity name and relation', async () => {
    const kg = new Kg(await clientFor(url, (await freshPrincipal()).apiKey));
    await kg.createEntities([{ name: 'Alice', entityType: 'person', observations: [] }]);
    await kg.openNodes(['Alice']);
    const meta = kg.results.at(-1)!._meta?.[MCP_PROVENANCE_META_KEY] as {
      entities: Record<string, { entryId: string; tier: string; authority: string }>;
    };
    expect(meta.entities.Alice).toMatchObject({ tier: 'USER_OBSERVED' });
    expect(typeof meta.entities.Alice!.entryId).toBe('string');
  });

  it('an error is a plain text with the code in _meta, not a prefixed string', async () => {
    const kg = new Kg(await clientFor(url, (await freshPrincipal()).apiKey));
    await expect(kg.addObservations([{ entityName: 'Nobody', contents: ['x'] }])).rejects.toThrow(
      /^Entity with name Nobody not found$/,
    );
    expect(toolErrorCode(kg.results.at(-1)!)).toBe('STORAGE_NOT_FOUND');
  });

  it('an unknown tool is a JSON-RPC error −32602 (the MCP spec’s protocol error), not a tool result', async () => {
    // MCP spec, server/tools § Error Handling: an unknown tool is a protocol error, its example
    // `{"code": -32602, "message": "Unknown tool: invalid_tool_name"}`; the reference server's SDK
    // (McpServer) answers InvalidParams too. A known tool with bad arguments stays a tool error.
    const c = await clientFor(url, (await freshPrincipal()).apiKey);
    const err = await c.callTool({ name: 'invalid_tool_name', arguments: {} }).then(
      (r) => r,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((err as McpError).message).toMatch(/Unknown tool: invalid_tool_name/);
    expect((err as McpError).data).toMatchObject({ code: 'INPUT_INVALID' });
    const bad = (await c.callTool({
      name: 'open_nodes',
      arguments: { names: 5 },
    })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(toolErrorCode(bad)).toBe('INPUT_INVALID');
    expect((await c.listTools()).tools.length).toBeGreaterThan(9); // still answering
  });

  it('serves memory://knowledge-graph as JSON (no subscriptions over stateless HTTP)', async () => {
    const c = await clientFor(url, (await freshPrincipal()).apiKey);
    const kg = new Kg(c);
    await kg.createEntities([{ name: 'Alice', entityType: 'person', observations: ['engineer'] }]);
    const { resources } = await c.listResources();
    expect(resources).toEqual([
      expect.objectContaining({
        uri: 'memory://knowledge-graph',
        name: 'knowledge-graph',
        title: 'Knowledge Graph',
        mimeType: 'application/json',
      }),
    ]);
    const r = await c.readResource({ uri: 'memory://knowledge-graph' });
    expect(r.contents).toHaveLength(1);
    expect(r.contents[0]!.mimeType).toBe('application/json');
    expect(JSON.parse((r.contents[0] as { text: string }).text)).toEqual({
      entities: [{ name: 'Alice', entityType: 'person', observations: ['engineer'] }],
      relations: [],
    });
    expect(c.getServerCapabilities()?.resources?.subscribe).toBeFalsy();
  });
});
