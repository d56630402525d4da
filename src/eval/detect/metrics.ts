/**
 * @module eval/detect/metrics
 * TPR / FPR at an operating threshold, AUROC (Mann–Whitney, ties counted ½), ROC points,
 * and percentile-bootstrap 95 % intervals over per-seed values (MemSAD §6.1).
 */
import type { Rng } from './rng.js';

export function rate(flags: readonly boolean[]): number {
  return flags.length === 0 ? 0 : flags.filter(Boolean).length / flags.length;
}

/** AUROC of `pos` (attack) scores over `neg` (benign) scores; higher score = attack. */
export function auroc(pos: readonly number[], neg: readonly number[]): number {
  if (pos.length === 0 || neg.length === 0) return Number.NaN;
  const all = [...pos.map((s) => ({ s, p: 1 })), ...neg.map((s) => ({ s, p: 0 }))].sort(
    (a, b) => a.s - b.s,
  );
  let rankSum = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j < all.length && (all[j] as { s: number }).s === (all[i] as { s: number }).s) j++;
    const avg = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if ((all[k] as { p: number }).p === 1) rankSum += avg;
    i = j;
  }
  const n1 = pos.length;
  return (rankSum - (n1 * (n1 + 1)) / 2) / (n1 * neg.length);
}

/** ROC curve points (fpr, tpr), from (0,0) to (1,1). */
export function rocPoints(pos: readonly number[], neg: readonly number[]): [number, number][] {
  const ths = [...new Set([...pos, ...neg])].sort((a, b) => b - a);
  const pts: [number, number][] = [[0, 0]];
  for (const t of ths)
    pts.push([
      neg.filter((s) => s >= t).length / neg.length,
      pos.filter((s) => s >= t).length / pos.length,
    ]);
  pts.push([1, 1]);
  return pts;
}

export interface Interval {
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
}

/** Mean with a percentile-bootstrap 95 % interval over per-seed values. */
export function bootstrap(values: readonly number[], r: Rng, resamples = 2000): Interval {
  const xs = values.filter((x) => Number.isFinite(x));
  if (xs.length === 0) return { mean: Number.NaN, lo: Number.NaN, hi: Number.NaN };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const ms: number[] = [];
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    for (let i = 0; i < xs.length; i++) s += xs[Math.floor(r() * xs.length)] as number;
    ms.push(s / xs.length);
  }
  ms.sort((a, b) => a - b);
  return {
    mean,
    lo: ms[Math.floor(0.025 * resamples)] as number,
    hi: ms[Math.floor(0.975 * resamples)] as number,
  };
}

/** Sessions until P(compromise) = 1 − (1 − p)^s reaches `target` (∞ when p = 0). */
export function sessionsTo(p: number, target: number): number {
  if (p <= 0) return Number.POSITIVE_INFINITY;
  if (p >= 1) return 1;
  return Math.ceil(Math.log(1 - target) / Math.log(1 - p));
}
