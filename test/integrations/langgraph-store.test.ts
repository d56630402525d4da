/**
 * Conformance of `MemwardenStore` with LangGraph.js's documented BaseStore semantics
 * (@langchain/langgraph-checkpoint `store/base.ts`, InMemoryStore behaviour), against the real
 * Memory (embedded PGlite, ephemeral, deterministic embedder).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InvalidNamespaceError } from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LANGGRAPH_KIND,
  MemwardenStore,
  addressUri,
  parseAddressUri,
} from '../../src/integrations/langgraph/index.js';
import { Memory } from '../../src/open.js';
import { ManualClock } from '../../src/testing/doubles.js';

const NS_PER_MIN = 60_000_000_000n;

let dir: string;
let mem: Memory;
let clock: ManualClock;
let alice: string;
let bob: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'memwarden-langgraph-'));
  clock = new ManualClock(BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n, 1_000_000n);
  mem = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic', clock });
  alice = (await mem.createPrincipal('user', 'alice')).id;
  bob = (await mem.createPrincipal('user', 'bob')).id;
}, 60_000);

afterAll(async () => {
  await mem?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh namespace root per test keeps the tests independent on one Memory. */
let n = 0;
const root = (): string => `t${++n}`;

describe('addresses', () => {
  it('maps (namespace, key) to an exact, reversible source URI', () => {
    expect(addressUri(['users', 'u1'], 'prefs')).toBe('langgraph://users/u1/prefs');
    const tricky = addressUri(['a/b'], 'c');
    expect(tricky).not.toBe(addressUri(['a', 'b'], 'c'));
    expect(parseAddressUri(tricky)).toEqual({ namespace: ['a/b'], key: 'c' });
    expect(parseAddressUri('chat:1')).toBeUndefined();
  });
});

