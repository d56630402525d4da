#!/usr/bin/env node
/**
 * Group `load-pg` (issue 21): the PostgreSQL server with pgvector behind TWO `memwarden serve`
 * processes, beside the embedded store's single process, in the same run.
 *
 *   npm run bench -- --json --only load-pg
 *
 * What runs, openly:
 * - Servers: the shipped CLI (`dist/cli/main.js serve`, request logs and metrics on, the real
 *   local MiniLM model, default quotas and screening, `--accept-client-embeddings`), exactly as
 *   the `load` group (bench/load.mjs) starts them; on PostgreSQL two of them share one schema
 *   and one key folder, each with its in-process read model following the log (ADR 0037).
 * - Database: MEMWARDEN_BENCH_DATABASE_URL, else `scripts/pg-test-server.sh --vector` (the
 *   `vector` extension created by the superuser, as on a managed service); neither available:
 *   the group says so and reports `load_pg_skipped` (MEMWARDEN_BENCH_REQUIRE_PG=1 fails
 *   instead). The PostgreSQL server runs on the same 2 cores as everything else.
 * - Load: autocannon from this process, 32 connections spread round robin over the two
 *   servers (one histogram: p50/p99 are over all requests), 32 to the embedded one. `search`:
 *   one principal's natural-language queries embedded by the server (query cache warm, as in
 *   `load`); `write`: POST /v1/memories with client vectors, 32 writer principals.
 * - Server CPU per request: the serve processes AND every PostgreSQL backend serving the bench
 *   database (process titles in /proc), divided by the 2xx answers.
 * - Visibility: a write answered by one process, then the same principal searches for it on
 *   the OTHER process until it is returned (1 ms apart); the delay from the write's answer to
 *   the first search that returns it, while the two servers also take a background write load
 *   (8 connections). Writes alternate direction.
 * - Latency: `pg_search_100k_p50_ms` is measured at 8 connections (4 per process), below
 *   saturation — at 32 the p50 is mostly the queue in front of a busy core (≈ 32 / throughput);
 *   both are reported.
 * - Sizes: 10,000 entries (built in each run) and 100,000 (a cached fixture: the schema stays
 *   in the bench database and its key folder under bench/out/, built once — several minutes —
 *   and reused while it is intact; writes at 100k add to it, and it is rebuilt past 130,000
 *   entries). The embedded store is measured at 10,000 (the `load` group's figure of record).
 * - The 1-minute load average is recorded with every run: the 2 cores are shared.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
/* global URL, fetch, setTimeout, setInterval, clearInterval */
import pg from 'pg';
import {
  buildStore,
  cannon,
  dropSchema,
  embedPools,
  jitter,
  makers,
  pgSchemaUrl,
  post,
  readProc,
  session,
  startServer,
  warmQueries,
} from './load.mjs';
import { median, mulberry32, percentile, round } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const OUT = path.join(here, 'out');
const FIXTURE_VERSION = 1;

/** The bench database: given, or the test server's pgvector database. */
async function benchDatabase(log) {
  const given = process.env.MEMWARDEN_BENCH_DATABASE_URL;
  if (given !== undefined && given !== '') return given;
  // The test-server script installs and starts PostgreSQL as root; never prompt for a password.
  if (process.getuid?.() !== 0 && !existsSync('/usr/lib/postgresql'))
    throw new Error('no PostgreSQL installed here');
  log('starting the PostgreSQL test server with pgvector (scripts/pg-test-server.sh --vector)');
  const r = spawn('bash', [path.join(root, 'scripts/pg-test-server.sh'), '--vector'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  r.stdout.on('data', (d) => (out += d));
  const code = await new Promise((res) => r.once('exit', res));
  if (code !== 0)
    throw new Error('scripts/pg-test-server.sh --vector failed (pgvector installed?)');
  return out.trim();
}

/** CPU ticks of every PostgreSQL backend serving database `db` (its process title names it), by pid. */
function pgTicks(db) {
  const by = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (!cmd.startsWith('postgres:') || !cmd.includes(` ${db} `)) continue;
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ');
      by.set(d, Number(stat[11]) + Number(stat[12]));
    } catch {
      // gone meanwhile
    }
  }
  return by;
}

