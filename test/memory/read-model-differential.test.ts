/**
 * Differential property test of the read model (ADR 0018): random sequences of add / update /
 * delete / purge / deleteAll / renew / clock advance (expiry) / rolled-back transactions /
 * search over two users and an operator (OPERATOR memory included), run in lockstep through
 * `Memory` with the read model and through `Memory` on the same backend type without it. Every
 * outcome must agree: the same error codes, and for every search the same result ids, in the
 * same order, and the same dropped ids.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { testMemory } from './helpers-memory.js';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { MemwardenError, isMemwardenError } from '../../src/core/errors.js';
import type { SourceTier } from '../../src/core/trust.js';
import { type Memory } from '../../src/memory/memory.js';
import { readModelOf, withReadModel } from '../../src/memory/read/read-model.js';
import type { Clock } from '../../src/ports/clock.js';
import type { RootStorage } from '../../src/ports/storage.js';

const WORDS = [
  'coffee',
  'flight',
  'window',
  'seat',
  'budget',
  'garden',
  'piano',
  'river',
  'lemon',
  'orbit',
  'castle',
  'harbor',
];
const SOURCES = ['chat:1', 'chat:2', 'web:x'];
const WHO = ['alice', 'bob', 'ops'] as const;
type Who = (typeof WHO)[number];

type Op =
  | { k: 'add'; p: Who; words: string[]; tier: number; src: number; ttl: number; kind: number }
  | { k: 'update'; p: Who; ref: number; words: string[] }
  | { k: 'delete' | 'renew' | 'rollback'; p: Who; ref: number }
  | { k: 'purge'; p: Who; src: number }
  | { k: 'deleteAll'; p: Who }
  | { k: 'advance'; ms: number }
  | {
      k: 'search';
      p: Who;
      words: string[];
      research: boolean;
      limit: number;
      src: number;
      kind: number;
    };

const who = fc.constantFrom(...WHO);
const words = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      k: fc.constant('add' as const),
      p: who,
      words,
      tier: fc.nat(3),
      src: fc.nat(3),
      ttl: fc.nat(3),
      kind: fc.nat(2),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant('update' as const), p: who, ref: fc.nat(), words }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constantFrom('delete' as const, 'renew' as const, 'rollback' as const),
      p: who,
      ref: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('purge' as const), p: who, src: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('deleteAll' as const), p: who }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('advance' as const),
      ms: fc.constantFrom(300, 700, 1200, 90_000),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      k: fc.constant('search' as const),
      p: who,
      words,
      research: fc.boolean(),
      limit: fc.integer({ min: 1, max: 12 }),
      src: fc.nat(5),
      kind: fc.nat(4),
    }),
  },
);

const FINDS: Op[] = [
  ...(['coffee', 'lemon', 'orbit', 'castle', 'harbor'] as const).map((w): Op => ({
    k: 'add',
    p: 'alice',
    words: [w, 'harbor'],
    tier: 0,
    src: 0,
    ttl: 0,
    kind: 0,
  })),
  ...(['harbor', 'lemon'] as const).map((w): Op => ({
    k: 'search',
    p: 'alice',
    words: [w],
    research: true,
    limit: 12,
    src: 5,
    kind: 4,
  })),
  {
    k: 'search',
    p: 'alice',
    words: ['castle', 'orbit'],
    research: false,
    limit: 5,
    src: 5,
    kind: 4,
  },
  { k: 'advance', ms: 300 },
  { k: 'search', p: 'alice', words: ['coffee'], research: true, limit: 3, src: 5, kind: 4 },
];

/** A clock that moves only when told to (both stacks read the same time whatever they call). */
class StepClock implements Clock {
  t = 1_700_000_000_000_000_000n;
  nowNs(): bigint {
    return this.t;
  }
}

interface Stack {
  mem: Memory;
  storage: RootStorage;
  ids: Record<Who, string>;
  backend: 'memory' | 'pglite';
}

async function stack(backend: 'memory' | 'pglite', model: boolean, clock: Clock): Promise<Stack> {
  const raw = backend === 'memory' ? await MemoryBackend.open() : await PgliteBackend.open({});
  const storage = model ? withReadModel(raw) : raw;
  const { mem } = await testMemory(storage, 'differential', {}, clock);
  const ids = {
    alice: (await mem.createPrincipal('user', 'alice')).id,
    bob: (await mem.createPrincipal('user', 'bob')).id,
    ops: (await mem.createPrincipal('operator', 'deploy')).id,
  };
  return { mem, storage, ids, backend };
}

const USER_TIERS: SourceTier[] = [
  'USER_VERIFIED',
  'USER_OBSERVED',
  'USER_OBSERVED',
  'EXTERNAL_WEB',
];
const TTLS = [undefined, 1_000, 2_000, 2_000];
const KINDS = ['fact', 'preference', 'note'];

async function outcome<T>(
  f: () => Promise<T>,
): Promise<{ ok: true; v: T } | { ok: false; code: string }> {
  try {
    return { ok: true, v: await f() };
  } catch (e) {
    return { ok: false, code: isMemwardenError(e) ? e.code : `RAW:${String(e)}` };
  }
}

