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
 * - Ratios: `pglite_worker_main_cpu_over_inproc_*` (< 1: the worker takes CPU off the caller).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { runBinaryQuery } from '../dist/adapters/pglite/binary-rows.js';
import { PgliteWorker } from '../dist/adapters/pglite/worker.js';
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
  } finally {
    await Promise.all([inproc.close(), worker.close()]);
  }
  return { figures, ratios };
}
