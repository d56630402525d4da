#!/usr/bin/env node
/**
 * Group `load` (issue 10, "Load"): HTTP load on loopback against `memwarden serve` running in a
 * child process, driven by autocannon (pinned) from this process.
 *
 *   npm run bench -- --json --only load   embedded store, 32 connections: search_per_s,
 *                                          writes_per_s, p99_ms (+ the figures below)
 *   npm run bench:load                    the sweep: embedded and PostgreSQL backends,
 *                                          1/8/32/64 connections, table + SVG/HTML chart under
 *                                          bench/out/, memory (RSS) per 100,000 entries
 *
 * What is measured, openly:
 * - The server is the shipped CLI (`dist/cli/main.js serve`, request logs on, metrics on, the
 *   real local MiniLM model, default quotas and screening), started with
 *   `--accept-client-embeddings` (ADR 0012) so the write run can send vectors.
 * - The store: `--entries` (default 10,000) signed entries of ONE principal, loaded through
 *   `Ledger.write` before the server starts (signed, logged, RLS-scoped like any write).
 *   Their vectors are real MiniLM vectors of a pool of generated sentences with per-entry
 *   jitter (embedding 10,000 distinct texts would cost minutes of model time per run); the
 *   base vectors are computed once and cached under bench/out/.
 * - Search: that principal searches (limit 10) with queries drawn uniformly from a pool of
 *   QUERY_POOL natural-language questions, embedded BY THE SERVER with the real model. Each
 *   query is asked once before the measured runs (its cold latency, including the model, is
 *   reported as `search_cold_p50_ms`); measured runs then hit the query-embedding cache, and
 *   the hit rate is read back from the server's own metrics (`search_cache_hit_rate`). A
 *   stream of never-seen queries is bounded by the model (`search_cold_p50_ms` per query).
 *   `search_vec_*`: the same searches sending a precomputed query vector (no model, no cache).
 * - Writes: POST /v1/memories with unique content and a client-computed vector (jittered
 *   MiniLM base vectors), spread round-robin over WRITERS principals so each stays under the
 *   default 50,000/day USER_OBSERVED quota (quotas are NOT raised). Server-side embedding of
 *   every write is bounded by the model (~20 ms of CPU per text here): reported separately as
 *   `writes_server_embed_per_s` (8 connections).
 * - PostgreSQL backend without pgvector (Debian's PostgreSQL 15): vector search ranks every
 *   candidate in-process (src/adapters/sql/search.ts): it reads the candidates' ids and row
 *   versions and keeps their embeddings between searches (src/adapters/sql/row-vectors.ts),
 *   so at 10,000 entries of one principal a search costs ~24 ms of server CPU (~40/s on 2
 *   cores; before the cache every search fetched and parsed every `real[]`: seconds each).
 *   With pgvector installed the IVFFlat path is used instead.
 * - The 2-core machine is shared: the 1-minute load average is recorded with every run.
 * - Memory: server RSS after the runs, on the loaded store and on an empty one after the same
 *   warm-up; `rss_mb_per_100k` = the difference scaled to 100,000 entries (process RSS only;
 *   the PostgreSQL server's own memory is not included for that backend).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
/* global URL, fetch */
import autocannon from 'autocannon';
import pg from 'pg';
import { median, percentile, round } from './lib.mjs';
import { mulberry32 } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const OUT = path.join(here, 'out');
const D = 384;
const WRITERS = 32;
const QUERY_POOL = 200;
const BASE_POOL = 600;
const DATA_VERSION = 1;

// ---- text and vectors -------------------------------------------------------------------------