/** Run one op on one stack; the comparable part of its outcome. */
async function run(s: Stack, op: Op, known: string[], n: number): Promise<unknown> {
  const ref = (r: number): string => known[r % Math.max(known.length, 1)] ?? '0'.repeat(32);
  switch (op.k) {
    case 'add': {
      const tier =
        op.p === 'ops' && op.tier === 0 ? 'OPERATOR' : (USER_TIERS[op.tier] as SourceTier);
      const ttl = TTLS[op.ttl];
      const r = await outcome(() =>
        s.mem.add(`${op.words.join(' ')} n${n}`, {
          principal: s.ids[op.p],
          tier,
          source: SOURCES[op.src % SOURCES.length] as string,
          kind: KINDS[op.kind] as string,
          verbatim: true,
          ...(ttl === undefined || tier === 'OPERATOR' ? {} : { ttlMs: ttl }),
        }),
      );
      return r.ok
        ? { ok: true, status: r.v.status, id: r.v.status === 'stored' ? r.v.memory.id : null }
        : r;
    }
    case 'update': {
      const r = await outcome(() =>
        s.mem.update(ref(op.ref), `${op.words.join(' ')} v${n}`, { principal: s.ids[op.p] }),
      );
      return r.ok ? { ok: true, id: r.v.id } : r;
    }
    case 'delete':
      return outcome(() => s.mem.delete(ref(op.ref), { principal: s.ids[op.p], reason: 'test' }));
    case 'renew': {
      const r = await outcome(() => s.mem.renew(ref(op.ref), { principal: s.ids[op.p] }));
      return r.ok ? { ok: true, exp: r.v.expiresAt ?? null } : r;
    }
    case 'rollback': {
      // Changes made inside a transaction that is then refused: none of them may take effect.
      const view = s.storage.asPrincipal(s.ids[op.p]);
      return outcome(() =>
        view.transaction(async (tx) => {
          await tx.extendExpiry(ref(op.ref), 1n << 62n);
          await tx.markDeleted(ref(op.ref));
          throw new MemwardenError('QUOTA_EXCEEDED', 'refused inside the transaction');
        }),
      );
    }
    case 'purge':
      return outcome(() =>
        s.mem.purge({ principal: s.ids[op.p], source: SOURCES[op.src] as string }),
      );
    case 'deleteAll':
      return outcome(() => s.mem.deleteAll({ principal: s.ids[op.p] }));
    case 'advance':
      return null;
    case 'search': {
      const r = await outcome(() =>
        s.mem.search(op.words.join(' '), {
          principal: s.ids[op.p],
          limit: op.limit,
          // PGlite's SQL path ranks lexically with its full-text index, not the model's
          // in-process BM25: the two agree exactly on vector ranking (the in-memory backend
          // ranks BM25 with the model's statistics, so there the default hybrid is compared).
          ...(s.backend === 'pglite' ? { ranking: 'vector' as const } : {}),
          ...(op.research ? { mode: 'research' as const } : {}),
          ...(op.src < SOURCES.length || op.kind < KINDS.length
            ? {
                filters: {
                  ...(op.src < SOURCES.length ? { source: SOURCES[op.src] as string } : {}),
                  ...(op.kind < KINDS.length ? { kind: KINDS[op.kind] as string } : {}),
                },
              }
            : {}),
        }),
      );
      return r.ok
        ? {
            ok: true,
            ids: r.v.results.map((h) => h.memory.id),
            dropped: r.v.dropped.map((d) => d.id),
          }
        : r;
    }
  }
}

async function differential(
  backend: 'memory' | 'pglite',
  runs: number,
  maxLength: number,
): Promise<void> {
  let searches = 0;
  let nonEmpty = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength }), async (ops) => {
      const clock = new StepClock();
      const a = await stack(backend, true, clock);
      const b = await stack(backend, false, clock);
      expect(readModelOf(a.storage)).toBeDefined();
      try {
        const known: string[] = [];
        for (const [n, op] of ops.entries()) {
          clock.t += 1_000_000n;
          if (op.k === 'advance') clock.t += BigInt(op.ms) * 1_000_000n;
          const ra = await run(a, op, known, n);
          const rb = await run(b, op, known, n);
          expect(ra, `step ${n} ${JSON.stringify(op)}`).toEqual(rb);
          const res = ra as { ok?: boolean; id?: string | null; ids?: string[] };
          if (res?.ok === true && typeof res.id === 'string') known.push(res.id);
          if (op.k === 'search') {
            searches++;
            if ((res.ids?.length ?? 0) > 0) nonEmpty++;
          }
        }
      } finally {
        await a.mem.close();
        await b.mem.close();
      }
    }),
    // One fixed sequence that certainly searches and finds (alice writes, then asks for the
    // words she wrote), beside the random ones: the non-vacuity guard below must not depend on
    // three random sequences happening to search for something that exists.
    { numRuns: runs, endOnFailure: true, examples: [[FINDS]] },
  );
  // The property is not vacuous: searches ran and found things.
  expect(searches).toBeGreaterThan(runs);
  // With 100 in-memory runs most runs find something; the 3 PGlite runs (random sequences of up
  // to 40 steps) are only required to have found something at least once — requiring more made
  // the guard itself flaky (it failed once in a full run while the comparison held).
  expect(nonEmpty).toBeGreaterThan(backend === 'memory' ? runs / 2 : 0);
}

describe('read model vs database path: identical search results', () => {
  it('on the in-memory backend', async () => {
    await differential('memory', 100, 60);
  }, 300_000);

  it('on PGlite', async () => {
    await differential('pglite', 3, 40);
  }, 300_000);
});
