/**
 * @module core/smsr/stats
 * Wilson score intervals (Wilson 1927) for attack success rates, as the SMSR paper reports them.
 */

export interface Interval {
  readonly rate: number;
  readonly lower: number;
  readonly upper: number;
  readonly successes: number;
  readonly trials: number;
}

/** Wilson score interval for `successes` of `trials` at normal quantile z (1.96 ≈ 95 %). */
export function wilson(successes: number, trials: number, z = 1.959963984540054): Interval {
  if (trials <= 0) return { rate: 0, lower: 0, upper: 1, successes, trials };
  const p = successes / trials;
  const z2 = z * z;
  const denom = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denom;
  return {
    rate: p,
    lower: Math.max(0, centre - half),
    upper: Math.min(1, centre + half),
    successes,
    trials,
  };
}