const prng = mulberry32;
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];
const PEOPLE = ['Ana', 'Ben', 'Chen', 'Dara', 'Eli', 'Farah', 'Goran', 'Hana', 'Ivo', 'Jun', 'Kai', 'Lea'];
const TOPICS = [
  'the quarterly budget', 'the database migration', 'the hiring plan', 'the flight to Lisbon',
  'the dentist appointment', 'the kitchen renovation', 'the security audit', 'the marketing launch',
  'the school trip', 'the car insurance', 'the team offsite', 'the tax return', 'the API redesign',
  'the wedding gift', 'the server outage', 'the gym membership', 'the book club', 'the rent increase',
  'the conference talk', 'the garden project', 'the laptop repair', 'the vendor contract',
  'the onboarding docs', 'the holiday schedule', 'the piano lessons',
];
const FACTS = [
  'prefers to discuss {t} on Monday mornings', 'is worried about {t}', 'owns {t} until March',
  'asked for a summary of {t}', 'wants reminders about {t} every Friday',
  'said {t} is blocked on legal review', 'finished the first draft of {t}',
  'needs approval from finance for {t}', 'moved {t} to next quarter', 'likes short updates on {t}',
  'disagrees with the timeline for {t}', 'is the contact person for {t}',
];
const QUESTIONS = [
  'what does {p} think about {t}?', 'who is responsible for {t}?', 'when is {t} due?',
  'any open questions about {t}?', 'what did {p} say last week about {t}?',
  'how should I update {p} on {t}?', 'is {t} blocked?', 'summarise what we know about {t}',
];
const fill = (tpl, r) => tpl.replace('{t}', pick(r, TOPICS)).replace('{p}', pick(r, PEOPLE));

function sentences(n, seed) {
  const r = prng(seed);
  const seen = new Set();
  while (seen.size < n) seen.add(`${pick(r, PEOPLE)} ${fill(pick(r, FACTS), r)}`);
  return [...seen];
}
function questions(n, seed) {
  const r = prng(seed);
  const seen = new Set();
  while (seen.size < n) seen.add(fill(pick(r, QUESTIONS), r));
  return [...seen];
}

const normalise = (v) => {
  let s = 0;
  for (const x of v) s += x * x;
  s = Math.sqrt(s);
  return v.map((x) => x / s);
};
/** Base vector + Gaussian-ish jitter (cosine to the base ≈ 0.94; two jitters ≈ 0.89 < 0.97). */
export function jitter(base, r, sigma = 0.018) {
  const v = new Float32Array(D);
  for (let i = 0; i < D; i++) v[i] = base[i] + sigma * (r() + r() + r() - 1.5) * 2;
  return normalise(v);
}
export const vecJson = (v) => '[' + Array.from(v, (x) => x.toFixed(5)).join(',') + ']';

/** Real MiniLM vectors of BASE_POOL sentences and of the query pool, cached on disk. */
export async function embedPools(log) {
  const bases = sentences(BASE_POOL, 1);
  const qs = questions(QUERY_POOL, 2);
  const key = createHash('sha256')
    .update(JSON.stringify({ bases, qs, v: DATA_VERSION }))
    .digest('hex')
    .slice(0, 12);
  const file = path.join(OUT, `load-vectors-${key}.json`);
  if (existsSync(file)) {
    const j = JSON.parse(readFileSync(file, 'utf8'));
    return { bases, qs, baseVecs: j.bases.map((a) => Float32Array.from(a)), queryVecs: j.qs.map((a) => Float32Array.from(a)) };
  }
  log(`embedding ${bases.length + qs.length} pool texts with the real model (cached for later runs)`);
  const { LocalMiniLmEmbedder } = await import('../dist/adapters/embeddings/local-minilm.js');
  const e = new LocalMiniLmEmbedder();
  const baseVecs = await e.embed(bases);
  const queryVecs = await e.embed(qs);
  mkdirSync(OUT, { recursive: true });
  writeFileSync(
    file,
    JSON.stringify({ bases: baseVecs.map((v) => Array.from(v)), qs: queryVecs.map((v) => Array.from(v)) }),
  );
  return { bases, qs, baseVecs, queryVecs };
}

// ---- store and server -----------------------------------------------------------------------

