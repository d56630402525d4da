/**
 * Group `partition` (session 3, the read model's partition loads, ADR 0018 and its loader
 * addendum): the CPU time (process.cpuUsage: this process, all threads — PGlite's WebAssembly
 * runs on the main thread, so its work is included) of loading one principal's partition from
 * an embedded PGlite store of 10,000 and of 100,000 signed entries (384-d, clustered), one run
 * each on whatever else the machine is doing:
 *   partition_fetch_scan_cold_{10k,100k}_ms — the first `scanEntries` pass after opening the
 *     store (pages read from disk into PGlite, decoder not yet compiled: what a restart pays)
 *   partition_fetch_list_{10k,100k}_ms — then paging `listEntries` in the principal's view
 *     (the loader before `scanEntries`: text vectors, hex bytea)
 *   partition_fetch_scan_{10k,100k}_ms — then paging `scanEntries` (binary result rows), as
 *     warm as the list pass; target ≤ 300 ms per 10,000 entries
 *   partition_index_inserts_{10k,100k}_ms — adding the fetched vectors to a core/vector index
 *     one by one (IVF trainings at every doubling, in slices, included)
 *   partition_index_bulk_{10k,100k}_ms — the same vectors in one `addMany`, as the loader adds
 *     them, with the one training it plans run to the end (the loader runs it in idle turns
 *     after the load, so `partition_load_*` does not include it)
 *   partition_load_{list,scan}_{10k,100k}_ms — a whole `ReadModel` load (first search of the
 *     principal, fetch + index inserts + bookkeeping), without and with `scanEntries`
 *   partition_first_search_{list,scan}_10k_ms — the principal's first `Memory.search` as
 *     `serve` runs it (read model and default detection, whose calibration reads the
 *     principal's own reference too), without and with `scanEntries`
 * Ratio: partition_fetch_list_over_scan_{10k,100k}.
 * Stores: the 10k store is built once (Ledger writes) and cached under bench/out/; the 100k
 * store is the `store` group's cached one (built there when absent).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PgliteBackend } from '../dist/adapters/pglite/index.js';
import { KeyFileSource } from '../dist/adapters/keyfile/keyfile.js';
import { systemClock, systemRandom } from '../dist/adapters/system/index.js';
import { createVectorIndex } from '../dist/core/vector/index.js';
import { Ledger } from '../dist/memory/log/ledger.js';
import { Memory } from '../dist/memory/memory.js';
import { readModelOf, withReadModel } from '../dist/memory/read/read-model.js';
import { round } from './lib.mjs';
import { buildStore, dataset } from './store.mjs';
import { committerOf } from '../dist/memory/log/commit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const PAGE = 1000;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function cpu(fn) {
  const c0 = cpuMs();
  const r = await fn();
  return { ms: cpuMs() - c0, r };
}

/** The cached 10k store (one principal, the store group's data and write path). */
async function build10k(log, data) {
  const N = 10_000;
  const dir = path.join(here, 'out', 'partition-10k-v1');
  const metaFile = path.join(dir, 'meta.json');
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
    if (meta.done === true && meta.n === N) return { dir, principal: meta.principal };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`building the ${N}-entry store in ${path.relative(process.cwd(), dir)}`);
  const storage = await PgliteBackend.open({ dataDir: path.join(dir, 'pg') });
  const ledger = await Ledger.open({
    storage,
    keys: new KeyFileSource(path.join(dir, 'keys')),
    clock: systemClock,
    random: systemRandom,
  });
  const p = await ledger.registerPrincipal('user', 'bench');
  let next = 0;
  await Promise.all(
    Array.from({ length: 128 }, async () => {
      for (;;) {
        const i = next++;
        if (i >= N) return;
        await committerOf(ledger).write(
          {
            writer: p.id,
            content: `note ${i} about topic ${i % 200}: the user mentioned detail ${i * 7919} in passing`,
            tier: 'USER_OBSERVED',
            kind: 'fact',
          },
          { embedding: data.point(i) },
        );
      }
    }),
  );
  await ledger.checkpoint();
  await ledger.close();
  writeFileSync(metaFile, JSON.stringify({ done: true, n: N, principal: p.id }));
  return { dir, principal: p.id };
}

async function pageAll(read) {
  const rows = [];
  let after = -1;
  for (;;) {
    const page = await read({ afterLeafIndex: after, limit: PAGE });
    for (const e of page) rows.push(e);
    if (page.length < PAGE) return rows;
    after = page[page.length - 1].leafIndex;
  }
}

/** `root` without `scanEntries` (root and principal views): the loader's listEntries path. */
function withoutScan(root) {
  const hide = (v) =>
    new Proxy(v, {
      get(t, k) {
        if (k === 'scanEntries') return undefined;
        if (k === 'asPrincipal') return (p) => hide(t.asPrincipal(p));
        const x = Reflect.get(t, k, t);
        return typeof x === 'function' ? x.bind(t) : x;
      },
    });
  return hide(root);
}

/** `root` whose close() is a no-op (Memory.close closes its ledger's storage). */
function keepOpen(root) {
  return new Proxy(root, {
    get(t, k) {
      if (k === 'close') return async () => undefined;
      const x = Reflect.get(t, k, t);
      return typeof x === 'function' ? x.bind(t) : x;
    },
  });
}

