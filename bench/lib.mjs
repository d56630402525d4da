/**
 * Benchmark helpers: time an operation in batches and report the median per-op time.
 * Ratios are always taken against denominators measured in the same run (BENCH.md), because
 * absolute times on these shared 2-core machines drift.
 */
import { performance } from 'node:perf_hooks';

/** The project's one seeded PRNG (src/core/prng.ts, built). */
export { mulberry32 } from '../dist/core/prng.js';

/**
 * Median time per call of `fn` in microseconds. Runs `batches` batches of `perBatch` calls
 * after a warm-up; the median of batch means resists GC pauses and noisy neighbours.
 */
export function measureUs(fn, { perBatch = 200, batches = 25, warmup = 2 } = {}) {
  for (let i = 0; i < warmup * perBatch; i++) fn(i);
  const samples = [];
  let k = 0;
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < perBatch; i++) fn(k++);
    samples.push(((performance.now() - t0) * 1000) / perBatch);
  }
  return median(samples);
}

/** Same as measureUs for async operations (awaited one at a time). */
export async function measureAsyncUs(fn, { perBatch = 100, batches = 21, warmup = 1 } = {}) {
  for (let i = 0; i < warmup * perBatch; i++) await fn(i);
  const samples = [];
  let k = 0;
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < perBatch; i++) await fn(k++);
    samples.push(((performance.now() - t0) * 1000) / perBatch);
  }
  return median(samples);
}

/**
 * Interleaved timing of several operations: each batch runs `perBatch` calls of every function
 * in turn, so all of them see the same machine load. Returns, per name, the median per-call wall
 * time and CPU time (µs), and `ratio(a, b)`: the median over batches of time(a)/time(b).
 */
export function measureInterleavedUs(fns, { perBatch = 4, batches = 25, warmup = 2 } = {}) {
  const names = Object.keys(fns);
  for (const n of names) for (let i = 0; i < warmup * perBatch; i++) fns[n](i);
  const wall = Object.fromEntries(names.map((n) => [n, []]));
  const cpu = Object.fromEntries(names.map((n) => [n, []]));
  let k = 0;
  for (let b = 0; b < batches; b++) {
    for (const n of names) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < perBatch; i++) fns[n](k + i);
      const t = performance.now() - t0;
      const c = process.cpuUsage(c0);
      wall[n].push((t * 1000) / perBatch);
      cpu[n].push((c.user + c.system) / perBatch);
    }
    k += perBatch;
  }
  return {
    wallUs: Object.fromEntries(names.map((n) => [n, median(wall[n])])),
    cpuUs: Object.fromEntries(names.map((n) => [n, median(cpu[n])])),
    ratio: (a, b) => median(wall[a].map((x, i) => x / wall[b][i])),
  };
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export const round = (x, d = 3) => Number(x.toFixed(d));