export async function pgSchemaUrl(base, schema) {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await c.query(`CREATE SCHEMA ${schema}`);
  await c.end();
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${schema},public`);
  return u.toString();
}
export async function dropSchema(base, schema) {
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await c.end();
}

/** Principals (one searcher, WRITERS writers) and `n` signed entries of the searcher. */
export async function buildStore({ dataDir, postgres, n, pools, log }) {
  const { Memory } = await import('../dist/index.js');
  const m = await Memory.open({ dataDir, ...(postgres === undefined ? {} : { postgres }) });
  // The bulk load commits through the ledger directly (the store's fixture, not a measured
  // write): a second ledger over the memory's storage, its committer (issue 17: `Memory.ledger`
  // cannot write; benches are outside src and its dependency rule).
  const { Ledger } = await import('../dist/memory/log/ledger.js');
  const { committerOf } = await import('../dist/memory/log/commit.js');
  const { KeyFileSource } = await import('../dist/adapters/keyfile/keyfile.js');
  const { systemClock, systemRandom } = await import('../dist/adapters/system/index.js');
  try {
    const raw = await Ledger.open({ storage: m.storageBackend, keys: new KeyFileSource(path.resolve(dataDir)), clock: systemClock, random: systemRandom });
    const commit = committerOf(raw);
    const searcher = await m.createPrincipal('user', 'bench-searcher');
    const writers = [];
    for (let i = 0; i < WRITERS; i++) writers.push(await m.createPrincipal('user', `bench-writer-${i}`));
    const r = prng(3);
    let next = 0;
    const t0 = performance.now();
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= n) return;
        const b = i % pools.bases.length;
        await commit.write(
          {
            writer: searcher.id,
            content: `${pools.bases[b]} (note ${i})`,
            tier: 'USER_OBSERVED',
            kind: 'fact',
          },
          { embedding: jitter(pools.baseVecs[b], r) },
        );
        if (i > 0 && i % 5000 === 0) log(`  ${i}/${n} entries`);
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    await raw.drain();
    await m.ledger.checkpoint();
    const idx = await m.storageBackend.maintainVectorIndex?.();
    const loadS = (performance.now() - t0) / 1000;
    log(`store: ${n} entries in ${loadS.toFixed(1)} s${idx?.lists ? `, IVFFlat lists=${idx.lists}` : ''}`);
    return { searcher, writers, loadS };
  } finally {
    await m.close();
  }
}

export function readProc(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const ticks = Number(stat[11]) + Number(stat[12]); // utime + stime
    // The main (HTTP) thread alone: its task has the process's id (PGlite may run in a worker).
    const main = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { rssMb: rssKb / 1024, cpuS: ticks / 100, mainCpuS: (Number(main[11]) + Number(main[12])) / 100 };
  } catch {
    return { rssMb: NaN, cpuS: NaN, mainCpuS: NaN };
  }
}

/** `memwarden serve` in a child process; resolves with its URL once listening. */
export function startServer({ dataDir, postgres, extraArgs = [], nodeArgs = [] }) {
  const args = [
    ...nodeArgs,
    path.join(root, 'dist/cli/main.js'),
    'serve',
    '--data', dataDir,
    '--port', '0',
    '--accept-client-embeddings',
    ...(postgres === undefined ? [] : ['--postgres', postgres]),
    ...extraArgs,
  ];
  const env = { ...process.env };
  delete env.MEMWARDEN_EMBEDDER; // the real model, always
  delete env.MEMWARDEN_DATABASE_URL;
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d) => {
      buf += d;
      const m = /memwarden listening on (\S+)/.exec(buf);
      if (m) {
        child.stdout.off('data', onData);
        child.stdout.on('data', () => undefined); // keep draining the request log
        resolve({
          url: m[1],
          pid: child.pid,
          stop: () =>
            new Promise((res) => {
              child.once('exit', () => res());
              child.kill('SIGTERM');
            }),
        });
      } else if (buf.length > 1e6) buf = buf.slice(-4096);
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${stderr.slice(-2000)}`)));
  });
}

