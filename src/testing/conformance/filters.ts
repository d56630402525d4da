/**
 * @module testing/conformance/filters
 * Conformance cases for the version 2 query columns and Mem0-style filters (issue 20): the new
 * columns (memory id, event time, metadata, run and agent scopes) round-trip through every
 * write and read; `findEntriesBy({ memoryId })` finds a memory's versions; and every backend
 * answers `listEntriesFor` and `searchEntries` with a filter exactly as `core/filter`'s
 * `matchFilter` decides over the same rows — a fixed table of edge cases plus a few hundred
 * seeded random filters (the SQL translation in `adapters/sql/filter-sql.ts` must agree with
 * the code, bit for bit).
 */
import assert from 'node:assert/strict';
import { type EntryFilter, matchFilter, parseFilter } from '../../core/filter/index.js';
import type { JsonValue } from '../../core/entry/meta.js';
import { mulberry32 } from '../../core/prng.js';
import type { StorageBackend, StoredEntry } from '../../ports/storage.js';
import { NOW, meta, scoped, vec, withBackend } from './memory-api.js';
import type { ConformanceCase } from './types.js';

const A = 'user:a';

/** Rows that exercise the edges: missing fields, nulls, mixed types, non-ASCII, arrays. */
function rows(): StoredEntry[] {
  const m: (JsonValue | undefined)[] = [
    { n: 1, s: 'Apple', tags: ['red', 'fruit'], o: { k: 'v' } },
    { n: 2.5, s: 'apple pie', tags: ['sweet'], z: null },
    { n: -3, s: 'Äpfel', b: true, tags: [] },
    { n: '4', s: 'banana', b: false, nested: { deep: { x: 1 } } },
    { s: 'Cherry', n: 10, tags: ['red'], o: { k: 'w', j: 1 } },
    { weird: 'x', 'dot.key': 7 },
    undefined,
    { n: 1e21, s: '😀 emoji', tags: ['red', 'sweet', 2] },
  ];
  return m.map((metadata, i) =>
    meta(`f${i}`, i, {
      owner: A,
      writer: A,
      tier: i % 3 === 0 ? 'USER_VERIFIED' : 'USER_OBSERVED',
      kind: i % 2 === 0 ? 'fact' : 'turn',
      uri: i === 6 ? undefined : `chat:s${i % 3}`,
      content: `row ${i} apple banana ${i % 2 === 0 ? 'cherry' : ''}`,
      memoryId: i === 5 ? 'f0' : `f${i}`,
      eventAtNs: i === 6 ? undefined : BigInt(1_700_000_000_000 + i * 86_400_000) * 1_000_000n,
      metadata: metadata as StoredEntry['metadata'],
      runId: i < 4 ? 'run-1' : i < 7 ? 'run-2' : undefined,
      agentId: i % 4 === 0 ? 'planner' : undefined,
      createdAtNs: BigInt(100 + i),
      embedding: vec(i),
    }),
  );
}

/** Hand-picked filters (caller JSON), each compared with the code's verdict. */
const FIXED: readonly unknown[] = [
  { n: 1 },
  { n: 1.0 },
  { n: '4' },
  { n: { ne: 1 } },
  { n: { in: [1, 2.5, '4'] } },
  { n: { nin: [1, 2.5] } },
  { n: { gt: 1 } },
  { n: { gte: 1, lt: 10 } },
  { n: { lte: '4' } },
  { s: { gt: 'B' } },
  { s: { lt: 'a' } },
  { s: { gte: 'Ä' } },
  { s: { contains: 'pple' } },
  { s: { icontains: 'APPLE' } },
  { s: { icontains: 'äpfel' } },
  { tags: { contains: 'red' } },
  { tags: { contains: 2 } },
  { tags: ['red', 'fruit'] },
  { tags: { eq: [] } },
  { o: { k: 'v' } },
  { o: { eq: { k: 'w', j: 1 } } },
  { 'metadata.o.k': 'w' },
  { 'metadata.nested.deep.x': 1 },
  { metadata: { b: true } },
  { b: { ne: true } },
  { z: null },
  { z: '*' },
  { 'dot.key': 7 },
  { missing: { ne: 'x' } },
  { missing: { nin: ['x'] } },
  { missing: '*' },
  { NOT: { n: { gt: 1 } } },
  { OR: [{ n: 1 }, { s: { icontains: 'CHERRY' } }] },
  { AND: [{ tier: 'USER_VERIFIED' }, { kind: { in: ['fact', 'note'] } }] },
  { tier: { ne: 'USER_OBSERVED' } },
  { kind: 'turn', source: 'chat:s1' },
  { source: { contains: 's2' } },
  { source: '*' },
  { source: { nin: ['chat:s0'] } },
  { runId: 'run-1' },
  { runId: { ne: 'run-1' } },
  { agentId: '*' },
  { agentId: { in: ['planner', 5] } },
  { eventAt: { gte: '2023-11-16T00:00:00Z' } },
  { eventAt: { lt: 1_700_200_000_000 } },
  { eventAt: '*' },
  { NOT: { eventAt: '*' } },
  { createdAt: { gt: 0 } },
  { $or: [{ runId: 'run-2' }, { $and: [{ n: { $gte: 2 } }, { s: { $contains: 'a' } }] }] },
];

