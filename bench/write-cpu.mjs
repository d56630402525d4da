/**
 * Group `write-cpu` (issue 10, ADR 0026 addendum): the CPU a write costs the HTTP thread in
 * detection and the near-duplicate check, single process, no HTTP — measured the way the load
 * bench's write run exercises them: a writer principal's trusted reference growing from 312
 * memories by 50 writes per growth calibration up to the 1,000 kept, each write screened
 * (`AutoDetection.screenWrite`) and then stored (`stored`), each near-duplicate check
 * (`findNearDuplicate` through the read model) against the principal's stored entries. Data:
 * the load bench's MiniLM vectors (bench/out cache, `embedPools`) with its jitter, and its texts.
 *
 * Figures are process CPU time (`process.cpuUsage`) per operation, the fastest of `WCPU_ROUNDS`
 * (default 9) rounds (the least disturbed on a shared machine; `_median_` figures too):
 * - `wcpu_grow_ms`: one growth recalibration (the `#calibrate` the write run schedules);
 * - `wcpu_screen_us`: one write's screening (markers, rules, the instruction screen — the
 *   writes carry real MiniLM vectors and the embedder is named as that model, so its MiniLM
 *   term runs — MemSAD, MemSAD+, probes); with a baseline, `wcpu_screen_added_us` is what the
 *   new build adds per write (issue 22: ≤ 300 µs);
 * - `wcpu_neardup_us`: one near-duplicate check (1,000 stored entries of the principal);
 * - `wcpu_add_us`: one whole `Memory.add` (issue 17: the write path's CPU per write) — limits,
 *   tier, TTL, lineage, detection screening, the near-duplicate check through the read model,
 *   the quota, signing, the group commit on the in-memory store — for a principal's 1,000
 *   writes (the load stream, caller embeddings), per-principal detection as `Memory.open` runs
 *   it. The figure the issue names: `wcpu_add_old_over_new` ≥ 0.95 (≤ 5 % more CPU).
 *
 * Old vs new in one run: `MEMWARDEN_BENCH_BASELINE=/path/to/other/dist` loads a second build
 * (e.g. main's before a change) into the same process; the two are measured in alternating
 * rounds and the ratios `*_old_over_new` are printed (median round of each).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { setImmediate } from 'node:timers';
import { embedPools } from './load.mjs';
import { median, mulberry32, round } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const D = 384;
const START = 312;
const STEP = 50;
const MAX = 1000;
const ROUNDS = Number(process.env.WCPU_ROUNDS ?? 9);
/** `WCPU_PARTS=detect` or `neardup` to run one half (profiling). */
const PARTS = new Set((process.env.WCPU_PARTS ?? 'detect,neardup,add').split(','));

function jitter(base, r, sigma = 0.018) {
  const v = new Float32Array(D);
  let s = 0;
  for (let i = 0; i < D; i++) {
    v[i] = base[i] + sigma * (r() + r() + r() - 1.5) * 2;
    s += v[i] * v[i];
  }
  s = Math.sqrt(s);
  for (let i = 0; i < D; i++) v[i] /= s;
  return v;
}

/** Import the first of `paths` that exists in `dir` (the memory rooms moved files between builds). */
async function first(dir, paths) {
  for (const p of paths) {
    const f = path.join(dir, p);
    if (existsSync(f)) return import(pathToFileURL(f).href);
  }
  throw new Error(`none of ${paths.join(', ')} in ${dir}`);
}

async function load(dir) {
  const [cal, ctxm, ledm, memm, cfg, met, mb, sys, dbl, emb, wr, rm] = await Promise.all(
    [
      ['memory/detect/calibration.js', 'memory/calibration.js'],
      ['memory/context.js'],
      ['memory/log/ledger.js', 'memory/ledger.js'],
      ['memory/memory.js'],
      ['memory/config.js'],
      ['ports/metrics.js'],
      ['adapters/memory/index.js'],
      ['adapters/system/index.js'],
      ['testing/doubles.js'],
      ['adapters/embeddings/index.js'],
      ['memory/write/write.js', 'memory/write.js'],
      ['memory/read/read-model.js', 'memory/read-model.js'],
    ].map((ps) => first(dir, ps)),
  );
  return { cal, ctxm, ledm, memm, cfg, met, mb, sys, dbl, emb, wr, rm };
}

