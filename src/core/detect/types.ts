/**
 * @module core/detect/types
 * The one shape every detector returns (issue 7): a finding is a value, never an exception.
 * A detector that cannot judge (not calibrated, empty history, a vector of the wrong width)
 * returns an unflagged finding whose `reason` says why, so a deployment sees the gap.
 */

/** Stable detector names; also the `pattern` / `reason` metric labels. */
export type DetectorName =
  | 'memsad'
  | 'memsad_plus'
  | 'watermark'
  | 'validation'
  | 'proactive'
  | 'composite'
  | 'injection_risk'
  | 'implausible_similarity'
  | 'embedding_mismatch'
  | 'instruction_marker'
  | 'role_claim'
  | 'delimiter'
  | 'length'
  | 'classifier'
  | 'instruction';

export interface Finding {
  readonly detector: DetectorName;
  /** The detector's statistic (higher = more suspicious). */
  readonly score: number;
  /** The threshold `score` was compared with (flag iff score > threshold, unless noted). */
  readonly threshold: number;
  readonly flagged: boolean;
  /** Short human-readable explanation (no raw content). */
  readonly reason: string;
  /**
   * MemSAD Lemma 8: the certified detection margin `score − τ − ε` when it is positive
   * (the detection holds for any calibration draw within tolerance ε); absent otherwise.
   */
  readonly certifiedRadius?: number;
}

/** Build a finding; keeps the flag consistent with score and threshold. */
export function finding(
  detector: DetectorName,
  score: number,
  threshold: number,
  reason: string,
  extra: { flagged?: boolean; certifiedRadius?: number } = {},
): Finding {
  const s = Number.isFinite(score) ? score : 0;
  const flagged = extra.flagged ?? s > threshold;
  return {
    detector,
    score: s,
    threshold,
    flagged,
    reason,
    ...(extra.certifiedRadius === undefined ? {} : { certifiedRadius: extra.certifiedRadius }),
  };
}

/** A finding for "could not judge": never flags. */
export function abstain(detector: DetectorName, reason: string): Finding {
  return { detector, score: 0, threshold: Number.POSITIVE_INFINITY, flagged: false, reason };
}

/** Mean and (population) standard deviation. */
export function meanStd(xs: ArrayLike<number>): { mean: number; std: number } {
  const n = xs.length;
  if (n === 0) return { mean: 0, std: 0 };
  let s = 0;
  for (let i = 0; i < n; i++) s += xs[i] as number;
  const mean = s / n;
  let v = 0;
  for (let i = 0; i < n; i++) v += ((xs[i] as number) - mean) ** 2;
  return { mean, std: Math.sqrt(v / n) };
}
