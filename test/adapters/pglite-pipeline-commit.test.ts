/**
 * The group commit as ONE pipelined transaction (ADR 0028): the verdict that decides COMMIT or
 * ROLLBACK (shared by the main thread and the worker), and the backend's pipelined commit on an
 * in-process PGlite and on the worker-hosted one — one exchange per commit, and on every failure
 * the error the statement-by-statement commit gives, with nothing written.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import type { PgliteDb } from '../../src/adapters/pglite/db.js';
import { pipelineVerdict } from '../../src/adapters/pglite/pipeline-verdict.mjs';
import { PgliteWorker } from '../../src/adapters/pglite/worker.js';
import type {
  LeafRecord,
  QuotaDemand,
  StorageBackend,
  StoredEntry,
} from '../../src/ports/storage.js';
import { resetPglite } from './helpers-pglite.js';
import { outcome } from '../helpers/outcome.js';

// ---- the verdict, on hand-built backend messages ---------------------------------------------
const msg = (type: string, body: number[] = []): number[] => {
  const n = body.length + 4;
  return [
    type.charCodeAt(0),
    (n >>> 24) & 255,
    (n >>> 16) & 255,
    (n >>> 8) & 255,
    n & 255,
    ...body,
  ];
};
const ROW = msg('D', [0, 1, 0, 0, 0, 1, 7]); // one field, one byte
const DONE = msg('C', [...Buffer.from('INSERT 0 1'), 0]);
const PARSED = msg('1');
const BOUND = msg('2');
const ERROR = msg('E', [...Buffer.from('SERROR'), 0, ...Buffer.from('C23505'), 0, 0]);
const READY = msg('Z', [0x54]);
const raw = (...parts: number[][]): Uint8Array => Uint8Array.from(parts.flat());

describe('pipelineVerdict', () => {
  it('commits only a complete, error-free response that meets every expectation', () => {
    // statement 0: no rows; statement 1: two rows; statement 2: one row.
    const ok = raw(
      PARSED,
      BOUND,
      DONE,
      PARSED,
      BOUND,
      ROW,
      ROW,
      DONE,
      PARSED,
      BOUND,
      ROW,
      DONE,
      READY,
    );
    expect(pipelineVerdict(ok, 3, [])).toBe(true);
    expect(
      pipelineVerdict(ok, 3, [
        { statement: 1, rows: 2 },
        { statement: 2, rows: 1 },
      ]),
    ).toBe(true);
    expect(pipelineVerdict(ok, 3, [{ statement: 2, rows: 0 }])).toBe(false); // the head did not move
    expect(pipelineVerdict(ok, 3, [{ statement: 1, rows: 3 }])).toBe(false); // a quota group not counted
    expect(pipelineVerdict(ok, 2, [])).toBe(false); // a statement more than sent
    expect(pipelineVerdict(ok, 4, [])).toBe(false); // a statement skipped
    expect(pipelineVerdict(ok, 3, [{ statement: 3, rows: 0 }])).toBe(false); // no such statement
  });

  it('never commits after an error or on a response it cannot read', () => {
    expect(pipelineVerdict(raw(PARSED, BOUND, DONE, ERROR, READY), 1, [])).toBe(false);
    expect(pipelineVerdict(raw(PARSED, BOUND, DONE), 1, [])).toBe(false); // no ReadyForQuery
    expect(pipelineVerdict(raw(DONE, READY, DONE), 1, [])).toBe(false); // past the Sync
    expect(pipelineVerdict(raw(ROW, READY), 0, [])).toBe(false); // a row without its completion
    const full = raw(DONE, READY);
    for (let cut = 0; cut < full.length; cut++)
      expect(pipelineVerdict(full.subarray(0, cut), 1, [])).toBe(false);
    const bad = raw(DONE, READY);
    bad[4] = 2; // length below the 4 bytes of the length itself
    expect(pipelineVerdict(bad, 1, [])).toBe(false);
  });
});

// ---- the backend's pipelined commit ------------------------------------------------------------
const D = '2025-03-01';
const leaf = (index: number): LeafRecord => ({
  index,
  data: new Uint8Array([index & 0xff, 1]),
  hash: new Uint8Array(32).fill(index & 0xff),
  entryId: `e-${index}`,
  kind: 'entry',
});
const entry = (index: number, id = `e-${index}`): StoredEntry => ({
  id,
  owner: 'user:a',
  tier: 'USER_OBSERVED',
  bytes: new Uint8Array([index & 0xff]),
  leafIndex: index,
  macKid: 'mk',
  mac: new Uint8Array(32).fill(3),
  writer: 'user:a',
  kind: 'fact',
  createdAtNs: BigInt(index) + 1n,
  content: `memory ${index}`,
  embedding: Float32Array.from({ length: 384 }, (_, i) =>
    Math.fround(((i * 7 + index) % 13) / 13 - 0.5),
  ),
});
const demands = (n: number, limit: number, principal = 'user:a'): QuotaDemand[] =>
  Array.from({ length: n }, () => ({ principal, tier: 'USER_OBSERVED', dayKey: D, limit }));

const code = (p: Promise<unknown>): Promise<string> => outcome(p, true);

interface Counted {
  db: PgliteDb;
  /** PGlite transactions begun, raw exchanges, one-message pipelined transactions. */
  calls: { tx: number; raw: number; pipelined: number };
  close(): Promise<void>;
}

