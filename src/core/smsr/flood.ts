/**
 * @module core/smsr/flood
 * Flood control: keep the adversary budget t of the SMSR certificate small (SMSR §VIII (b),
 * issue 19). Near-duplicate rejection at 0.97 cosine lets paraphrase floods through (the eval's
 * own paraphrases sit at 0.87–0.96 with MiniLM). This bounds how many *mutually similar*
 * entries one bucket — one principal's writes at one tier, and one source URI — may add per
 * sliding window: a write whose cosine to at least `maxSimilar` of the bucket's writes in the
 * window is ≥ `similarity` is over budget (the caller holds it for review; it is never lost).
 * Distinct facts (below `similarity` to each other) are never counted against each other.
 *
 * The bound it gives: an attacker holding `sources` sources (or principals) places at most
 * `(maxSimilar + 1) · sources` mutually similar entries per window into the pool of a query,
 * so t ≤ that number — {@link floodBudget} reports it with the certificate it leaves.
 *
 * Pure: the caller passes the time; state is in-process (a multi-process deployment bounds
 * each process separately — the budget multiplies by the process count).
 */
import { certificate, type Certificate } from './certificate.js';
import { cosine } from './near-duplicate.js';

export interface FloodPolicy {
  /** Cosine at or above which two writes count as the same claim (default 0.80: the SMSR eval's flooding paraphrases measure 0.81–0.98 with MiniLM, ADR 0076). */
  readonly similarity: number;
  /** Mutually similar writes one bucket may add per window (default 2). */
  readonly maxSimilar: number;
  /** Window length in milliseconds (default one hour). */
  readonly windowMs: number;
  /** Most writes remembered per bucket (default 512; the oldest are forgotten first). */
  readonly maxTracked: number;
}

export const DEFAULT_FLOOD_POLICY: FloodPolicy = Object.freeze({
  similarity: 0.8,
  maxSimilar: 2,
  windowMs: 3_600_000,
  maxTracked: 512,
});

/** The outcome of a check. */
export interface FloodCheck {
  readonly overBudget: boolean;
  /** The bucket that refused (absent when within budget). */
  readonly bucket?: string;
  /** Similar writes found in that bucket's window. */
  readonly similar: number;
}

interface Recent {
  readonly atMs: number;
  readonly vector: Float32Array;
}

/** Sliding-window similarity budget per bucket (see the module comment). */
export class FloodWindow {
  private readonly buckets = new Map<string, Recent[]>();

  constructor(readonly policy: FloodPolicy = DEFAULT_FLOOD_POLICY) {}

  /**
   * Would a write with `vector` into `buckets` exceed any bucket's budget at `nowMs`? Checks
   * only; call {@link record} once the write is accepted.
   */
  check(buckets: readonly string[], vector: Float32Array, nowMs: number): FloodCheck {
    let worst = 0;
    for (const b of buckets) {
      const list = this.live(b, nowMs);
      let similar = 0;
      for (const r of list)
        if (r.vector.length === vector.length && cosine(r.vector, vector) >= this.policy.similarity)
          similar++;
      // The window already holds maxSimilar writes like this one: one more is over budget.
      if (similar >= this.policy.maxSimilar) return { overBudget: true, bucket: b, similar };
      worst = Math.max(worst, similar);
    }
    return { overBudget: false, similar: worst };
  }

  /** Count an accepted write against its buckets. */
  record(buckets: readonly string[], vector: Float32Array, nowMs: number): void {
    for (const b of buckets) {
      const list = this.live(b, nowMs);
      list.push({ atMs: nowMs, vector });
      if (list.length > this.policy.maxTracked)
        list.splice(0, list.length - this.policy.maxTracked);
      this.buckets.set(b, list);
    }
  }

  private live(bucket: string, nowMs: number): Recent[] {
    const list = this.buckets.get(bucket) ?? [];
    const from = nowMs - this.policy.windowMs;
    let i = 0;
    while (i < list.length && (list[i] as Recent).atMs <= from) i++;
    if (i > 0) list.splice(0, i);
    if (list.length === 0) this.buckets.delete(bucket);
    return list;
  }
}

/** What a flood policy leaves an attacker (see the module comment). */
export interface FloodBudget {
  /** Mutually similar entries an attacker with `sources` buckets places per window. */
  readonly perWindow: number;
  /** Per hour. */
  readonly perHour: number;
  /** t after `hours` of flooding (entries older than the window still count: they stay in the store). */
  readonly t: number;
  /** The certificate that leaves at (m, k, runs). */
  readonly certificate: Certificate;
}

/**
 * The flood an attacker can still place and the certificate it leaves: `sources` independent
 * buckets (sources or principals), flooding for `hours`, against a pool of (m, k, runs).
 */
export function floodBudget(
  policy: FloodPolicy,
  o: { sources: number; hours: number; m: number; k: number; runs: number },
): FloodBudget {
  const perWindow = policy.maxSimilar * o.sources;
  const perHour = (perWindow * 3_600_000) / policy.windowMs;
  const t = Math.ceil(perHour * o.hours);
  return { perWindow, perHour, t, certificate: certificate(Math.min(t, o.m), o.m, o.k, o.runs) };
}