export async function post(url, pathName, key, body) {
  const res = await fetch(url + pathName, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const j = await res.json();
  if (!res.ok) throw new Error(`${pathName} ${res.status}: ${JSON.stringify(j).slice(0, 300)}`);
  return j;
}

export async function scrapeCounter(url, name) {
  const text = await (await fetch(url + '/metrics')).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name)) sum += Number(line.split(' ').pop());
  return sum;
}

/** One fixed-duration autocannon run. */
export function cannon({ url, connections, duration, path: p, body, key }) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(
      {
        // Several servers: autocannon spreads the connections over them round robin, and
        // latencies go into one histogram.
        url: Array.isArray(url) ? url.map((u) => u + p) : url + p,
        connections,
        duration,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        requests: [
          {
            method: 'POST',
            path: p,
            setupRequest: (req) => ({
              ...req,
              headers: { ...req.headers, 'content-type': 'application/json', authorization: `Bearer ${key()}` },
              body: body(),
            }),
          },
        ],
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    inst.on('error', () => undefined);
  });
}

async function measure(server, { op, connections, duration, mk, log }) {
  const load1 = os.loadavg()[0];
  const p0 = readProc(server.pid);
  const client0 = process.cpuUsage();
  const r = await cannon({ url: server.url, connections, duration, ...mk });
  const p1 = readProc(server.pid);
  const client = process.cpuUsage(client0);
  const cpuS = p1.cpuS - p0.cpuS;
  const mainCpuS = p1.mainCpuS - p0.mainCpuS;
  const ok = r['2xx'];
  const row = {
    op,
    connections,
    per_s: round(ok / duration, 1),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    non2xx: r.non2xx,
    // Which non-2xx answers (e.g. 409: a near-duplicate refused by the write path's defence).
    non2xx_status: Object.entries(r.statusCodeStats ?? {})
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, v]) => `${code}:${v.count}`)
      .join(' '),
    errors: r.errors + r.timeouts,
    server_cpu_ms_per_req: ok > 0 ? round((cpuS * 1000) / ok, 3) : null,
    // Of which on the HTTP thread (the rest: the PGlite worker, GC and other helper threads).
    server_main_cpu_ms_per_req: ok > 0 ? round((mainCpuS * 1000) / ok, 3) : null,
    // The load generator shares the two cores: its CPU per request is the server's budget cut.
    client_cpu_ms_per_req: ok > 0 ? round((client.user + client.system) / 1000 / ok, 3) : null,
    load1: round(load1, 2),
  };
  log(
    `${op.padEnd(10)} c=${String(connections).padStart(2)}  ${String(row.per_s).padStart(7)}/s  ` +
      `p50 ${row.p50_ms} ms  p99 ${row.p99_ms} ms  non2xx ${row.non2xx}${row.non2xx_status === '' ? '' : ` (${row.non2xx_status})`}  errors ${row.errors}  ` +
      `server CPU ${row.server_cpu_ms_per_req} ms/req (HTTP thread ${row.server_main_cpu_ms_per_req})  client CPU ${row.client_cpu_ms_per_req} ms/req  load ${row.load1}`,
  );
  return row;
}