/**
 * The database's CPU seconds over a window: each backend's ticks at the start, then sampled every
 * 200 ms, so a backend that exits during the window (a pool closing an idle connection) keeps
 * what it used up to its last sample — summing only the backends alive at the end lost a
 * closed one's whole count and could give a negative figure.
 */
function pgCpuMeter(db) {
  const first = pgTicks(db);
  const last = new Map(first);
  const sample = () => {
    for (const [pid, t] of pgTicks(db)) last.set(pid, t);
  };
  const timer = setInterval(sample, 200);
  return () => {
    clearInterval(timer);
    sample();
    let ticks = 0;
    for (const [pid, t] of last) ticks += t - (first.get(pid) ?? 0);
    return ticks / 100;
  };
}

/**
 * Wait until every server's read model holds its partitions with their vector index built
 * (`/healthz` storage.readModel.held): until then searches scan exactly (ADR 0020), which is
 * what a process does in its first seconds after loading a large partition, not its steady state.
 */
export async function readyModels(servers, log, timeoutMs = 180_000) {
  const t0 = performance.now();
  for (;;) {
    const held = await Promise.all(
      servers.map(
        async (s) => (await (await fetch(`${s.url}/healthz`)).json()).storage?.readModel?.held,
      ),
    );
    if (held.every((h) => h === undefined || (h.loading === 0 && h.indexing === 0))) {
      log(
        `read models ready after ${((performance.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(held)}`,
      );
      return;
    }
    if (performance.now() - t0 > timeoutMs) {
      log(`read models still building after ${timeoutMs / 1000} s: ${JSON.stringify(held)}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** One run against several servers at once (one histogram), CPU of them all + the database's. */
async function measureAll(servers, { op, connections, duration, mk, db, log, label }) {
  const load1 = os.loadavg()[0];
  const cpu = () => servers.reduce((a, s) => a + readProc(s.pid).cpuS, 0);
  const c0 = cpu();
  const dbCpu = db === undefined ? () => 0 : pgCpuMeter(db);
  const client0 = process.cpuUsage();
  const r = await cannon({ url: servers.map((s) => s.url), connections, duration, ...mk });
  const cpuS = cpu() - c0 + dbCpu();
  const client = process.cpuUsage(client0);
  const ok = r['2xx'];
  const row = {
    backend: label,
    op,
    connections,
    per_s: round(ok / duration, 1),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    server_cpu_ms_per_req: ok > 0 ? round((cpuS * 1000) / ok, 3) : null,
    client_cpu_ms_per_req: ok > 0 ? round((client.user + client.system) / 1000 / ok, 3) : null,
    load1: round(load1, 2),
  };
  log(
    `${label.padEnd(14)} ${op.padEnd(6)} c=${connections}  ${String(row.per_s).padStart(7)}/s  p50 ${row.p50_ms} ms  p99 ${row.p99_ms} ms  ` +
      `non2xx ${row.non2xx}  errors ${row.errors}  server+db CPU ${row.server_cpu_ms_per_req} ms/req  client ${row.client_cpu_ms_per_req}  load ${row.load1}`,
  );
  return row;
}

/**
 * Cross-process visibility: write on one server, search for it on the other until it is
 * returned; meanwhile `background` keeps both taking writes.
 */
async function visibility({ servers, store, pools, samples, log, background }) {
  const r = mulberry32(77);
  const run = Date.now().toString(36);
  const delays = [];
  let missed = 0;
  const bg = background();
  for (let i = 0; i < samples; i++) {
    const w = store.writers[i % store.writers.length];
    const b = (i * 13) % pools.baseVecs.length;
    const v = Array.from(jitter(pools.baseVecs[b], r), (x) => Math.round(x * 1e5) / 1e5);
    const content = `${pools.bases[b]} (visibility probe ${run} ${i})`;
    const [from, to] = i % 2 === 0 ? [servers[0], servers[1]] : [servers[1], servers[0]];
    const m = await post(from.url, '/v1/memories', w.apiKey, { content, embedding: v });
    if (m.id === undefined) continue; // held for review / refused: not a write to follow
    const t0 = performance.now();
    for (;;) {
      const s = await post(to.url, '/v1/memories/search', w.apiKey, {
        query: content,
        limit: 3,
        embedding: v,
      });
      if (s.results.some((x) => x.memory.id === m.id)) {
        delays.push(performance.now() - t0);
        break;
      }
      if (performance.now() - t0 > 5_000) {
        missed++;
        delays.push(5_000);
        break;
      }
      await new Promise((res) => setTimeout(res, 1));
    }
  }
  await bg;
  log(
    `visibility: ${delays.length} writes, p50 ${round(median(delays), 1)} ms, p99 ${round(percentile(delays, 99), 1)} ms, ` +
      `max ${round(Math.max(...delays), 1)} ms, not visible within 5 s: ${missed}  load ${round(os.loadavg()[0], 2)}`,
  );
  return { delays, missed };
}

/** One write per writer on each server, sequentially; the latency of each (ms). */
async function firstWrites(servers, store, mk) {
  const ts = [];
  for (const s of servers) {
    for (const w of store.writers) {
      const body = JSON.parse(mk.write.body());
      const t0 = performance.now();
      // A refusal (409 near-duplicate, 202 held) went through the same loads: timed all the same.
      await post(s.url, '/v1/memories', w.apiKey, body).catch(() => undefined);
      ts.push(performance.now() - t0);
    }
  }
  return ts;
}

/** The cached 100k fixture: its schema, key folder and principals, if intact. */
async function fixture({ pgBase, n, pools, log }) {
  const key = createHash('sha256')
    .update(JSON.stringify({ v: FIXTURE_VERSION, n, db: new URL(pgBase).pathname }))
    .digest('hex')
    .slice(0, 10);
  const schema = `mw_bench_fix_${key}`;
  const dir = path.join(OUT, `pg-fixture-${key}`);
  const metaFile = path.join(dir, 'fixture.json');
  const c = new pg.Client({ connectionString: pgBase });
  await c.connect();
  try {
    if (existsSync(metaFile)) {
      const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
      // The log head (no row-level security: the owner role sees no tenant rows of log_leaves).
      const { rows } = await c
        .query(`SELECT size::int AS n FROM ${schema}.log_head`)
        .catch(() => ({ rows: [] }));
      const have = rows[0]?.n ?? 0;
      if (have >= n && have <= n * 1.3) {
        log(`100k fixture: schema ${schema} (${have} leaves), keys in ${path.relative(root, dir)}`);
        return { schema, dataDir: dir, store: meta.store };
      }
      log(`100k fixture: ${have} leaves in ${schema}, rebuilding`);
    }
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await c.end();
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`100k fixture: building ${n} entries into ${schema} (once; minutes)`);
  const postgres = await pgSchemaUrl(pgBase, schema);
  const store = await buildStore({ dataDir: dir, postgres, n, pools, log });
  writeFileSync(
    metaFile,
    JSON.stringify({ schema, n, store: { searcher: store.searcher, writers: store.writers } }),
  );
  return { schema, dataDir: dir, store: { searcher: store.searcher, writers: store.writers } };
}

/** Two serve processes on one schema: warm up, measure search and write, optionally visibility. */
async function pg2({ pgBase, n, pools, duration, log, cached, probe }) {
  const db = new URL(pgBase).pathname.slice(1);
  let schema;
  let dataDir;
  let store;
  let temp = false;
  if (cached) {
    ({ schema, dataDir, store } = await fixture({ pgBase, n, pools, log }));
  } else {
    schema = `mw_loadpg_${process.pid}_${n}`;
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'mw-loadpg-'));
    temp = true;
  }
  const postgres = await (async () => {
    if (cached) {
      const u = new URL(pgBase);
      u.searchParams.set('options', `-c search_path=${schema},public`);
      return u.toString();
    }
    return pgSchemaUrl(pgBase, schema);
  })();
  const servers = [];
  try {
    if (!cached) store = (await buildStore({ dataDir, postgres, n, pools, log })).valueOf();
    const extraArgs = (process.env.LOAD_SERVER_ARGS ?? '').split(' ').filter((a) => a !== '');
    for (let i = 0; i < 2; i++) servers.push(await startServer({ dataDir, postgres, extraArgs }));
    log(`postgres ×2 (${n}): servers ${servers.map((s) => `${s.pid} ${s.url}`).join(', ')}`);
    const mk = makers(pools, store);
    const cold = [];
    for (const s of servers) cold.push(...(await warmQueries(s, pools, store, n > 0)));
    // Every writer's first write on each process, one at a time, timed: it loads that
    // principal's partition and its screening history once per process (ADR 0079). Measured
    // apart — at 32 writers × 2 processes these one-time loads filled a whole measured window at
    // 100k (21.5/10.8 writes/s, p99 4.4–5.8 s), which then said nothing about the steady state.
    const firstWrite = await firstWrites(servers, store, mk);
    log(
      `first write per writer and process: ${firstWrite.length}, p50 ${round(median(firstWrite), 1)} ms, ` +
        `p99 ${round(percentile(firstWrite, 99), 1)} ms  load ${round(os.loadavg()[0], 2)}`,
    );
    for (const op of ['search', 'write']) {
      await cannon({ url: servers.map((s) => s.url), connections: 8, duration: 2, ...mk[op] });
    }
    await readyModels(servers, log);
    const label = `postgres×2 ${n / 1000}k`;
    const rows = [];
    for (const op of ['search', 'write'])
      rows.push(
        await measureAll(servers, { op, connections: 32, duration, mk: mk[op], db, log, label }),
      );
    // Latency below saturation (at 32 connections the p50 is mostly queueing: 32 / throughput),
    // in the steady state as the first windows: after the write window each process's vector
    // index rebuilds in slices (ADR 0020), which would otherwise run inside this one.
    await readyModels(servers, log);
    const light = await measureAll(servers, {
      op: 'search',
      connections: 8,
      duration,
      mk: mk.search,
      db,
      log,
      label,
    });
    let vis;
    if (probe) {
      vis = await visibility({
        servers,
        store,
        pools,
        samples: 200,
        log,
        background: () =>
          cannon({ url: servers.map((s) => s.url), connections: 8, duration: 4, ...mk.write }),
      });
    }
    const health = await (await fetch(`${servers[0].url}/healthz`)).json();
    return { rows, light, vis, cold, health, firstWrite };
  } finally {
    for (const s of servers) await s.stop();
    if (temp) {
      rmSync(dataDir, { recursive: true, force: true });
      await dropSchema(pgBase, schema).catch(() => undefined);
    }
  }
}

// ---- chart ----------------------------------------------------------------------------------

/** Grouped bars: searches/s and writes/s per configuration, and their p99. */
function barChart(rows, title) {
  const groups = [...new Set(rows.map((r) => r.backend))];
  const ops = ['search', 'write'];
  const colors = { search: '#1f77b4', write: '#d62728' };
  const W = 440;
  const H = 280;
  const M = { l: 55, r: 10, t: 30, b: 60 };
  const panel = (x0, metric, label) => {
    const maxY = Math.max(...rows.map((r) => r[metric] ?? 0)) * 1.15 || 1;
    const gw = (W - M.l - M.r) / groups.length;
    const bw = gw / (ops.length + 1);
    const py = (v) => M.t + (1 - v / maxY) * (H - M.t - M.b);
    let s = `<text x="${x0 + W / 2}" y="18" text-anchor="middle" font-weight="bold">${label}</text>`;
    s += `<line x1="${x0 + M.l}" y1="${H - M.b}" x2="${x0 + W - M.r}" y2="${H - M.b}" stroke="#000"/>`;
    for (let i = 0; i <= 4; i++) {
      const v = (maxY * i) / 4;
      s += `<text x="${x0 + M.l - 5}" y="${py(v) + 4}" text-anchor="end" font-size="10">${Math.round(v)}</text>`;
      s += `<line x1="${x0 + M.l}" y1="${py(v)}" x2="${x0 + W - M.r}" y2="${py(v)}" stroke="#eee"/>`;
    }
    groups.forEach((g, gi) => {
      const gx = x0 + M.l + gi * gw;
      ops.forEach((op, oi) => {
        const r = rows.find((x) => x.backend === g && x.op === op);
        if (r === undefined) return;
        const v = r[metric] ?? 0;
        const x = gx + bw * (oi + 0.5);
        s += `<rect x="${x}" y="${py(v)}" width="${bw * 0.9}" height="${H - M.b - py(v)}" fill="${colors[op]}"/>`;
        s += `<text x="${x + bw * 0.45}" y="${py(v) - 3}" text-anchor="middle" font-size="9">${Math.round(v)}</text>`;
      });
      s += `<text x="${gx + gw / 2}" y="${H - M.b + 14}" text-anchor="middle" font-size="10">${g}</text>`;
    });
    return s;
  };
  const legend = ops
    .map(
      (op, i) =>
        `<rect x="${20 + i * 90}" y="${H + 2}" width="12" height="8" fill="${colors[op]}"/><text x="${36 + i * 90}" y="${H + 10}" font-size="11">${op}</text>`,
    )
    .join('');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${H + 40}" font-family="sans-serif">` +
    `<title>${title}</title><rect width="100%" height="100%" fill="#fff"/>` +
    panel(0, 'per_s', 'requests/s (2xx), 32 connections') +
    panel(W, 'p99_ms', 'p99 latency (ms)') +
    legend +
    `<text x="10" y="${H + 32}" font-size="10" fill="#555">${title}</text></svg>`
  );
}

// ---- the group --------------------------------------------------------------------------------

export async function run({ log, duration = 6 } = {}) {
  const started = new Date();
  let pgBase;
  try {
    pgBase = await benchDatabase(log);
  } catch (e) {
    // `npm run bench` runs every group: without a PostgreSQL with pgvector here, say so.
    if (process.env.MEMWARDEN_BENCH_REQUIRE_PG === '1') throw e;
    log(`skipped: no PostgreSQL with pgvector (${e.message}); set MEMWARDEN_BENCH_DATABASE_URL`);
    return { figures: { load_pg_skipped: String(e.message) }, ratios: {}, targets: [] };
  }
  const pools = await embedPools(log);
  const emb = await session({
    backend: 'pglite',
    n: 10_000,
    pools,
    plan: [
      { op: 'search', connections: 32 },
      { op: 'write', connections: 32 },
    ],
    duration,
    log,
  });
  const embRows = emb.rows.map((r) => ({ ...r, backend: 'embedded 10k' }));
  const small = await pg2({ pgBase, n: 10_000, pools, duration, log, cached: false, probe: true });
  const big =
    process.env.LOAD_PG_SKIP_100K === '1'
      ? {
          rows: [
            {
              backend: 'skipped',
              op: 'search',
              per_s: 0,
              p50_ms: NaN,
              p99_ms: NaN,
              non2xx: 0,
              errors: 0,
            },
            {
              backend: 'skipped',
              op: 'write',
              per_s: 0,
              p50_ms: NaN,
              p99_ms: NaN,
              non2xx: 0,
              errors: 0,
            },
          ],
        }
      : await pg2({ pgBase, n: 100_000, pools, duration, log, cached: true, probe: false });
  const by = (rows, op) => rows.find((r) => r.op === op);
  const [eS, eW] = [by(embRows, 'search'), by(embRows, 'write')];
  const [pS, pW] = [by(small.rows, 'search'), by(small.rows, 'write')];
  const [bS, bW] = [by(big.rows, 'search'), by(big.rows, 'write')];
  const d = small.vis.delays;
  const figures = {
    embedded_search_per_s: eS.per_s,
    embedded_writes_per_s: eW.per_s,
    embedded_search_p50_ms: eS.p50_ms,
    embedded_search_p99_ms: eS.p99_ms,
    embedded_write_p50_ms: eW.p50_ms,
    embedded_write_p99_ms: eW.p99_ms,
    embedded_search_server_cpu_ms: eS.server_cpu_ms_per_req,
    embedded_write_server_cpu_ms: eW.server_cpu_ms_per_req,
    pg2_search_per_s: pS.per_s,
    pg2_writes_per_s: pW.per_s,
    pg2_search_p50_ms: pS.p50_ms,
    pg2_search_p99_ms: pS.p99_ms,
    pg2_write_p50_ms: pW.p50_ms,
    pg2_write_p99_ms: pW.p99_ms,
    pg2_search_server_db_cpu_ms: pS.server_cpu_ms_per_req,
    pg2_write_server_db_cpu_ms: pW.server_cpu_ms_per_req,
    pg_visibility_p50_ms: round(median(d), 1),
    pg_visibility_p99_ms: round(percentile(d, 99), 1),
    pg_visibility_max_ms: round(Math.max(...d), 1),
    pg_visibility_samples: d.length,
    pg_visibility_missed: small.vis.missed,
    pg2_search_100k_per_s: bS.per_s,
    // At 8 connections (4 per process): the latency of a search, not of the queue in front of it.
    pg_search_100k_p50_ms: big.light?.p50_ms ?? NaN,
    pg_search_100k_p99_ms: big.light?.p99_ms ?? NaN,
    pg_search_100k_c8_per_s: big.light?.per_s ?? NaN,
    pg2_search_100k_c32_p50_ms: bS.p50_ms,
    pg2_search_100k_c32_p99_ms: bS.p99_ms,
    pg_search_10k_c8_p50_ms: small.light?.p50_ms ?? NaN,
    pg_search_10k_c8_p99_ms: small.light?.p99_ms ?? NaN,
    pg2_writes_100k_per_s: bW.per_s,
    // One-time per principal and process (partition and screening history loads), measured apart.
    pg_first_write_10k_p50_ms: round(median(small.firstWrite), 1),
    pg_first_write_100k_p50_ms: big.firstWrite ? round(median(big.firstWrite), 1) : NaN,
    pg_first_write_100k_p99_ms: big.firstWrite ? round(percentile(big.firstWrite, 99), 1) : NaN,
    pg2_write_100k_p99_ms: bW.p99_ms,
    pg2_search_100k_server_db_cpu_ms: bS.server_cpu_ms_per_req,
    pg_vector_path: small.health?.storage?.vector?.summary ?? 'unknown',
    load_pg_non2xx: [...embRows, ...small.rows, ...big.rows].reduce(
      (a, r) => a + r.non2xx + r.errors,
      0,
    ),
    load_avg_1m: round(os.loadavg()[0], 2),
  };
  const ratios = {
    pg2_over_embedded_search: round(pS.per_s / eS.per_s, 3),
    pg2_over_embedded_writes: round(pW.per_s / eW.per_s, 3),
  };
  const rows = [...embRows, ...small.rows, ...big.rows];
  const machine = `${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, node ${process.version}`;
  const title = `memwarden: embedded (1 process) vs PostgreSQL+pgvector (2 serve processes) — ${duration} s per run, ${machine}, ${started.toISOString()}`;
  mkdirSync(OUT, { recursive: true });
  const svgFile = path.join(OUT, `load-pg-${started.toISOString().replace(/[:.]/g, '-')}.svg`);
  writeFileSync(svgFile, barChart(rows, title));
  log(`chart: ${path.relative(root, svgFile)}`);
  figures.load_pg_chart = path.relative(root, svgFile);
  return {
    figures,
    ratios,
    targets: [
      {
        name: 'pg2_over_embedded_search at 10k',
        value: ratios.pg2_over_embedded_search,
        op: '>=',
        limit: 0.8,
        ok: ratios.pg2_over_embedded_search >= 0.8,
      },
      {
        name: 'pg2_over_embedded_writes at 10k',
        value: ratios.pg2_over_embedded_writes,
        op: '>=',
        limit: 0.6,
        ok: ratios.pg2_over_embedded_writes >= 0.6,
      },
      {
        name: 'pg_search_100k_p50_ms',
        value: figures.pg_search_100k_p50_ms,
        op: '<=',
        limit: 10,
        ok: figures.pg_search_100k_p50_ms <= 10,
      },
      {
        name: 'pg_visibility_p99_ms',
        value: figures.pg_visibility_p99_ms,
        op: '<=',
        limit: 250,
        ok: figures.pg_visibility_p99_ms <= 250,
      },
    ],
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = await run({ log: (m) => process.stderr.write(`load-pg: ${m}\n`) });
  process.stdout.write(JSON.stringify(out) + '\n');
}