/**
 * The embedder detection sees: the writes carry the load bench's real MiniLM vectors, so it is
 * named as that model (the instruction screen then uses its MiniLM term, and the generic
 * reference its bundled vectors, as in a deployment); anything it embeds itself is deterministic.
 */
function benchEmbedder(m) {
  const det = new m.emb.DeterministicEmbedder(D);
  return { name: 'local:minilm-l6-v2', dimensions: D, embed: (t) => det.embed(t) };
}

const yieldNow = () => new Promise((res) => setImmediate(res));
const cpu = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

/** The write stream of one principal: load-bench texts and jittered MiniLM vectors. */
function stream(pools, seed, n) {
  const r = mulberry32(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const b = Math.floor(r() * pools.bases.length);
    out.push({
      content: `${pools.bases[b]} (run 1, write ${i})`,
      embedding: jitter(pools.baseVecs[b], r),
    });
  }
  return out;
}

/**
 * A memory on the in-memory backend (`readModel`: behind the read model, as `Memory.open`
 * wires it), its ledger seeded with `seed`, and `memory` options on top of the wiring.
 */
async function openMemory(m, seed, { readModel, embedder, memory = {} }) {
  const raw = await m.mb.MemoryBackend.open();
  const storage = readModel ? m.rm.withReadModel(raw) : raw;
  const random = new m.dbl.SeededRandom(seed);
  const clock = m.sys.systemClock;
  const ledger = await m.ledm.Ledger.open({
    storage,
    keys: new m.dbl.MemoryKeySource(),
    clock,
    random,
  });
  const mem = new m.memm.Memory({ ledger, storage, embedder, clock, random, ...memory });
  const who = (await mem.createPrincipal('user', 'bench')).id;
  return { storage, random, clock, ledger, mem, who };
}

/** Growth calibrations and screening: CPU µs per growth calibration and per screened write. */
async function detection(m, writes) {
  const embedder = benchEmbedder(m);
  const { storage, random, clock, ledger, who } = await openMemory(m, 'bench-wcpu', {
    readModel: false,
    embedder,
  });
  const ctx = new m.ctxm.MemoryContext(
    ledger,
    storage,
    clock,
    random,
    m.met.noopMetrics,
    m.cfg.retentionConfig(),
  );
  const d = new m.cal.AutoDetection(ctx, embedder, {
    recalibrateIntervalMs: 0,
    persistQueries: false,
  });
  await d.describe(who);
  const write = async (w) => {
    await d.screenWrite(who, {
      content: w.content,
      tier: 'USER_OBSERVED',
      principal: who,
      embedding: w.embedding,
    });
    d.stored(who, {
      content: w.content,
      tier: 'USER_OBSERVED',
      label: 'TRUSTED',
      embedding: w.embedding,
    });
  };
  let i = 0;
  for (; i < START; i++) await write(writes[i]);
  await d.describe(who);
  await yieldNow();
  let screenUs = 0;
  let screens = 0;
  let growUs = 0;
  let grows = 0;
  for (;;) {
    const before = (await d.describe(who)).calibratedOn;
    // ≥ 50 writes (a second of the load run's rate), ≥ the 10 % that triggers a calibration.
    const step = Math.max(STEP, Math.ceil(before * 0.1) + 1);
    if (i + step > MAX) break;
    // No macrotask boundary inside the loop: the growth calibration a write schedules
    // (setImmediate) runs at the yield below, timed on its own.
    const t0 = cpu();
    for (let j = 0; j < step; j++) await write(writes[i++]);
    screenUs += cpu() - t0;
    screens += step;
    const t1 = cpu();
    await yieldNow();
    growUs += cpu() - t1;
    const after = (await d.describe(who)).calibratedOn;
    if (after === before)
      throw new Error(`no growth calibration ran (${i}: ${before} -> ${after})`);
    grows++;
  }
  await d.close();
  await ledger.close();
  return { growMs: growUs / grows / 1000, screenUs: screenUs / screens };
}

