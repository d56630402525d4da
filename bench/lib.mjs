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
