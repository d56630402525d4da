/**
 * Group `pglite-worker` (ADR 0025): what the worker-thread PGlite proxy costs per call, next to
 * the same calls on an in-process PGlite, in one run.
 *
 * - `*_wall_us`: wall-clock microseconds per call, calls awaited one after another (a round
 *   trip to the worker thread and back, PostgreSQL's own work included).
 * - `*_main_cpu_us`: CPU microseconds per call of the CALLING thread alone (Linux
 *   /proc/self/task/<pid>/schedstat, ns resolution). This is what the HTTP thread pays: on an
 *   in-process PGlite the whole statement, with the worker only posting the message and
 *   handling the answer.
 * - Calls: `query` = `SELECT $1::int`; `tx` = a scoped read as the backend runs one (BEGIN,
 *   `SET LOCAL ROLE`, `set_config('app.principal')`, a one-row SELECT, COMMIT); `raw` = a binary
 *   extended-protocol SELECT of 10 rows under `runExclusive` (`runBinaryQuery`, the partition
 *   scan's path).
 * - `commit`: a group commit of 16 entries (384-d vectors), their leaves and their quota as the
 *   backend runs it (`PgliteBackend.transaction`): ONE pipelined transaction (ADR 0028) — on the
 *   worker a single message.
 * - Ratios: `pglite_worker_main_cpu_over_inproc_*` (< 1: the worker takes CPU off the caller).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { runBinaryQuery } from '../dist/adapters/pglite/binary-rows.js';
import { PgliteWorker } from '../dist/adapters/pglite/worker.js';
import { PgliteBackend } from '../dist/adapters/pglite/index.js';
import { round } from './lib.mjs';

const SCHED = `/proc/self/task/${process.pid}/schedstat`;
/** This (main) thread's CPU time in ns; the process's when schedstat is unavailable. */
function threadCpuNs() {
  try {
    return Number(readFileSync(SCHED, 'utf8').split(' ')[0]);
  } catch {
    const u = process.cpuUsage();
    return (u.user + u.system) * 1000;
  }
}

const SETUP = `
  CREATE EXTENSION IF NOT EXISTS vector;
  CREATE TABLE IF NOT EXISTS t (id int PRIMARY KEY, owner text, b bytea, v vector(4));
  INSERT INTO t SELECT i, 'p' || (i % 3), '\\x0102030405'::bytea, '[1,2,3,4]' FROM generate_series(1, 100) i
    ON CONFLICT DO NOTHING;
  DO $$ BEGIN CREATE ROLE bench_app; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
  GRANT SELECT ON t TO bench_app;
`;

const CALLS = {
  query: (db, i) => db.query('SELECT $1::int AS x', [i]),
  tx: (db, i) =>
    db.transaction(async (tx) => {
      await tx.query('SET LOCAL ROLE bench_app');
      await tx.query("SELECT set_config('app.principal', $1, true)", [`p${i % 3}`]);
      return tx.query('SELECT id, b FROM t WHERE id = $1', [1 + (i % 100)]);
    }),
  raw: (db, i) =>
    db.transaction(() =>
      runBinaryQuery(db, 'SELECT id, owner, b, v FROM t WHERE id > $1 LIMIT 10', [String(i % 90)]),
    ),
};

const BATCH = 16;
const vec = (k) =>
  Float32Array.from({ length: 384 }, (_, i) => Math.fround(((i * 7 + k) % 13) / 13 - 0.5));
/** Batch `i` of the group commit: BATCH entries, their leaves (from `i * BATCH`), their quota. */
function groupCommit(backend, i) {
  const start = i * BATCH;
  const idx = Array.from({ length: BATCH }, (_, j) => start + j);
  return backend.transaction(async (tx) => {
    await tx.consumeQuotas(
      idx.map(() => ({ principal: 'user:a', tier: 'USER_OBSERVED', dayKey: 'd', limit: 10_000_000 })),
    );
    await tx.putEntries(
      idx.map((k) => ({
        id: `e-${k}`,
        owner: 'user:a',
        tier: 'USER_OBSERVED',
        bytes: new Uint8Array(600).fill(k & 255),
        leafIndex: k,
        macKid: 'mk',
        mac: new Uint8Array(32).fill(3),
        writer: 'user:a',
        kind: 'fact',
        createdAtNs: BigInt(k) + 1n,
        content: `memory ${k}: the user prefers aisle seats on morning flights`,
        embedding: vec(k),
      })),
    );
    await tx.appendLeaves(
      start,
      idx.map((k) => ({
        index: k,
        data: new Uint8Array(80).fill(k & 255),
        hash: new Uint8Array(32).fill(k & 255),
        entryId: `e-${k}`,
        kind: 'entry',
      })),
      [],
    );
  });
}