/** Request generators for the three operations. */
export function makers(pools, store) {
  const r = prng(9);
  const searchKey = () => store.searcher.apiKey;
  const qVecJson = pools.queryVecs.map(vecJson);
  const baseJson = pools.baseVecs.length;
  // Pre-render a pool of jittered write vectors (rendering 384 floats per request would make the
  // client, which shares the two cores, the bottleneck). Its size is prime, not a multiple of
  // WRITERS: with 2048, each writer got the very same vector back every 64 of its writes, and
  // past 2,048 writes a run measured near-duplicate refusals (409), not writes.
  const writeVecs = Array.from({ length: 2039 }, (_, i) => vecJson(jitter(pools.baseVecs[i % baseJson], r)));
  let w = 0;
  let seq = 0;
  const run = Date.now().toString(36);
  return {
    search: {
      path: '/v1/memories/search',
      key: searchKey,
      body: () => JSON.stringify({ query: pools.qs[Math.floor(r() * pools.qs.length)], limit: 10 }),
    },
    search_vec: {
      path: '/v1/memories/search',
      key: searchKey,
      body: () => {
        const k = Math.floor(r() * pools.qs.length);
        return `{"query":${JSON.stringify(pools.qs[k])},"limit":10,"embedding":${qVecJson[k]}}`;
      },
    },
    write: {
      path: '/v1/memories',
      key: () => store.writers[w++ % store.writers.length].apiKey,
      body: () => {
        const i = seq++;
        const b = i % pools.bases.length;
        return `{"content":${JSON.stringify(`${pools.bases[b]} (run ${run}, write ${i})`)},"embedding":${writeVecs[i % writeVecs.length]}}`;
      },
    },
    write_embed: {
      path: '/v1/memories',
      key: () => store.writers[w++ % store.writers.length].apiKey,
      body: () => {
        const i = seq++;
        return JSON.stringify({ content: `${pools.bases[i % pools.bases.length]} (run ${run}, server-embedded ${i})` });
      },
    },
  };
}

/** Ask every pool query once, sequentially: the cold latency (model included). */
export async function warmQueries(server, pools, store, full) {
  const ts = [];
  for (const q of pools.qs) {
    const t = performance.now();
    const j = await post(server.url, '/v1/memories/search', store.searcher.apiKey, { query: q, limit: 10 });
    ts.push(performance.now() - t);
    if (full && j.results.length !== 10) throw new Error(`expected 10 results, got ${j.results.length}`);
  }
  return ts.slice(1); // the first also loaded the model
}

/** Build a store, start the server, warm up, run `plan`, measure RSS; returns rows + figures. */
export async function session({ backend, n, pools, plan, duration, log, pgBase }) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `mw-load-${backend}-`));
  const schema = `mw_load_${process.pid}_${n}`;
  const postgres = backend === 'postgres' ? await pgSchemaUrl(pgBase, schema) : undefined;
  let server;
  try {
    const store = await buildStore({ dataDir, postgres, n, pools, log });
    // LOAD_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": profile the server under load.
    const nodeArgs = (process.env.LOAD_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    // LOAD_SERVER_ARGS="--pglite-worker": extra `serve` flags (A/B runs).
    const extraArgs = (process.env.LOAD_SERVER_ARGS ?? '').split(' ').filter((a) => a !== '');
    server = await startServer({ dataDir, postgres, nodeArgs, extraArgs });
    log(`${backend}: server pid ${server.pid} at ${server.url}`);
    const mk = makers(pools, store);
    const coldMs = await warmQueries(server, pools, store, n > 0);
    // Warm-up: a short run of each operation (JIT, caches, verification of the hot entries).
    for (const op of new Set(['search', 'write', ...plan.map((p) => p.op)])) {
      await cannon({ url: server.url, connections: 8, duration: 2, ...mk[op] });
    }
    // The read model's partitions loaded and indexed (see bench/load-pg.mjs readyModels).
    if (process.env.LOAD_WAIT_READY !== '0') await (await import('./load-pg.mjs')).readyModels([server], log);
    const rows = [];
    let hitRate;
    for (const { op, connections } of plan) {
      const misses0 = op === 'search' ? await scrapeCounter(server.url, 'memory_embedding_duration_seconds_count') : 0;
      const row = await measure(server, { op, connections, duration, mk: mk[op], log });
      if (op === 'search') {
        const misses = (await scrapeCounter(server.url, 'memory_embedding_duration_seconds_count')) - misses0;
        const total = row.per_s * duration;
        hitRate = total > 0 ? round(1 - misses / total, 4) : undefined;
        row.cache_hit_rate = hitRate;
      }
      rows.push({ backend, ...row });
    }
    const rssMb = readProc(server.pid).rssMb;
    const entries = await scrapeCounter(server.url, 'memory_entries_current');
    return { rows, coldMs, rssMb, entries, hitRate, loadS: store.loadS };
  } finally {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (postgres !== undefined) await dropSchema(pgBase, schema).catch(() => undefined);
  }
}