describe('MemwardenStore (LangGraph BaseStore semantics)', () => {
  it('put / get round trip: Item with namespace, key, value and dates; missing key is null', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    await store.put([r, 'users', 'u1'], 'prefs', { theme: 'dark', size: 3, tags: ['a'] });
    const item = await store.get([r, 'users', 'u1'], 'prefs');
    expect(item).not.toBeNull();
    expect(item!.namespace).toEqual([r, 'users', 'u1']);
    expect(item!.key).toBe('prefs');
    expect(item!.value).toEqual({ theme: 'dark', size: 3, tags: ['a'] });
    expect(item!.createdAt).toBeInstanceOf(Date);
    expect(item!.updatedAt.getTime()).toBe(item!.createdAt.getTime());
    expect(await store.get([r, 'users', 'u1'], 'nope')).toBeNull();
    expect(await store.get([r, 'users'], 'prefs')).toBeNull();

    // Underneath: a signed memory of kind 'langgraph' addressed by its source URI.
    const all = await mem.getAll({ principal: alice, limit: 1000 });
    const m = all.find((x) => x.source === addressUri([r, 'users', 'u1'], 'prefs'));
    expect(m?.kind).toBe(LANGGRAPH_KIND);
    expect(m?.writer).toBe(alice);
    expect(JSON.parse(m!.content)).toEqual({
      namespace: [r, 'users', 'u1'],
      key: 'prefs',
      value: { size: 3, tags: ['a'], theme: 'dark' },
    });
  });

  it('a put on an existing key supersedes the previous version; history shows both', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    await store.put([r], 'k', { v: 1 });
    const first = await store.get([r], 'k');
    clock.advance(NS_PER_MIN);
    await store.put([r], 'k', { v: 2 });
    const second = await store.get([r], 'k');
    expect(second!.value).toEqual({ v: 2 });
    expect(second!.createdAt.getTime()).toBe(first!.createdAt.getTime());
    expect(second!.updatedAt.getTime()).toBeGreaterThan(first!.updatedAt.getTime());

    const live = (await mem.getAll({ principal: alice, limit: 1000 })).filter(
      (m) => m.source === addressUri([r], 'k'),
    );
    expect(live).toHaveLength(1);
    expect(live[0]!.supersedes).toBeDefined();
    const h = await mem.history(live[0]!.id, { principal: alice });
    expect(h.map((e) => e.action)).toEqual(['add', 'update']);
    expect(h.map((e) => (JSON.parse(e.memory!.content) as { value: unknown }).value)).toEqual([
      { v: 1 },
      { v: 2 },
    ]);
  });

  it('delete removes the item (a signed tombstone); put(null) deletes too; deleting a missing key is a no-op', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    await store.put([r], 'a', { x: 1 });
    await store.put([r], 'b', { x: 2 });
    await store.delete([r], 'a');
    expect(await store.get([r], 'a')).toBeNull();
    await store.batch([{ namespace: [r], key: 'b', value: null }]);
    expect(await store.get([r], 'b')).toBeNull();
    await expect(store.delete([r], 'never')).resolves.toBeUndefined();
    expect(await store.search([r])).toEqual([]);
    // A deleted key can be written again.
    await store.put([r], 'a', { x: 3 });
    expect((await store.get([r], 'a'))!.value).toEqual({ x: 3 });
  });

  it('search by namespace prefix with filter, limit and offset', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    await store.put([r, 'docs', 'a'], 'd1', { type: 'report', status: 'active', n: 1 });
    await store.put([r, 'docs', 'b'], 'd2', { type: 'report', status: 'draft', n: 2 });
    await store.put([r, 'docs', 'b'], 'd3', { type: 'memo', status: 'active', n: 3 });
    await store.put([r, 'other'], 'd4', { type: 'report', status: 'active', n: 4 });

    const docs = await store.search([r, 'docs']);
    expect(docs.map((i) => i.key).sort()).toEqual(['d1', 'd2', 'd3']);
    const reports = await store.search([r, 'docs'], { filter: { type: 'report' } });
    expect(reports.map((i) => i.key).sort()).toEqual(['d1', 'd2']);
    const active = await store.search([r], { filter: { type: 'report', status: 'active' } });
    expect(active.map((i) => i.key).sort()).toEqual(['d1', 'd4']);
    const ops = await store.search([r], { filter: { n: { $gte: 2, $lt: 4 } } });
    expect(ops.map((i) => i.key).sort()).toEqual(['d2', 'd3']);
    expect(await store.search([r, 'docs', 'b'], { filter: { type: 'nothing' } })).toEqual([]);

    const page1 = await store.search([r], { limit: 2, offset: 0 });
    const page2 = await store.search([r], { limit: 2, offset: 2 });
    expect(page1).toHaveLength(2);
    expect(page2).toHaveLength(2);
    expect(new Set([...page1, ...page2].map((i) => i.key))).toEqual(
      new Set(['d1', 'd2', 'd3', 'd4']),
    );
    for (const i of page1) expect(i.score).toBeUndefined();
  });

  it('semantic search: query through memory.search, ordered by score, scoped by prefix and filter', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    await store.put([r, 'food'], 'f1', { text: 'pizza with mozzarella and basil', cat: 'food' });
    await store.put([r, 'food'], 'f2', { text: 'spicy ramen noodles with egg', cat: 'food' });
    await store.put([r, 'code'], 'c1', {
      text: 'typescript compiler strict mode errors',
      cat: 'code',
    });

    const hits = await store.search([r], { query: 'pizza mozzarella basil' });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]!.key).toBe('f1');
    for (const h of hits) expect(typeof h.score).toBe('number');
    for (let i = 1; i < hits.length; i++)
      expect(hits[i - 1]!.score!).toBeGreaterThanOrEqual(hits[i]!.score!);

    const code = await store.search([r, 'code'], { query: 'typescript strict compiler' });
    expect(code.map((h) => h.key)).toEqual(['c1']);
    const filtered = await store.search([r], { query: 'noodles ramen', filter: { cat: 'food' } });
    expect(filtered[0]!.key).toBe('f2');
    expect(filtered.every((h) => h.value.cat === 'food')).toBe(true);
  });

  it('a superseded version is never returned by search', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    await store.put([r], 'k', { text: 'volcano eruption lava' });
    await store.put([r], 'k', { text: 'glacier ice melting' });
    const hits = await store.search([r], { query: 'volcano eruption lava' });
    expect(hits.map((h) => h.value)).toEqual([{ text: 'glacier ice melting' }]);
  });

  it('listNamespaces with prefix, suffix, wildcards, maxDepth, limit and offset', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    await store.put([r, 'a', 'b', 'c'], 'k', { x: 1 });
    await store.put([r, 'a', 'b', 'd'], 'k', { x: 1 });
    await store.put([r, 'a', 'e'], 'k', { x: 1 });
    await store.put([r, 'f', 'c'], 'k', { x: 1 });

    expect(await store.listNamespaces({ prefix: [r] })).toEqual([
      [r, 'a', 'b', 'c'],
      [r, 'a', 'b', 'd'],
      [r, 'a', 'e'],
      [r, 'f', 'c'],
    ]);
    expect(await store.listNamespaces({ prefix: [r, 'a'] })).toEqual([
      [r, 'a', 'b', 'c'],
      [r, 'a', 'b', 'd'],
      [r, 'a', 'e'],
    ]);
    expect(await store.listNamespaces({ prefix: [r], suffix: ['c'] })).toEqual([
      [r, 'a', 'b', 'c'],
      [r, 'f', 'c'],
    ]);
    expect(await store.listNamespaces({ prefix: [r, '*', 'b'] })).toEqual([
      [r, 'a', 'b', 'c'],
      [r, 'a', 'b', 'd'],
    ]);
    expect(await store.listNamespaces({ prefix: [r], maxDepth: 2 })).toEqual([
      [r, 'a'],
      [r, 'f'],
    ]);
    expect(await store.listNamespaces({ prefix: [r], limit: 2, offset: 1 })).toEqual([
      [r, 'a', 'b', 'd'],
      [r, 'a', 'e'],
    ]);
  });

  it('batch runs the four operation types in order; later ops see earlier puts', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    const results = await store.batch([
      { namespace: [r, 'x'], key: 'k1', value: { v: 1 } },
      { namespace: [r, 'x'], key: 'k1' },
      { namespace: [r, 'y'], key: 'k2', value: { v: 2 } },
      { namespacePrefix: [r], filter: { v: 2 } },
      { matchConditions: [{ matchType: 'prefix', path: [r] }], limit: 10, offset: 0 },
      { namespace: [r, 'x'], key: 'k1', value: null },
      { namespace: [r, 'x'], key: 'k1' },
    ] as const);
    expect(results[0]).toBeNull(); // a put answers null, as InMemoryStore
    expect(results[1]?.value).toEqual({ v: 1 });
    expect(results[3].map((i) => i.key)).toEqual(['k2']);
    expect(results[4]).toEqual([
      [r, 'x'],
      [r, 'y'],
    ]);
    expect(results[6]).toBeNull();
  });

  it('validates namespaces as LangGraph does', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    await expect(store.put([], 'k', { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.put(['a.b'], 'k', { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.put(['a:b'], 'k', { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.put(['a', ''], 'k', { v: 1 })).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.put(['langgraph'], 'k', { v: 1 })).rejects.toBeInstanceOf(
      InvalidNamespaceError,
    );
    await expect(store.get(['a.b'], 'k')).rejects.toBeInstanceOf(InvalidNamespaceError);
    await expect(store.search(['a.b'])).rejects.toBeInstanceOf(InvalidNamespaceError);
    // search([]) means "everything this principal has".
    await expect(store.search([])).resolves.toBeInstanceOf(Array);
  });

  it('isolation: a second principal sees none of the first principal’s items', async () => {
    const a = new MemwardenStore({ memory: mem, principal: alice });
    const b = new MemwardenStore({ memory: mem, principal: bob });
    const r = root();
    await a.put([r, 'secret'], 'k', { text: 'alice private diary entry' });
    expect(await b.get([r, 'secret'], 'k')).toBeNull();
    expect(await b.search([r])).toEqual([]);
    expect(await b.search([], { query: 'alice private diary entry' })).toEqual([]);
    expect(await b.listNamespaces({})).toEqual([]);
    // Bob writing the same address creates his own item; Alice's is untouched.
    await b.put([r, 'secret'], 'k', { text: 'bob' });
    expect((await a.get([r, 'secret'], 'k'))!.value).toEqual({ text: 'alice private diary entry' });
    expect((await b.get([r, 'secret'], 'k'))!.value).toEqual({ text: 'bob' });
  });

  it('TTL in minutes: the item expires; a TTL put on an existing key is a superseding version', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice, ttl: { defaultTtl: 5 } });
    const r = root();
    await store.put([r], 'short', { v: 1 });
    await store.put([r], 'long', { v: 1 }, undefined, { ttl: 60 });
    await store.put([r], 'forever', { v: 1 }, undefined, { ttl: null });
    await store.put([r], 'long', { v: 2 }, undefined, { ttl: 60 });
    const rec = (await mem.getAll({ principal: alice, limit: 1000 })).find(
      (m) => m.source === addressUri([r], 'long'),
    )!;
    // The old version is superseded by the new one, never left live beside it.
    expect(rec.supersedes).toBeDefined();
    expect(rec.expiresAt).toBeDefined();
    expect(
      (await mem.getAll({ principal: alice, limit: 1000 })).filter(
        (m) => m.source === addressUri([r], 'long'),
      ),
    ).toHaveLength(1);
    clock.advance(6n * NS_PER_MIN);
    expect(await store.get([r], 'short')).toBeNull();
    expect((await store.get([r], 'long'))!.value).toEqual({ v: 2 });
    expect((await store.get([r], 'forever'))!.value).toEqual({ v: 1 });
    clock.advance(60n * NS_PER_MIN);
    expect(await store.get([r], 'long')).toBeNull();
    expect(await store.get([r], 'forever')).not.toBeNull();
  });

  it('refreshOnRead: a get or a search hit lives its own TTL again from the read; per-read override', async () => {
    const store = new MemwardenStore({
      memory: mem,
      principal: alice,
      ttl: { defaultTtl: 10, refreshOnRead: true },
    });
    const plain = new MemwardenStore({ memory: mem, principal: alice, ttl: { defaultTtl: 10 } });
    const r = root();
    await store.put([r], 'read', { topic: 'tide tables for the harbour' });
    await store.put([r], 'searched', { topic: 'ferry timetable to the island' });
    await store.put([r], 'idle', { topic: 'nothing reads this one' });
    await store.put([r], 'optout', { topic: 'read without refresh' });
    clock.advance(8n * NS_PER_MIN);
    expect(await store.get([r], 'read')).not.toBeNull();
    expect(await store.get([r], 'optout', { refreshTtl: false })).not.toBeNull();
    expect(
      (await store.search([r], { filter: { topic: 'ferry timetable to the island' } })).map(
        (i) => i.key,
      ),
    ).toEqual(['searched']);
    // Refreshing is renewal, not rewriting: still one signed version of the item.
    const [read] = await mem.getAll({ principal: alice, source: addressUri([r], 'read') });
    expect((await mem.history(read!.id, { principal: alice })).map((e) => e.action)).toEqual([
      'add',
    ]);
    clock.advance(4n * NS_PER_MIN); // 12 min: past the first 10, inside the refreshed ones
    expect(await plain.get([r], 'read')).not.toBeNull(); // a store without refresh does not renew
    expect(await plain.get([r], 'searched')).not.toBeNull();
    expect(await plain.get([r], 'idle')).toBeNull();
    expect(await plain.get([r], 'optout')).toBeNull();
    clock.advance(7n * NS_PER_MIN); // 19 min: the reads at 8 min renewed to 18 min
    expect(await plain.get([r], 'read')).toBeNull();
    expect(await mem.getAll({ principal: alice, source: addressUri([r], 'read') })).toHaveLength(0);
  });

  it('put on an existing key with a TTL is one superseding signed version with the new lifetime', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    await store.put([r], 'k', { v: 1 }, undefined, { ttl: 5 });
    await store.put([r], 'k', { v: 2 }, undefined, { ttl: 120 });
    const [cur] = await mem.getAll({ principal: alice, source: addressUri([r], 'k') });
    expect(cur!.supersedes).toBeDefined();
    // exp is stamped a tick before the ledger's ts on this stepping clock: within 10 ms.
    expect(
      Math.abs(Date.parse(cur!.expiresAt!) - Date.parse(cur!.createdAt) - 120 * 60_000),
    ).toBeLessThan(10);
    const h = await mem.history(cur!.id, { principal: alice });
    expect(h.map((e) => e.action)).toEqual(['add', 'update']);
  });

  it('get and put look items up by address: no listing of the principal’s memories', async () => {
    const calls: string[] = [];
    const spy = new Proxy(mem, {
      get(target, prop, recv) {
        const v = Reflect.get(target, prop, recv) as unknown;
        if (prop === 'getAll' && typeof v === 'function') {
          return (opts: { source?: string }) => {
            calls.push(opts.source === undefined ? 'list' : 'lookup');
            return (v as (o: unknown) => unknown).call(target, opts);
          };
        }
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const store = new MemwardenStore({ memory: spy, principal: alice });
    const r = root();
    await store.put([r], 'a', { v: 1 });
    await store.put([r], 'a', { v: 2 });
    expect((await store.get([r], 'a'))!.value).toEqual({ v: 2 });
    await store.delete([r], 'a');
    expect(await store.get([r], 'a')).toBeNull();
    expect(calls.every((c) => c === 'lookup')).toBe(true);
    expect(calls.length).toBeGreaterThan(0);
    await store.search([r]);
    expect(calls.at(-1)).toBe('list');
  });

  it('the same value under two keys stays two items', async () => {
    const store = new MemwardenStore({ memory: mem, principal: alice });
    const r = root();
    await store.put([r], 'k1', { same: 'value here' });
    await store.put([r], 'k2', { same: 'value here' });
    expect((await store.search([r])).map((i) => i.key).sort()).toEqual(['k1', 'k2']);
  });
});

/**
 * The scenarios of LangGraph.js's own published store checks
 * (`libs/checkpoint/src/tests/namespace.test.ts`, `store-delimiter.test.ts`), re-expressed
 * here against MemwardenStore; each test runs as a fresh principal, i.e. an empty store.
 */
describe('LangGraph published namespace checks', () => {
  let k = 0;
  const fresh = async (): Promise<MemwardenStore> =>
    new MemwardenStore({
      memory: mem,
      principal: (await mem.createPrincipal('user', `lg-${++k}`)).id,
    });
  const sorted = (x: string[][]): string[][] =>
    [...x].sort((a, b) => a.join('/').localeCompare(b.join('/')));

  it('basic prefix / suffix / maxDepth / limit / offset', async () => {
    const store = await fresh();
    const nss = [
      ['a', 'b', 'c'],
      ['a', 'b', 'd', 'e'],
      ['a', 'b', 'd', 'i'],
      ['a', 'b', 'f'],
      ['a', 'c', 'f'],
      ['b', 'a', 'f'],
      ['users', '123'],
      ['users', '456', 'settings'],
      ['admin', 'users', '789'],
    ];
    for (const [i, ns] of nss.entries()) await store.put(ns, `id_${i}`, { data: `value_${i}` });
    expect(sorted(await store.listNamespaces({ prefix: ['a', 'b'] }))).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd', 'e'],
      ['a', 'b', 'd', 'i'],
      ['a', 'b', 'f'],
    ]);
    expect(sorted(await store.listNamespaces({ suffix: ['f'] }))).toEqual([
      ['a', 'b', 'f'],
      ['a', 'c', 'f'],
      ['b', 'a', 'f'],
    ]);
    expect(sorted(await store.listNamespaces({ prefix: ['a'], suffix: ['f'] }))).toEqual([
      ['a', 'b', 'f'],
      ['a', 'c', 'f'],
    ]);
    expect(sorted(await store.listNamespaces({ prefix: ['a', 'b'], maxDepth: 3 }))).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd'],
      ['a', 'b', 'f'],
    ]);
    expect(await store.listNamespaces({ prefix: ['a', 'b'], limit: 2 })).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'd', 'e'],
    ]);
    expect(await store.listNamespaces({ prefix: ['a', 'b'], offset: 2 })).toEqual([
      ['a', 'b', 'd', 'i'],
      ['a', 'b', 'f'],
    ]);
  });

  it('wildcards in prefix and suffix', async () => {
    const store = await fresh();
    const nss = [
      ['users', '123'],
      ['users', '456'],
      ['users', '789', 'settings'],
      ['admin', 'users', '789'],
      ['guests', '123'],
      ['guests', '456', 'preferences'],
    ];
    for (const [i, ns] of nss.entries()) await store.put(ns, `id_${i}`, { data: `value_${i}` });
    expect(sorted(await store.listNamespaces({ prefix: ['users', '*'] }))).toEqual([
      ['users', '123'],
      ['users', '456'],
      ['users', '789', 'settings'],
    ]);
    expect(await store.listNamespaces({ suffix: ['*', 'preferences'] })).toEqual([
      ['guests', '456', 'preferences'],
    ]);
    expect(
      await store.listNamespaces({ prefix: ['*', 'users'], suffix: ['*', 'settings'] }),
    ).toEqual([]);
    await store.put(['admin', 'users', 'settings', '789'], 'foo', { data: 'some_val' });
    expect(
      await store.listNamespaces({ prefix: ['*', 'users'], suffix: ['settings', '*'] }),
    ).toEqual([['admin', 'users', 'settings', '789']]);
  });

  it('pagination and maxDepth over the whole store; an empty store lists nothing', async () => {
    const store = await fresh();
    expect(await store.listNamespaces({})).toEqual([]);
    const pad = (i: number): string => i.toString().padStart(2, '0');
    for (let i = 0; i < 20; i++)
      await store.put(['namespace', `sub_${pad(i)}`], `id_${pad(i)}`, { data: i });
    for (const offset of [0, 5, 15]) {
      expect(await store.listNamespaces({ prefix: ['namespace'], limit: 5, offset })).toEqual(
        Array.from({ length: 5 }, (_, i) => ['namespace', `sub_${pad(i + offset)}`]),
      );
    }
    const other = await fresh();
    for (const [i, ns] of [
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'e'],
      ['a', 'b', 'f'],
      ['a', 'g'],
      ['h', 'i', 'j', 'k'],
    ].entries()) {
      await other.put(ns, `id_${i}`, { data: i });
    }
    expect(sorted(await other.listNamespaces({ maxDepth: 2 }))).toEqual([
      ['a', 'b'],
      ['a', 'g'],
      ['h', 'i'],
    ]);
  });

  it('blocks invalid namespaces; "langgraph" is reserved only as the root; batch writes are readable', async () => {
    const store = await fresh();
    const doc = { foo: 'bar' };
    await expect(store.put([], 'foo', doc)).rejects.toThrow(InvalidNamespaceError);
    await expect(store.put(['the', 'thing.about'], 'foo', doc)).rejects.toThrow(
      InvalidNamespaceError,
    );
    await expect(store.put(['some', 'fun', ''], 'foo', doc)).rejects.toThrow(InvalidNamespaceError);
    await expect(store.put(['langgraph', 'foo'], 'bar', doc)).rejects.toThrow(
      InvalidNamespaceError,
    );
    await store.put(['foo', 'langgraph', 'foo'], 'bar', doc);
    expect((await store.get(['foo', 'langgraph', 'foo'], 'bar'))?.value).toEqual(doc);
    expect((await store.search(['foo', 'langgraph', 'foo']))[0]!.value).toEqual(doc);
    await store.delete(['foo', 'langgraph', 'foo'], 'bar');
    expect(await store.get(['foo', 'langgraph', 'foo'], 'bar')).toBeNull();
    await store.batch([{ namespace: ['valid', 'namespace'], key: 'key', value: doc }]);
    expect((await store.get(['valid', 'namespace'], 'key'))?.value).toEqual(doc);
    expect((await store.search(['valid', 'namespace']))[0]!.value).toEqual(doc);
    await store.delete(['valid', 'namespace'], 'key');
    expect(await store.get(['valid', 'namespace'], 'key')).toBeNull();
  });

  it('delimiter aliases are rejected on every path, batch included', async () => {
    const store = await fresh();
    await store.put(['tenant', 'alice', 'files'], 'secret', { text: 'original' });
    for (const alias of [
      ['tenant', 'alice.files'],
      ['tenant:alice', 'files'],
    ]) {
      await expect(store.get(alias, 'secret')).rejects.toThrow(InvalidNamespaceError);
      await expect(store.delete(alias, 'secret')).rejects.toThrow(InvalidNamespaceError);
      await expect(store.put(alias, 'secret', { text: 'overwrite' })).rejects.toThrow(
        InvalidNamespaceError,
      );
      await expect(store.search(alias)).rejects.toThrow(InvalidNamespaceError);
      await expect(store.batch([{ namespace: alias, key: 'secret' }])).rejects.toThrow(
        InvalidNamespaceError,
      );
      await expect(store.batch([{ namespace: alias, key: 'secret', value: null }])).rejects.toThrow(
        InvalidNamespaceError,
      );
    }
    await expect(store.listNamespaces({ prefix: ['tenant.alice'] })).rejects.toThrow(
      InvalidNamespaceError,
    );
    expect((await store.search(['tenant', 'alice']))[0]!.namespace).toEqual([
      'tenant',
      'alice',
      'files',
    ]);
    expect(await store.search([])).toHaveLength(1);
    expect((await store.get(['tenant', 'alice', 'files'], 'secret'))?.value).toEqual({
      text: 'original',
    });
  });
});