async function time(db, call, n) {
  for (let i = 0; i < Math.min(200, n); i++) await call(db, i); // warm-up (JIT, caches)
  const c0 = threadCpuNs();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await call(db, i);
  const wallUs = ((performance.now() - t0) * 1000) / n;
  const cpuUs = (threadCpuNs() - c0) / 1000 / n;
  return { wallUs, cpuUs };
}

export async function run({ log }) {
  const n = Number(process.env.BENCH_PGLITE_WORKER_CALLS ?? 2000);
  const inproc = await PGlite.create({ extensions: { vector } });
  const worker = await PgliteWorker.create();
  const figures = {};
  const ratios = {};
  try {
    await inproc.exec(SETUP);
    await worker.exec(SETUP);
    for (const [name, call] of Object.entries(CALLS)) {
      // Alternate the two (twice each) so drifting machine load hits both alike; keep the best.
      const best = { inproc: undefined, worker: undefined };
      for (let round_ = 0; round_ < 2; round_++) {
        for (const [which, db] of [
          ['inproc', inproc],
          ['worker', worker],
        ]) {
          const r = await time(db, call, n);
          if (best[which] === undefined || r.cpuUs < best[which].cpuUs) best[which] = r;
        }
      }
      figures[`pglite_inproc_${name}_wall_us`] = round(best.inproc.wallUs, 1);
      figures[`pglite_inproc_${name}_main_cpu_us`] = round(best.inproc.cpuUs, 1);
      figures[`pglite_worker_${name}_wall_us`] = round(best.worker.wallUs, 1);
      figures[`pglite_worker_${name}_main_cpu_us`] = round(best.worker.cpuUs, 1);
      ratios[`pglite_worker_main_cpu_over_inproc_${name}`] = round(
        best.worker.cpuUs / best.inproc.cpuUs,
        3,
      );
      log(
        `${name.padEnd(6)} in-process ${best.inproc.wallUs.toFixed(1)} µs wall, ${best.inproc.cpuUs.toFixed(1)} µs caller CPU; ` +
          `worker ${best.worker.wallUs.toFixed(1)} µs wall, ${best.worker.cpuUs.toFixed(1)} µs caller CPU`,
      );
    }
    // The group commit, on a migrated store in each (the backend never closes a given instance).
    const nc = Math.max(50, Math.floor(n / 10));
    const backends = {
      inproc: await PgliteBackend.open({ instance: inproc, vectorIndex: { auto: false } }),
      worker: await PgliteBackend.open({ instance: worker, vectorIndex: { auto: false } }),
    };
    const next = { inproc: 0, worker: 0 };
    const best = { inproc: undefined, worker: undefined };
    for (let round_ = 0; round_ < 2; round_++) {
      for (const which of ['inproc', 'worker']) {
        const b = backends[which];
        const r = await time(b, (backend) => groupCommit(backend, next[which]++), nc);
        if (best[which] === undefined || r.cpuUs < best[which].cpuUs) best[which] = r;
      }
    }
    for (const which of ['inproc', 'worker']) {
      figures[`pglite_${which}_commit16_wall_us`] = round(best[which].wallUs, 1);
      figures[`pglite_${which}_commit16_main_cpu_us`] = round(best[which].cpuUs, 1);
    }
    ratios.pglite_worker_main_cpu_over_inproc_commit16 = round(
      best.worker.cpuUs / best.inproc.cpuUs,
      3,
    );
    log(
      `commit of ${BATCH}: in-process ${best.inproc.wallUs.toFixed(1)} µs wall, ${best.inproc.cpuUs.toFixed(1)} µs caller CPU; ` +
        `worker ${best.worker.wallUs.toFixed(1)} µs wall, ${best.worker.cpuUs.toFixed(1)} µs caller CPU`,
    );
  } finally {
    await Promise.all([inproc.close(), worker.close()]);
  }
  return { figures, ratios };
}