/** RSS of a server on an empty store after the same kind of warm-up. */
async function emptyStore({ backend, pools, log, pgBase }) {
  const s = await session({
    backend,
    n: 0,
    pools,
    plan: [],
    duration: 1,
    log: () => undefined,
    pgBase,
  });
  log(`${backend}: empty-store server RSS ${s.rssMb.toFixed(0)} MB (${s.entries} entries after warm-up)`);
  return s;
}

// ---- report ---------------------------------------------------------------------------------

export function table(rows) {
  const cols = ['backend', 'op', 'connections', 'per_s', 'p50_ms', 'p99_ms', 'non2xx', 'errors', 'server_cpu_ms_per_req', 'client_cpu_ms_per_req', 'load1'];
  const w = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (vals) => vals.map((v, i) => String(v ?? '').padStart(w[i])).join('  ');
  return [line(cols), line(w.map((n) => '-'.repeat(n))), ...rows.map((r) => line(cols.map((c) => r[c])))].join('\n');
}

/** Two panels (throughput, p99 latency) against connections, one line per backend × op. */
export function svgChart(rows, title) {
  const series = new Map();
  for (const r of rows) {
    const k = `${r.backend} ${r.op}`;
    if (!series.has(k)) series.set(k, []);
    series.get(k).push(r);
  }
  const conns = [...new Set(rows.map((r) => r.connections))].sort((a, b) => a - b);
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#17becf', '#7f7f7f'];
  const W = 460;
  const H = 300;
  const M = { l: 60, r: 15, t: 30, b: 40 };
  const panel = (x0, metric, label, target) => {
    const maxY = Math.max(target ?? 0, ...rows.map((r) => r[metric] ?? 0)) * 1.1 || 1;
    const px = (c) => x0 + M.l + (conns.indexOf(c) / Math.max(1, conns.length - 1)) * (W - M.l - M.r);
    const py = (v) => M.t + (1 - v / maxY) * (H - M.t - M.b);
    let s = `<text x="${x0 + W / 2}" y="18" text-anchor="middle" font-weight="bold">${label}</text>`;
    s += `<line x1="${x0 + M.l}" y1="${H - M.b}" x2="${x0 + W - M.r}" y2="${H - M.b}" stroke="#000"/>`;
    s += `<line x1="${x0 + M.l}" y1="${M.t}" x2="${x0 + M.l}" y2="${H - M.b}" stroke="#000"/>`;
    for (let i = 0; i <= 4; i++) {
      const v = (maxY * i) / 4;
      s += `<text x="${x0 + M.l - 5}" y="${py(v) + 4}" text-anchor="end" font-size="10">${Math.round(v)}</text>`;
      s += `<line x1="${x0 + M.l}" y1="${py(v)}" x2="${x0 + W - M.r}" y2="${py(v)}" stroke="#eee"/>`;
    }
    for (const c of conns) s += `<text x="${px(c)}" y="${H - M.b + 15}" text-anchor="middle" font-size="10">${c}</text>`;
    s += `<text x="${x0 + W / 2}" y="${H - 5}" text-anchor="middle" font-size="11">connections</text>`;
    if (target !== undefined) {
      s += `<line x1="${x0 + M.l}" y1="${py(target)}" x2="${x0 + W - M.r}" y2="${py(target)}" stroke="#999" stroke-dasharray="4 3"/>`;
    }
    [...series.entries()].forEach(([, pts], i) => {
      const d = pts.map((p, j) => `${j === 0 ? 'M' : 'L'}${px(p.connections).toFixed(1)},${py(p[metric] ?? 0).toFixed(1)}`).join(' ');
      s += `<path d="${d}" fill="none" stroke="${colors[i % colors.length]}" stroke-width="2"/>`;
      for (const p of pts) s += `<circle cx="${px(p.connections)}" cy="${py(p[metric] ?? 0)}" r="3" fill="${colors[i % colors.length]}"/>`;
    });
    return s;
  };
  let legend = '';
  [...series.keys()].forEach((k, i) => {
    legend += `<rect x="${20 + (i % 4) * 220}" y="${H + 10 + Math.floor(i / 4) * 18}" width="12" height="3" fill="${colors[i % colors.length]}"/>`;
    legend += `<text x="${38 + (i % 4) * 220}" y="${H + 15 + Math.floor(i / 4) * 18}" font-size="11">${k}</text>`;
  });
  const total = H + 20 + Math.ceil(series.size / 4) * 18 + 20;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${total}" font-family="sans-serif">` +
    `<title>${title}</title><rect width="100%" height="100%" fill="#fff"/>` +
    panel(0, 'per_s', 'requests/s (2xx)') +
    panel(W, 'p99_ms', 'p99 latency (ms), dashed: 50 ms target', 50) +
    legend +
    `<text x="10" y="${total - 5}" font-size="10" fill="#555">${title}</text></svg>`
  );
}

