#!/usr/bin/env node
/**
 * Store benchmark (standalone; the lead wires it into `npm run bench`): search over N entries
 * (384-d, one principal) on the embedded store, and plain putEntry write throughput.
 *
 *   npx tsc -p tsconfig.build.json && node bench/store-search.mjs [--n 100000] [--hnsw] [--json]
 *
 * Figures: load time, exact-scan search p50/p99, IVFFlat build time and search p50/p99 (the
 * chosen index), optionally HNSW build + search (--hnsw: ~3 min in PGlite), and
 * putEntry throughput in transactions of 256 for PGlite and (with MEMWARDEN_TEST_DATABASE_URL)
 * the PostgreSQL server. Search runs in a principal view (row-level security applies) and
 * excludes computing the query embedding. Progress goes to stderr.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PgliteBackend } from '../dist/adapters/pglite/index.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '100000' },
    hnsw: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const N = Number(values.n);
const D = 384;
const log = (m) => process.stderr.write(`store-search: ${m}\n`);

let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
function unit() {
  const v = new Float32Array(D);
  let s = 0;
  for (let i = 0; i < D; i++) s += (v[i] = rand()) ** 2;
  s = Math.sqrt(s);
  for (let i = 0; i < D; i++) v[i] /= s;
  return v;
}
const entry = (i, owner = 'user:a') => ({
  id: `e-${owner}-${i}`,
  owner,
  tier: 'USER_OBSERVED',
  bytes: new Uint8Array(200).fill(i & 0xff),
  leafIndex: i,
  macKid: 'm1',
  mac: new Uint8Array(32),
  writer: owner,
  kind: 'fact',
  createdAtNs: 1n,
  expiresAtNs: 2n ** 62n,
  content: `memory number ${i} about topic ${i % 97}`,
  uri: `chat:s${i % 10}`,
  srcHash: 'ab'.repeat(32),
  embedding: unit(),
});
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const r3 = (x) => Math.round(x * 1000) / 1000;

async function searchStats(view, runs = 101) {
  const qs = Array.from({ length: runs + 5 }, unit);
  for (let i = 0; i < 5; i++) await view.searchEntries({ embedding: qs[i], nowNs: 1n, limit: 10 });
  const ts = [];
  for (let i = 5; i < qs.length; i++) {
    const t = performance.now();
    const hits = await view.searchEntries({ embedding: qs[i], nowNs: 1n, limit: 10 });
    ts.push(performance.now() - t);
    if (hits.length !== 10) throw new Error(`expected 10 hits, got ${hits.length}`);
  }
  return { p50: r3(pct(ts, 50)), p99: r3(pct(ts, 99)) };
}

/** Recall@10 of the indexed search against exact ranking, over a few queries. */
async function recall(db, view, queries = 10) {
  let hit = 0;
  for (let i = 0; i < queries; i++) {
    const q = unit();
    const approx = new Set(
      (await view.searchEntries({ embedding: q, nowNs: 1n, limit: 10 })).map((h) => h.entry.id),
    );
    await db.exec('SET enable_indexscan = off');
    const exact = await view.searchEntries({ embedding: q, nowNs: 1n, limit: 10 });
    await db.exec('SET enable_indexscan = on');
    hit += exact.filter((h) => approx.has(h.entry.id)).length;
  }
  return r3(hit / (10 * queries));
}

async function writeThroughput(backend, owner, batches = 8, size = 256, base = 10_000_000) {
  const t0 = performance.now();
  for (let b = 0; b < batches; b++) {
    const batch = Array.from({ length: size }, (_, i) => entry(base + b * size + i, owner));
    await backend.transaction(async (tx) => {
      for (const e of batch) await tx.putEntry(e);
    });
  }
  return Math.round((batches * size) / ((performance.now() - t0) / 1000));
}

const figures = {};
const db = await PGlite.create({ extensions: { vector } });
const sys = await PgliteBackend.open({ instance: db });
if (!sys.hasVector) throw new Error('pgvector not loaded');
const view = sys.asPrincipal('user:a');

let t0 = performance.now();
for (let i = 0; i < N; i += 1000) {
  const batch = Array.from({ length: Math.min(1000, N - i) }, (_, j) => entry(i + j));
  await view.transaction(async (tx) => {
    for (const e of batch) await tx.putEntry(e);
  });
  if (i % 20000 === 0) log(`loaded ${i}`);
}
figures.load_100k_s = r3((performance.now() - t0) / 1000);
figures.load_rows_per_s = Math.round(N / figures.load_100k_s);
log(`loaded ${N} in ${figures.load_100k_s} s`);

const exact = await searchStats(view, 21);
figures.search_exact_p50_ms = exact.p50;
figures.search_exact_p99_ms = exact.p99;
log(`exact scan p50 ${exact.p50} ms`);

await db.exec("SET maintenance_work_mem = '1GB'");
await db.exec('ANALYZE entries'); // without statistics the planner may not pick the index
const lists = Math.max(1, Math.round(Math.sqrt(N)));
t0 = performance.now();
await db.exec(
  `CREATE INDEX entries_embedding_ivf ON entries USING ivfflat (embedding_vec vector_cosine_ops) WITH (lists = ${lists})`,
);
figures.ivfflat_build_s = r3((performance.now() - t0) / 1000);
await db.exec('SET ivfflat.probes = 10');
await db.exec('SET ivfflat.iterative_scan = relaxed_order');
const ivf = await searchStats(view);
figures.search_100k_p50_ms = ivf.p50;
figures.search_100k_p99_ms = ivf.p99;
figures.ivfflat_recall_at_10 = await recall(db, view);
log(
  `ivfflat lists=${lists} probes=10: build ${figures.ivfflat_build_s} s, p50 ${ivf.p50} ms, recall ${figures.ivfflat_recall_at_10}`,
);

if (values.hnsw) {
  await db.exec('DROP INDEX entries_embedding_ivf');
  t0 = performance.now();
  await db.exec(
    'CREATE INDEX entries_embedding_hnsw ON entries USING hnsw (embedding_vec vector_cosine_ops)',
  );
  figures.hnsw_build_s = r3((performance.now() - t0) / 1000);
  await db.exec('SET hnsw.iterative_scan = relaxed_order');
  const h = await searchStats(view);
  figures.search_hnsw_p50_ms = h.p50;
  figures.search_hnsw_p99_ms = h.p99;
  figures.hnsw_recall_at_10 = await recall(db, view);
  log(`hnsw: build ${figures.hnsw_build_s} s, p50 ${h.p50} ms`);
}

figures.writes_per_s_embedded_putentry = await writeThroughput(sys, 'user:w');
log(
  `PGlite putEntry (256/tx, with a 384-d embedding each): ${figures.writes_per_s_embedded_putentry}/s`,
);
await sys.close();
await db.close();

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
if (url) {
  const { PgBackend } = await import('../dist/adapters/pg/index.js');
  const schema = `mwbench_${process.pid}`;
  const pgb = await PgBackend.open({ connectionString: url, schema });
  try {
    figures.writes_per_s_postgres_putentry = await writeThroughput(pgb, 'user:w');
    log(
      `PostgreSQL putEntry (256/tx): ${figures.writes_per_s_postgres_putentry}/s (vector: ${pgb.hasVector})`,
    );
  } finally {
    await pgb.close();
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA ${schema} CASCADE`);
    await c.end();
  }
}

if (values.json) process.stdout.write(JSON.stringify({ figures }) + '\n');
else for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(34)} ${v}`);
