#!/usr/bin/env node
/**
 * `memwarden serve` as a new user meets it (issue 24): the real local embedding model, the
 * embedded store (PGlite in its worker thread), a fresh data folder with one user principal.
 * Measures, for the built CLI in `dist/` (and, with `MEMWARDEN_BENCH_BASELINE=/path/to/dist`,
 * for a second build in the same run):
 * - start-up: spawn → "listening" (ms), and the model load time serve logs (when it does);
 * - the first write, first search and second write over HTTP (ms, client side);
 * - resident memory (VmRSS) when listening and after those requests, and the peak (VmHWM), MiB.
 *
 * Standalone: `node bench/serve-startup.mjs [--json] [--runs N]`; also the `serve-startup`
 * group of `npm run bench`. Linux only (reads /proc/PID/status).
 */
/* global URL, fetch, setTimeout, clearTimeout */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const HERE = fileURLToPath(new URL('.', import.meta.url));

function vm(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 };
}

const round = (x, d = 0) => (Number.isFinite(x) ? Number(x.toFixed(d)) : null);
/** `firstWriteMs` → `first_write_ms`. */
const snake = (k) =>
  k
    .replace(/Ms$/, '_ms')
    .replace(/MiB$/, '_mib')
    .replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** One cold start of `dist`'s CLI: returns the figures (ms, MiB). */
async function once(dist) {
  const bin = join(dist, 'cli', 'main.js');
  const data = mkdtempSync(join(tmpdir(), 'mw-serve-startup-'));
  // Only the model differs from a user's first run: real model, no test switches.
  const env = { ...process.env, MEMWARDEN_DATABASE_URL: '' };
  delete env.MEMWARDEN_EMBEDDER;
  try {
    const add = spawnSync(
      process.execPath,
      [bin, 'principals', 'add', 'alice', '--kind', 'user', '--data', data],
      { env, encoding: 'utf8' },
    );
    if (add.status !== 0) throw new Error(`principals add failed: ${add.stderr}`);
    const key = JSON.parse(add.stdout).apiKey;
    const t0 = performance.now();
    const child = spawn(process.execPath, [bin, 'serve', '--data', data, '--port', '0'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let logs = '';
    child.stderr.on('data', (d) => (logs += d));
    const url = await new Promise((res, rej) => {
      const t = setTimeout(() => rej(new Error(`serve did not start: ${out}${logs}`)), 120_000);
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(t);
          res(m[1]);
        }
      });
      child.once('exit', (c) => rej(new Error(`serve exited ${c}: ${out}${logs}`)));
    });
    const startMs = performance.now() - t0;
    const atListen = vm(child.pid);
    const call = async (path, body) => {
      const s = performance.now();
      const r = await fetch(url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await r.text();
      if (r.status >= 300) throw new Error(`${path}: HTTP ${r.status}`);
      return performance.now() - s;
    };
    const firstWriteMs = await call('/v1/memories', {
      content: 'My favourite colour is teal',
      tier: 'USER_VERIFIED',
    });
    const firstSearchMs = await call('/v1/memories/search', { query: 'what colour do I like?' });
    const secondWriteMs = await call('/v1/memories', {
      content: 'I live in Lisbon',
      tier: 'USER_VERIFIED',
    });
    const after = vm(child.pid);
    const loadLine = /embedding model loaded in (\d+) ms/.exec(out + logs);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    return {
      startMs,
      modelLoadMs: loadLine === null ? NaN : Number(loadLine[1]),
      firstWriteMs,
      firstSearchMs,
      secondWriteMs,
      rssListenMiB: atListen.rssMiB,
      rssAfterMiB: after.rssMiB,
      peakMiB: after.hwmMiB,
    };
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/** Load and warm this process's fetch client on a throwaway local server, so its first-use cost is not timed as the server's. */
async function warmClient() {
  const srv = createServer((_q, r) => r.end('ok'));
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  await (await fetch(`http://127.0.0.1:${srv.address().port}/`, { method: 'POST', body: '{}' })).text();
  await new Promise((r) => srv.close(r));
}

async function measure(dist, runs, log) {
  await warmClient();
  const all = [];
  for (let i = 0; i < runs; i++) {
    log(`${dist}: cold start ${i + 1}/${runs}`);
    all.push(await once(dist));
  }
  const keys = Object.keys(all[0]);
  return Object.fromEntries(keys.map((k) => [k, median(all.map((r) => r[k]))]));
}

/** The `npm run bench` group: this build, and the baseline build if one is named. */
export async function run({ log = () => undefined, runs = 3 } = {}) {
  const figures = {};
  const ratios = {};
  const cur = await measure(resolve(HERE, '..', 'dist'), runs, log);
  for (const [k, v] of Object.entries(cur)) figures[`serve_${snake(k)}`] = round(v);
  const base = process.env.MEMWARDEN_BENCH_BASELINE;
  if (base !== undefined && base !== '') {
    const old = await measure(resolve(base), runs, log);
    for (const [k, v] of Object.entries(old)) figures[`serve_baseline_${snake(k)}`] = round(v);
    ratios.serve_first_write_new_over_baseline = round(cur.firstWriteMs / old.firstWriteMs, 3);
    ratios.serve_start_new_over_baseline = round(cur.startMs / old.startMs, 3);
    ratios.serve_rss_after_new_over_baseline = round(cur.rssAfterMiB / old.rssAfterMiB, 3);
  }
  return { figures, ratios };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { json: { type: 'boolean', default: false }, runs: { type: 'string', default: '3' } },
  });
  const out = await run({
    log: (m) => process.stderr.write(`serve-startup: ${m}\n`),
    runs: Number(values.runs),
  });
  if (values.json) process.stdout.write(JSON.stringify(out) + '\n');
  else
    for (const [k, v] of Object.entries({ ...out.figures, ...out.ratios }))
      console.log(`${k.padEnd(44)} ${v}`);
}
