/**
 * @module core/smsr/aggregate
 * Verdict-based aggregation (Algorithm 1, §V-B) and, for contrast only, the string vote it
 * replaces (the Consistent Minority Effect, §VI-B).
 */

/** A judge's label for one ablation run (§V-B). */
export type Verdict = 'correct' | 'malicious' | 'neither';
export const Verdicts: readonly Verdict[] = ['correct', 'malicious', 'neither'];

export interface VerdictCounts {
  correct: number;
  malicious: number;
  neither: number;
}

export interface Aggregate {
  readonly verdict: Verdict;
  readonly counts: VerdictCounts;
  /** Index of the first run carrying `verdict` (Algorithm 1: "return first r(j) with v̂"). */
  readonly index: number;
}

/**
 * Majority verdict. `malicious` is returned only when it holds at least ⌈n/2⌉ runs and strictly
 * more than each other verdict — exactly the event Theorem 2 bounds (X ≥ ⌈n/2⌉). A plain
 * three-way argmax would let malicious win with a plurality below ⌈n/2⌉ (3 of 7 against 2+2),
 * which the certificate does not cover. Otherwise the argmax of correct/neither, ties to
 * `correct` (both are safe outcomes). Empty input is `neither` with index −1.
 */
export function aggregateVerdicts(verdicts: readonly Verdict[]): Aggregate {
  const counts: VerdictCounts = { correct: 0, malicious: 0, neither: 0 };
  for (const v of verdicts) counts[v]++;
  const n = verdicts.length;
  let verdict: Verdict;
  if (
    n > 0 &&
    counts.malicious >= Math.ceil(n / 2) &&
    counts.malicious > counts.correct &&
    counts.malicious > counts.neither
  ) {
    verdict = 'malicious';
  } else if (counts.correct === 0 && counts.neither === 0) {
    verdict = 'neither';
  } else {
    verdict = counts.correct >= counts.neither ? 'correct' : 'neither';
  }
  return { verdict, counts, index: verdicts.indexOf(verdict) };
}

/**
 * String-majority vote: the most frequent exact response string, first seen on ties. Exported
 * only to demonstrate and measure the Consistent Minority Effect — never use it to aggregate:
 * an attacker's identical strings beat a benign majority spread over paraphrases.
 */
export function stringVote(responses: readonly string[]): {
  response: string;
  count: number;
  index: number;
} {
  const counts = new Map<string, number>();
  let best = -1;
  let bestCount = 0;
  responses.forEach((r, i) => {
    const c = (counts.get(r) ?? 0) + 1;
    counts.set(r, c);
    if (c > bestCount) {
      bestCount = c;
      best = i;
    }
  });
  return { response: best < 0 ? '' : (responses[best] as string), count: bestCount, index: best };
}