// ---- entry points ---------------------------------------------------------------------------

function opts(o) {
  return {
    n: o.entries ?? 10_000,
    duration: o.duration ?? 6,
  };
}

/** The `npm run bench` group: embedded store, 32 connections. */
export async function run({ log, entries, duration } = {}) {
  const { n, duration: dur } = opts({ entries, duration });
  const pools = await embedPools(log);
  const plan = [
    { op: 'search', connections: 32 },
    { op: 'search_vec', connections: 32 },
    { op: 'write', connections: 32 },
    { op: 'write_embed', connections: 8 },
  ];
  const s = await session({ backend: 'pglite', n, pools, plan, duration: dur, log });
  const by = (op) => s.rows.find((r) => r.op === op);
  const [search, vec, write, embed] = ['search', 'search_vec', 'write', 'write_embed'].map(by);
  const figures = {
    load_store_entries: n,
    search_per_s: search.per_s,
    writes_per_s: write.per_s,
    p99_ms: Math.max(search.p99_ms, write.p99_ms),
    search_p50_ms: search.p50_ms,
    search_p99_ms: search.p99_ms,
    write_p50_ms: write.p50_ms,
    write_p99_ms: write.p99_ms,
    write_server_cpu_ms: write.server_cpu_ms_per_req,
    write_http_thread_cpu_ms: write.server_main_cpu_ms_per_req,
    search_cache_hit_rate: s.hitRate,
    search_cold_p50_ms: round(median(s.coldMs), 2),
    search_cold_p99_ms: round(percentile(s.coldMs, 99), 2),
    search_vec_per_s: vec.per_s,
    search_vec_p99_ms: vec.p99_ms,
    writes_server_embed_per_s: embed.per_s,
    writes_server_embed_p99_ms: embed.p99_ms,
    load_non2xx: s.rows.reduce((a, r) => a + r.non2xx + r.errors, 0),
    load_server_rss_mb: round(s.rssMb, 1),
    load_avg_1m: round(os.loadavg()[0], 2),
  };
  return {
    figures,
    targets: [
      { name: 'search_per_s at 32 connections', value: figures.search_per_s, op: '>=', limit: 2000, ok: figures.search_per_s >= 2000 },
      { name: 'writes_per_s at 32 connections', value: figures.writes_per_s, op: '>=', limit: 1500, ok: figures.writes_per_s >= 1500 },
      { name: 'p99_ms at 32 connections (worse of search, write)', value: figures.p99_ms, op: '<=', limit: 50, ok: figures.p99_ms <= 50 },
    ],
  };
}