/** Near-duplicate checks against a principal's 1,000 stored entries through the read model. */
async function nearDup(m, writes, probes) {
  const { storage, clock, ledger, mem, who } = await openMemory(m, 'bench-wcpu-nd', {
    readModel: true,
    embedder: new m.emb.DeterministicEmbedder(D),
    memory: { retention: m.cfg.retentionConfig({ nearDuplicateThreshold: null }) },
  });
  for (const w of writes.slice(0, MAX))
    await mem.add(w.content, { principal: who, embedding: w.embedding, verbatim: true });
  const model = m.rm.readModelOf(storage);
  const view = storage.asPrincipal(who);
  const check = (v) =>
    m.wr.findNearDuplicate(view, ledger, {
      principal: who,
      embedding: v,
      threshold: 0.97,
      nowNs: clock.nowNs(),
      model,
    });
  for (const v of probes.slice(0, 200)) await check(v); // warm-up (loads the partition)
  const verdicts = [];
  const t0 = cpu();
  for (const v of probes) verdicts.push((await check(v))?.id ?? null);
  const us = (cpu() - t0) / probes.length;
  await ledger.close();
  return { us, verdicts };
}

/** CPU µs per whole `Memory.add` over a principal's write stream (see the module comment). */
async function addPath(m, writes) {
  const { mem, who } = await openMemory(m, 'bench-wcpu-add', {
    readModel: true,
    embedder: new m.emb.DeterministicEmbedder(D),
    memory: { autoDetection: { recalibrateIntervalMs: 0, persistQueries: false } },
  });
  // Warm-up (JIT, the principal's detection and read-model partition), not timed.
  for (const w of writes.slice(0, 100))
    await mem
      .add(`${w.content} (warm-up)`, { principal: who, embedding: w.embedding })
      .catch(() => undefined);
  await yieldNow();
  let outcomes = 0;
  const t0 = cpu();
  for (const w of writes.slice(100)) {
    const r = await mem.add(w.content, { principal: who, embedding: w.embedding }).catch((e) => e);
    outcomes += r?.status === 'stored' ? 1 : 0;
  }
  const us = (cpu() - t0) / (writes.length - 100);
  await mem.close();
  return { us, stored: outcomes };
}

/**
 * The whole-add CPU of two builds, paired: both write the same stream into their own memory in
 * alternating blocks of `PAIR_BLOCK` writes (the order flips every block), each block timed with
 * the background work it schedules drained (a few macrotask turns inside the timed span), so
 * both builds see the same machine load within a second of each other. Returns per build the
 * CPU µs per write of this round, and the round's ratio old/new of the summed CPU.
 */
const PAIR_BLOCK = Number(process.env.WCPU_PAIR_BLOCK ?? 25);
async function addPaired(impls, writes) {
  const side = [];
  for (const im of impls) {
    const o = await openMemory(im.m, 'bench-wcpu-add', {
      readModel: true,
      embedder: new im.m.emb.DeterministicEmbedder(D),
      memory: { autoDetection: { recalibrateIntervalMs: 0, persistQueries: false } },
    });
    for (const w of writes.slice(0, 100))
      await o.mem
        .add(`${w.content} (warm-up)`, { principal: o.who, embedding: w.embedding })
        .catch(() => undefined);
    side.push({ ...o, cpuUs: 0, stored: 0 });
  }
  await yieldNow();
  const body = writes.slice(100);
  for (let b = 0, k = 0; b < body.length; b += PAIR_BLOCK, k++) {
    const block = body.slice(b, b + PAIR_BLOCK);
    for (const s of k % 2 === 0 ? side : [...side].reverse()) {
      const t0 = cpu();
      for (const w of block) {
        const r = await s.mem
          .add(w.content, { principal: s.who, embedding: w.embedding })
          .catch((e) => e);
        s.stored += r?.status === 'stored' ? 1 : 0;
      }
      for (let y = 0; y < 3; y++) await yieldNow();
      s.cpuUs += cpu() - t0;
    }
  }
  for (const s of side) await s.mem.close();
  return side.map((s) => ({ us: s.cpuUs / body.length, stored: s.stored }));
}