async function measure(log, figures, ratios, label, { dir, principal }, data) {
  const storage = await PgliteBackend.open({
    dataDir: path.join(dir, 'pg'),
    vectorIndex: { auto: false },
  });
  try {
    const view = storage.asPrincipal(principal);
    // The first pass after opening the store is what a restart pays: the database's pages come
    // from disk into PGlite's buffers and the decoder is not compiled yet.
    log(`${label}: first (cold) fetch with scanEntries`);
    const cold = await cpu(async () => (await pageAll((o) => view.scanEntries(o))).length);
    await view.listEntries({ limit: 10 }); // the text path's statements too
    log(`${label}: fetch with listEntries`);
    const list = await cpu(async () => (await pageAll((o) => view.listEntries(o))).length);
    log(`${label}: fetch with scanEntries`);
    const scan = await cpu(() => pageAll((o) => view.scanEntries(o)));
    const n = scan.r.length;
    if (n > list.r) throw new Error('scan returned more rows than the list');
    log(`${label}: ${n} entries; index inserts`);
    const idx = await cpu(async () => {
      const index = createVectorIndex(384);
      scan.r.forEach((e, i) => index.add(i, e.embedding));
      return index.size;
    });
    const bulk = await cpu(async () => {
      const index = createVectorIndex(384);
      index.addMany(scan.r.map((_, i) => i), scan.r.map((e) => e.embedding));
      while (index.maintain(Infinity));
      return index.size;
    });
    scan.r = undefined; // let the rows go before the model loads hold their own
    const q = { embedding: data.query(0), nowNs: systemClock.nowNs(), limit: 10 };
    const loads = {};
    for (const [k, root] of [
      ['list', withoutScan(storage)],
      ['scan', storage],
    ]) {
      log(`${label}: whole read-model load (${k})`);
      const model = readModelOf(withReadModel(root, { maxEntries: 200_000 }));
      const r = await cpu(() => model.search(principal, q));
      if (r.r === undefined || r.r.length !== 10 || model.size < n)
        throw new Error(`the ${k} load did not serve the search`);
      loads[k] = r.ms;
    }
    figures[`partition_entries_${label}`] = n;
    figures[`partition_fetch_list_${label}_ms`] = round(list.ms, 0);
    figures[`partition_fetch_scan_${label}_ms`] = round(scan.ms, 0);
    figures[`partition_fetch_scan_cold_${label}_ms`] = round(cold.ms, 0);
    figures[`partition_index_inserts_${label}_ms`] = round(idx.ms, 0);
    figures[`partition_index_bulk_${label}_ms`] = round(bulk.ms, 0);
    figures[`partition_load_list_${label}_ms`] = round(loads.list, 0);
    figures[`partition_load_scan_${label}_ms`] = round(loads.scan, 0);
    ratios[`partition_fetch_list_over_scan_${label}`] = round(list.ms / scan.ms, 1);
    if (label === '10k') {
      // The first Memory.search of the principal as `serve` runs it (read model + default
      // detection, whose calibration reads the principal's own reference), with and without
      // scanEntries. It appends a few query-history audit events to the cached store.
      const kept = keepOpen(storage);
      for (const [k, root] of [
        ['list', withoutScan(kept)],
        ['scan', kept],
      ]) {
        log(`${label}: first Memory.search with default detection (${k})`);
        figures[`partition_first_search_${k}_${label}_ms`] = round(
          await firstSearch(root, dir, principal, data),
          0,
        );
      }
    }
    return { n, scanMs: scan.ms };
  } finally {
    await storage.close();
  }
}

/** CPU ms of a principal's first Memory.search over `root` (a fresh ledger and read model). */
async function firstSearch(root, dir, principal, data) {
  const storage = withReadModel(root, { maxEntries: 200_000 });
  const ledger = await Ledger.open({
    storage,
    keys: new KeyFileSource(path.join(dir, 'keys')),
    clock: systemClock,
    random: systemRandom,
  });
  const q = data.query(1);
  const embedder = {
    name: 'bench-fixed',
    dimensions: 384,
    // The search query, and a deterministic stand-in for detection's own reference texts.
    embed: async (texts) =>
      texts.map((t) =>
        t === 'query' ? q : data.query([...t].reduce((a, c) => (a * 31 + c.charCodeAt(0)) >>> 0, 7) % 997),
      ),
  };
  const memory = new Memory({
    ledger,
    storage,
    embedder,
    clock: systemClock,
    random: systemRandom,
    autoDetection: {},
  });
  try {
    const { ms, r } = await cpu(() => memory.search('query', { principal, limit: 10 }));
    if (r.results.length !== 10) throw new Error('the first search did not return 10 results');
    return ms;
  } finally {
    await memory.close(); // closes the ledger; the storage is the caller's
  }
}

export async function run({ log }) {
  const figures = {};
  const ratios = {};
  const targets = [];
  const data = dataset();
  for (const [label, build] of [
    ['10k', () => build10k(log, data)],
    ['100k', () => buildStore(log, data)],
  ]) {
    const store = await build();
    const { n, scanMs } = await measure(log, figures, ratios, label, store, data);
    targets.push({
      name: `partition_fetch_scan_${label} per 10,000 entries (ms CPU)`,
      value: round((scanMs * 10_000) / n, 0),
      op: '<=',
      limit: 300,
      ok: (scanMs * 10_000) / n <= 300,
    });
  }
  return { figures, ratios, targets };
}