/** `npm run bench:load`: the sweep. */
async function sweep() {
  const { values } = parseArgs({
    options: {
      entries: { type: 'string', default: '10000' },
      duration: { type: 'string', default: '5' },
      connections: { type: 'string', default: '1,8,32,64' },
      backends: { type: 'string', default: 'pglite,postgres' },
      json: { type: 'boolean', default: false },
    },
  });
  const log = (m) => process.stderr.write(`load: ${m}\n`);
  const n = Number(values.entries);
  const duration = Number(values.duration);
  const conns = values.connections.split(',').map(Number);
  const backends = values.backends.split(',');
  let pgBase;
  if (backends.includes('postgres')) {
    pgBase = process.env.MEMWARDEN_TEST_DATABASE_URL;
    if (pgBase === undefined || pgBase === '') {
      log('starting the PostgreSQL test server (scripts/pg-test-server.sh)');
      const r = spawn('bash', [path.join(root, 'scripts/pg-test-server.sh')], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      r.stdout.on('data', (d) => (out += d));
      await new Promise((res) => r.once('exit', res));
      pgBase = out.trim();
    }
  }
  const pools = await embedPools(log);
  const started = new Date();
  const rows = [];
  const memory = {};
  const extra = {};
  for (const backend of backends) {
    const plan = [];
    for (const op of ['search', 'search_vec', 'write']) for (const c of conns) plan.push({ op, connections: c });
    log(`${backend}: ${n} entries, ${plan.length} runs of ${duration} s`);
    const s = await session({ backend, n, pools, plan, duration, log, pgBase });
    rows.push(...s.rows);
    const empty = await emptyStore({ backend, pools, log, pgBase });
    const dn = s.entries - empty.entries;
    memory[backend] = {
      entries_loaded: s.entries,
      rss_loaded_mb: round(s.rssMb, 1),
      entries_empty: empty.entries,
      rss_empty_mb: round(empty.rssMb, 1),
      rss_mb_per_100k: dn > 0 ? round(((s.rssMb - empty.rssMb) * 100_000) / dn, 1) : null,
    };
    extra[backend] = {
      store_load_s: round(s.loadS, 1),
      search_cold_p50_ms: round(median(s.coldMs), 2),
      search_cache_hit_rate: s.hitRate,
    };
  }
  const machine = `${os.cpus()[0]?.model ?? 'cpu'}, ${os.cpus().length} cores, node ${process.version}`;
  const title = `memwarden HTTP load — ${n} entries, ${duration} s per point, ${machine}, ${started.toISOString()}`;
  mkdirSync(OUT, { recursive: true });
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const svg = svgChart(rows, title);
  const svgFile = path.join(OUT, `load-${stamp}.svg`);
  const htmlFile = path.join(OUT, `load-${stamp}.html`);
  writeFileSync(svgFile, svg);
  const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');
  writeFileSync(
    htmlFile,
    `<!doctype html><meta charset="utf-8"><title>memwarden load</title>` +
      `<h1>memwarden HTTP load</h1><p>${esc(title)}</p>${svg}` +
      `<h2>Runs</h2><pre>${esc(table(rows))}</pre>` +
      `<h2>Memory and search cache</h2><pre>${esc(JSON.stringify({ memory, extra }, null, 2))}</pre>` +
      `<p>Method: see the header of bench/load.mjs. Load average (1 min) is recorded per run: the machine is shared.</p>`,
  );
  if (values.json) {
    process.stdout.write(JSON.stringify({ entries: n, duration, rows, memory, extra, svg: svgFile, html: htmlFile }) + '\n');
  } else {
    console.log(title);
    console.log(table(rows));
    console.log('\nmemory (server process RSS):');
    for (const [b, m] of Object.entries(memory))
      console.log(
        `  ${b}: ${m.rss_loaded_mb} MB with ${m.entries_loaded} live entries, ${m.rss_empty_mb} MB with ${m.entries_empty} → ${m.rss_mb_per_100k} MB per 100,000 entries`,
      );
    for (const [b, e] of Object.entries(extra))
      console.log(`  ${b}: store load ${e.store_load_s} s, cold query p50 ${e.search_cold_p50_ms} ms (real model), cache hit rate ${e.search_cache_hit_rate}`);
    console.log(`\nchart: ${path.relative(process.cwd(), svgFile)}\nreport: ${path.relative(process.cwd(), htmlFile)}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await sweep();
}