export async function run({ log }) {
  const pools = await embedPools(log);
  const impls = [{ name: 'new', dir: path.join(here, '..', 'dist') }];
  const base = process.env.MEMWARDEN_BENCH_BASELINE;
  if (base) impls.unshift({ name: 'old', dir: path.resolve(base) });
  for (const im of impls) im.m = await load(im.dir);
  const writes = stream(pools, 7, MAX);
  // Near-duplicate probes: fresh jitters of the same bases (a few land within 0.97 of a stored one).
  const probes = stream(pools, 8, 2000).map((w, k) =>
    k % 50 === 0 ? writes[k % MAX].embedding : w.embedding,
  );
  const res = Object.fromEntries(
    impls.map((im) => [
      im.name,
      { grow: [], screen: [], nd: [], add: [], verdicts: undefined, stored: undefined },
    ]),
  );
  for (let r = 0; r < ROUNDS; r++) {
    for (const im of r % 2 === 0 ? impls : [...impls].reverse()) {
      const x = res[im.name];
      const dd = PARTS.has('detect')
        ? await detection(im.m, writes)
        : { growMs: NaN, screenUs: NaN };
      x.grow.push(dd.growMs);
      x.screen.push(dd.screenUs);
      const nd = PARTS.has('neardup')
        ? await nearDup(im.m, writes, probes)
        : { us: NaN, verdicts: [] };
      x.nd.push(nd.us);
      x.verdicts ??= nd.verdicts;
      const ad = PARTS.has('add') ? await addPath(im.m, writes) : { us: NaN, stored: 0 };
      x.add.push(ad.us);
      x.stored ??= ad.stored;
      log(
        `${im.name} round ${r}: grow ${round(dd.growMs, 3)} ms, screen ${round(dd.screenUs, 1)} µs, near-dup ${round(nd.us, 1)} µs, add ${round(ad.us, 1)} µs`,
      );
    }
  }
  // Paired whole-add rounds (old and new interleaved by block, see `addPaired`): the figure
  // issue 17 names, since separate rounds of the two builds differ by more than 5 % on a shared
  // machine from load alone.
  const paired = [];
  if (base && PARTS.has('add')) {
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? impls : [...impls].reverse();
      const out = await addPaired(order, writes);
      const by = Object.fromEntries(order.map((im, k) => [im.name, out[k]]));
      paired.push(by.old.us / by.new.us);
      log(
        `paired round ${r}: old ${round(by.old.us, 1)} µs, new ${round(by.new.us, 1)} µs per add (old/new ${round(paired.at(-1), 3)}; stored ${by.old.stored}/${by.new.stored})`,
      );
    }
  }
  // The machine is shared: the fastest round of each is the least disturbed one (the median
  // is printed too).
  const min = (xs) => Math.min(...xs);
  const figures = {};
  const ratios = {};
  for (const im of impls) {
    const x = res[im.name];
    const suffix = im.name === 'new' ? '' : `_${im.name}`;
    figures[`wcpu_grow_ms${suffix}`] = round(min(x.grow), 3);
    figures[`wcpu_screen_us${suffix}`] = round(min(x.screen), 1);
    figures[`wcpu_neardup_us${suffix}`] = round(min(x.nd), 1);
    figures[`wcpu_grow_median_ms${suffix}`] = round(median(x.grow), 3);
    figures[`wcpu_screen_median_us${suffix}`] = round(median(x.screen), 1);
    figures[`wcpu_neardup_median_us${suffix}`] = round(median(x.nd), 1);
    figures[`wcpu_add_us${suffix}`] = round(min(x.add), 1);
    figures[`wcpu_add_median_us${suffix}`] = round(median(x.add), 1);
    figures[`wcpu_add_stored${suffix}`] = x.stored;
  }
  figures.wcpu_neardup_found = res.new.verdicts.filter((v) => v !== null).length;
  if (res.old !== undefined) {
    for (const [k, f] of [
      ['grow', 'grow'],
      ['screen', 'screen'],
      ['neardup', 'nd'],
      ['add', 'add'],
    ]) {
      ratios[`wcpu_${k}_old_over_new`] = round(min(res.old[f]) / min(res.new[f]), 2);
      ratios[`wcpu_${k}_median_old_over_new`] = round(median(res.old[f]) / median(res.new[f]), 2);
    }
    if (paired.length > 0) {
      ratios.wcpu_add_paired_old_over_new = round(median(paired), 3);
      figures.wcpu_add_paired_min_old_over_new = round(Math.min(...paired), 3);
      figures.wcpu_add_paired_max_old_over_new = round(Math.max(...paired), 3);
    }
    // What the new build's screening adds per write (issue 22 budget: ≤ 300 µs of CPU).
    figures.wcpu_screen_added_us = round(min(res.new.screen) - min(res.old.screen), 1);
    figures.wcpu_screen_added_median_us = round(median(res.new.screen) - median(res.old.screen), 1);
    const same = res.old.verdicts.every((v, k) => (v === null) === (res.new.verdicts[k] === null));
    figures.wcpu_neardup_same_verdicts = same ? 1 : 0;
  }
  return { figures, ratios };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = await run({ log: (m) => process.stderr.write(`  write-cpu: ${m}\n`) });
  console.log(JSON.stringify(out, null, 2));
}