const OPS = ['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'contains', 'icontains', '*'];
const FIELDS = [
  'n',
  's',
  'tags',
  'b',
  'z',
  'o',
  'metadata.o.k',
  'missing',
  'tier',
  'kind',
  'source',
  'runId',
  'agentId',
];
const VALUES: readonly JsonValue[] = [
  1,
  2.5,
  -3,
  10,
  '4',
  'apple',
  'Apple',
  'a',
  'Z',
  'red',
  'run-1',
  'chat:s1',
  'planner',
  'fact',
  'USER_VERIFIED',
  true,
  null,
  ['red', 'fruit'],
  { k: 'v' },
  1e21,
];

/** A seeded random filter over the fields and values above. */
function randomFilter(r: () => number, depth = 0): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const roll = r();
  if (depth < 2 && roll < 0.25) {
    const n = 1 + Math.floor(r() * 3);
    const subs = Array.from({ length: n }, () => randomFilter(r, depth + 1));
    return pick([{ AND: subs }, { OR: subs }, { NOT: subs[0] }]);
  }
  const field = pick(FIELDS);
  const op = pick(OPS);
  if (op === '*') return { [field]: '*' };
  if (op === 'in' || op === 'nin') return { [field]: { [op]: [pick(VALUES), pick(VALUES)] } };
  if (op === 'icontains') return { [field]: { icontains: pick(['A', 'pp', 'RED', 'Ä', 'run']) } };
  if (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte')
    return { [field]: { [op]: pick([1, 2.5, 'a', 'B', 'run-1', 'Äpfel', 5]) } };
  if (op === 'contains' && ['tier', 'kind', 'source', 'runId', 'agentId'].includes(field))
    return { [field]: { contains: pick(['s1', 'run', 'USER', 'x']) } };
  return { [field]: { [op]: pick(VALUES) } };
}

function parsed(input: unknown): EntryFilter | undefined {
  try {
    return parseFilter(input);
  } catch {
    return undefined; // refused input (e.g. contains with a number on a text field)
  }
}

async function check(
  b: StorageBackend,
  all: readonly StoredEntry[],
  input: unknown,
): Promise<void> {
  const f = parsed(input);
  if (f === undefined) return;
  const want = all.filter((e) => matchFilter(f, e)).map((e) => e.id);
  const listed = (await b.listEntriesFor({ limit: 100, filter: f, nowNs: NOW })).map((e) => e.id);
  assert.deepEqual(listed, want, `listEntriesFor ${JSON.stringify(input)}`);
  const hits = await b.searchEntries({ embedding: vec(0), filter: f, nowNs: NOW, limit: 100 });
  assert.deepEqual(
    hits.map((h) => h.entry.id).sort(),
    [...want].sort(),
    `searchEntries (vector) ${JSON.stringify(input)}`,
  );
  const lex = await b.searchEntries({ text: 'apple', filter: f, nowNs: NOW, limit: 100 });
  for (const h of lex)
    assert.ok(want.includes(h.entry.id), `searchEntries (lexical) ${JSON.stringify(input)}`);
}

export const filterCases: readonly ConformanceCase[] = [
  {
    name: 'v2 query columns round-trip (memory id, event time, metadata, run and agent)',
    run: (f) =>
      withBackend(f, async (b) => {
        const all = rows();
        await b.putEntry(all[0] as StoredEntry);
        const rest = all.slice(1);
        if (b.putEntries !== undefined) await b.putEntries(rest);
        else for (const e of rest) await b.putEntry(e);
        for (const e of all) {
          const back = await b.getEntry(e.id);
          assert.ok(back);
          assert.equal(back.memoryId, e.memoryId);
          assert.equal(back.eventAtNs, e.eventAtNs);
          assert.deepEqual(back.metadata, e.metadata);
          assert.equal(back.runId, e.runId);
          assert.equal(back.agentId, e.agentId);
          for (const k of ['eventAtNs', 'metadata', 'runId', 'agentId'] as const)
            if (e[k] === undefined) assert.ok(!(k in back), `${k} absent, not undefined`);
        }
        const listed = await b.listEntries();
        assert.deepEqual(
          listed.map((e) => [e.id, e.runId, e.eventAtNs]),
          all.map((e) => [e.id, e.runId, e.eventAtNs]),
        );
        if (b.scanEntries !== undefined) {
          const scanned = await b.scanEntries({ limit: 100 });
          assert.deepEqual(
            scanned.map((e) => [e.id, e.metadata, e.agentId]),
            all.map((e) => [e.id, e.metadata, e.agentId]),
          );
        }
      }),
  },
  {
    name: 'findEntriesBy memoryId finds every version of one memory; an unstored id is its own',
    run: (f) =>
      withBackend(f, async (b) => {
        const all = rows();
        for (const e of all) await b.putEntry(e);
        await b.putEntry(meta('legacy', 20, { owner: A, writer: A }));
        assert.deepEqual(
          (await b.findEntriesBy({ memoryId: 'f0' })).map((e) => e.id),
          ['f0', 'f5'],
        );
        assert.deepEqual(
          (await b.findEntriesBy({ memoryId: 'legacy' })).map((e) => e.id),
          ['legacy'],
        );
        assert.deepEqual(await b.findEntriesBy({ memoryId: 'f5' }), []);
        const other = scoped(b, 'user:b');
        assert.deepEqual(await other.findEntriesBy({ memoryId: 'f0' }), []);
      }),
  },
  {
    name: 'filters: the backend admits exactly the rows matchFilter admits (fixed and seeded random filters)',
    run: (f) =>
      withBackend(f, async (b) => {
        const all = rows();
        for (const e of all) await b.putEntry(e);
        const view = scoped(b, A);
        for (const input of FIXED) await check(view, all, input);
        const r = mulberry32(20);
        for (let i = 0; i < 150; i++) await check(view, all, randomFilter(r));
      }),
  },
];