/** A PGlite (in process or in a worker) whose transaction and raw-protocol calls are counted. */
async function counted(kind: 'in-process' | 'worker'): Promise<Counted> {
  const db: PgliteDb =
    kind === 'worker'
      ? await PgliteWorker.create()
      : await PGlite.create({ extensions: { vector } });
  const calls = { tx: 0, raw: 0, pipelined: 0 };
  const m = db as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const [name, key] of [
    ['transaction', 'tx'],
    ['execProtocolRawStream', 'raw'],
    ['pipelineTransaction', 'pipelined'],
  ] as const) {
    const orig = m[name];
    if (orig === undefined) continue;
    m[name] = (...a: unknown[]) => {
      calls[key]++;
      return orig.apply(db, a);
    };
  }
  return { db, calls, close: () => db.close() };
}

describe.each(['in-process', 'worker'] as const)('pipelined group commit (%s PGlite)', (kind) => {
  let c: Counted;
  beforeAll(async () => {
    c = await counted(kind);
    await PgliteBackend.open({ instance: c.db }); // migrate
  }, 120_000);
  afterAll(async () => {
    await c.close();
  });
  beforeEach(async () => {
    await resetPglite(c.db);
  });

  /** A group commit's staged writes: entries, their leaves, their quota. */
  const group = (from: number, n: number, limit: number) => async (tx: StorageBackend) => {
    const idx = Array.from({ length: n }, (_, i) => from + i);
    expect(await tx.consumeQuotas!(demands(n, limit))).toEqual(idx.map(() => true));
    await tx.putEntries!(idx.map((i) => entry(i)));
    await tx.appendLeaves(from, idx.map(leaf), []);
  };

  it(
    'a group commit is one pipeline: one transaction, one exchange (or one message)',
    { timeout: 60_000 },
    async () => {
      const b = await PgliteBackend.open({ instance: c.db, vectorIndex: { auto: false } });
      await b.transaction((tx) => group(0, 3, 10)(tx)); // warms the hint (a read of the quota)
      c.calls.tx = c.calls.raw = c.calls.pipelined = 0;
      await b.transaction((tx) => group(3, 4, 10)(tx));
      if (kind === 'worker') expect(c.calls).toEqual({ tx: 0, raw: 0, pipelined: 1 });
      else expect(c.calls).toEqual({ tx: 1, raw: 1, pipelined: 0 });
      expect(await b.logSize()).toBe(7);
      expect(await b.quotaUsed('user:a', 'USER_OBSERVED', D)).toBe(7);
      const got = await b.getEntry('e-5');
      expect(got?.content).toBe('memory 5');
      expect([...(got?.embedding ?? [])]).toEqual([...entry(5).embedding!]);
      expect((await b.getLeaves(0, 7)).map((l) => l.entryId)).toEqual(
        Array.from({ length: 7 }, (_, i) => `e-${i}`),
      );
    },
  );

  it(
    'a head moved behind the hint: the conflict the step-by-step commit reports, nothing written',
    { timeout: 60_000 },
    async () => {
      const a = await PgliteBackend.open({ instance: c.db, vectorIndex: { auto: false } });
      await a.transaction((tx) => group(0, 1, 10)(tx));
      // A leaf index taken behind a's back fails on the leaves' key first (as step by step);
      // the head check itself is reached when the head is elsewhere with the leaf slots free.
      await c.db.exec('UPDATE log_head SET size = 5');
      expect(await code(a.transaction((tx) => group(1, 2, 10)(tx)))).toBe(
        'STORAGE_CONFLICT: log append at 1 but the log has 5 leaves',
      );
      expect(await a.logSize()).toBe(5);
      expect(await a.getLeaf(1)).toBeUndefined(); // the leaves statement ran, and was undone
      expect(await a.getEntry('e-1')).toBeUndefined();
      expect(await a.getEntry('e-2')).toBeUndefined();
      expect(await a.quotaUsed('user:a', 'USER_OBSERVED', D)).toBe(1); // the upsert too
      await c.db.exec('UPDATE log_head SET size = 1');
      await a.transaction((tx) => group(1, 1, 10)(tx)); // and the next is right
      expect(await a.logSize()).toBe(2);
    },
  );

  it(
    'a quota filled behind the hint: the replay conflict, nothing written',
    { timeout: 60_000 },
    async () => {
      const a = await PgliteBackend.open({ instance: c.db, vectorIndex: { auto: false } });
      const other = await PgliteBackend.open({ instance: c.db, vectorIndex: { auto: false } });
      await a.transaction((tx) => group(0, 1, 3)(tx)); // a's hint: 1 of 3
      expect(await other.consumeQuotas!(demands(2, 3))).toEqual([true, true]); // now 3 of 3
      expect(await code(a.transaction((tx) => group(1, 2, 3)(tx)))).toBe(
        'STORAGE_CONFLICT: quota counts moved during the transaction',
      );
      expect(await a.logSize()).toBe(1);
      expect(await a.getEntry('e-1')).toBeUndefined();
      expect(await a.quotaUsed('user:a', 'USER_OBSERVED', D)).toBe(3);
    },
  );

  it(
    'a statement the database refuses: its coded error, the earlier statements undone',
    { timeout: 60_000 },
    async () => {
      const b = await PgliteBackend.open({ instance: c.db, vectorIndex: { auto: false } });
      await b.transaction((tx) => group(0, 1, 10)(tx));
      // A committed id again (unique violation in the entries INSERT, after the scope switch and
      // before the leaves): the whole pipeline rolls back.
      const failed = await code(
        b.transaction(async (tx) => {
          expect(await tx.consumeQuotas!(demands(1, 10))).toEqual([true]);
          await tx.putEntries!([entry(1, 'e-0')]);
          await tx.appendLeaves(1, [leaf(1)], []);
        }),
      );
      expect(failed).toMatch(/^STORAGE_CONFLICT: /);
      expect(await b.logSize()).toBe(1);
      expect(await b.quotaUsed('user:a', 'USER_OBSERVED', D)).toBe(1);
      expect((await b.getEntry('e-0'))?.leafIndex).toBe(0);
      // The same refusal from a commit that is not pipelined (a direct write): the same code.
      expect(await code(b.putEntries([entry(1, 'e-0')]))).toMatch(/^STORAGE_CONFLICT: /);
    },
  );

  it(
    'a commit with a step the pipeline cannot carry goes step by step, with the same result',
    { timeout: 60_000 },
    async () => {
      const b = await PgliteBackend.open({ instance: c.db, vectorIndex: { auto: false } });
      await b.transaction((tx) => group(0, 1, 2)(tx));
      c.calls.tx = c.calls.raw = c.calls.pipelined = 0;
      // 2 of a limit of 2 demanded with 1 used: staging admits one, refuses one — a replay the one
      // upsert cannot settle, so this commit runs statement by statement.
      await b.transaction(async (tx) => {
        expect(await tx.consumeQuotas!(demands(2, 2))).toEqual([true, false]);
        await tx.putEntries!([entry(1)]);
        await tx.appendLeaves(1, [leaf(1)], []);
      });
      expect(c.calls.pipelined).toBe(0);
      expect(c.calls.tx).toBeGreaterThan(0);
      expect(await b.quotaUsed('user:a', 'USER_OBSERVED', D)).toBe(2);
      expect(await b.logSize()).toBe(2);
    },
  );
});
