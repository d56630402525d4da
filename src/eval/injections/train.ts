/**
 * @module eval/injections/train
 * How the instruction screen's weights and per-tier thresholds are made (ADR 0040), shared by
 * `scripts/train-instruction-screen.mjs` (the shipped weights) and `memwarden eval injections`
 * (the same procedure re-run inside cross-validation folds, so the figures it reports for
 * unseen corpora are the procedure's, not the shipped weights' in-sample ones).
 *
 * - Classifier: logistic regression, class-balanced, L2 (λ 1e-3), full-batch Adam for 600
 *   steps from zero — deterministic. Inputs: the linguistic features and one MiniLM term, the
 *   vector's projection onto the unit direction from the statements' mean to the
 *   instructions' mean (×`DIRECTION_SCALE`).
 * - Thresholds: out-of-fold scores (5 folds by text hash) of the statement-form negatives, and
 *   the scores of user requests (never trained on), each tier at its false-positive budgets
 *   (`TIER_BUDGETS`); a tier's threshold is the highest its budgets give.
 */
import { createHash } from 'node:crypto';
import {
  INSTRUCTION_FEATURES,
  type InstructionModel,
  type ScreenedTier,
  instructionFeatures,
  scoreFeatures,
} from '../../core/detect/index.js';

export interface Example {
  readonly text: string;
  readonly vec: Float32Array;
  /** 1 instruction, 0 statement. */
  readonly y: 0 | 1;
  /** Precomputed `instructionFeatures(text)` (computed when absent). */
  features?: Float64Array;
}

export const DIRECTION_SCALE = 4;
export const L2 = 1e-3;
export const STEPS = 600;
export const FOLDS = 5;

/**
 * Benign false-positive budgets per tier: the share of statement-form benign texts, and of
 * legitimate user requests ("remind me to call mom"), a tier may hold. EXTERNAL_* content is
 * held on little evidence; a user's own words only on much more.
 */
export const TIER_BUDGETS: Readonly<
  Record<ScreenedTier, { statements: number; userRequests: number }>
> = {
  EXTERNAL_WEB: { statements: 0.01, userRequests: 1 },
  EXTERNAL_TOOL: { statements: 0.01, userRequests: 1 },
  USER_OBSERVED: { statements: 0.0025, userRequests: 0.05 },
  USER_VERIFIED: { statements: 0.001, userRequests: 0 },
};

const featuresOf = (e: Example): Float64Array => (e.features ??= instructionFeatures(e.text));

/** Unit vector from the mean of the y = 0 vectors to the mean of the y = 1 vectors. */
export function centroidDirection(xs: readonly Example[]): number[] {
  const d = xs[0]?.vec.length ?? 0;
  const m1 = new Float64Array(d);
  const m0 = new Float64Array(d);
  let n1 = 0;
  let n0 = 0;
  for (const e of xs) {
    const m = e.y === 1 ? m1 : m0;
    for (let j = 0; j < d; j++) m[j] = (m[j] as number) + (e.vec[j] as number);
    if (e.y === 1) n1++;
    else n0++;
  }
  const v = new Array<number>(d).fill(0);
  let s = 0;
  for (let j = 0; j < d; j++) {
    v[j] = (m1[j] as number) / Math.max(1, n1) - (m0[j] as number) / Math.max(1, n0);
    s += (v[j] as number) ** 2;
  }
  s = Math.sqrt(s) || 1;
  return v.map((x) => x / s);
}

function project(dir: readonly number[], v: Float32Array): number {
  let z = 0;
  for (let j = 0; j < dir.length; j++) z += (dir[j] as number) * (v[j] as number);
  return z;
}

/** Class-balanced L2 logistic regression by full-batch Adam (deterministic). */
export function fitLogistic(
  X: readonly Float64Array[],
  y: readonly number[],
  o: { l2?: number; steps?: number; lr?: number } = {},
): { w: Float64Array; b: number } {
  const D = X[0]?.length ?? 0;
  const n = X.length;
  const pos = y.filter((v) => v === 1).length;
  const neg = n - pos;
  const wPos = n / (2 * Math.max(1, pos));
  const wNeg = n / (2 * Math.max(1, neg));
  const l2 = o.l2 ?? L2;
  const lr = o.lr ?? 0.05;
  const w = new Float64Array(D);
  let b = 0;
  const m = new Float64Array(D + 1);
  const v = new Float64Array(D + 1);
  const g = new Float64Array(D + 1);
  for (let it = 1; it <= (o.steps ?? STEPS); it++) {
    g.fill(0);
    for (let i = 0; i < n; i++) {
      const x = X[i] as Float64Array;
      let z = b;
      for (let j = 0; j < D; j++) z += (w[j] as number) * (x[j] as number);
      const p = 1 / (1 + Math.exp(-z));
      const r = (p - (y[i] as number)) * (y[i] === 1 ? wPos : wNeg);
      for (let j = 0; j < D; j++) g[j] = (g[j] as number) + r * (x[j] as number);
      g[D] = (g[D] as number) + r;
    }
    for (let j = 0; j <= D; j++) {
      const gj = (g[j] as number) / n + (j < D ? l2 * (w[j] as number) : 0);
      m[j] = 0.9 * (m[j] as number) + 0.1 * gj;
      v[j] = 0.999 * (v[j] as number) + 0.001 * gj * gj;
      const step =
        (lr * ((m[j] as number) / (1 - 0.9 ** it))) /
        (Math.sqrt((v[j] as number) / (1 - 0.999 ** it)) + 1e-8);
      if (j < D) w[j] = (w[j] as number) - step;
      else b -= step;
    }
  }
  return { w, b };
}

/** Train weights (thresholds left infinite: see `withThresholds`). */
export function trainModel(
  xs: readonly Example[],
  o: { version?: string; embedder?: string } = {},
): InstructionModel {
  const dir = centroidDirection(xs);
  const X = xs.map((e) => {
    const f = featuresOf(e);
    const x = new Float64Array(f.length + 1);
    x.set(f);
    x[f.length] = DIRECTION_SCALE * project(dir, e.vec);
    return x;
  });
  const { w, b } = fitLogistic(
    X,
    xs.map((e) => e.y),
  );
  const nf = INSTRUCTION_FEATURES.length;
  return {
    version: o.version ?? 'trained',
    embedder: o.embedder ?? 'local:minilm-l6-v2',
    features: INSTRUCTION_FEATURES.map(([k]) => k),
    weights: Array.from(w.subarray(0, nf), round6),
    bias: round6(b),
    direction: dir.map(round6),
    directionWeight: round6(w[nf] as number),
    directionScale: DIRECTION_SCALE,
    thresholds: {
      EXTERNAL_WEB: Infinity,
      EXTERNAL_TOOL: Infinity,
      USER_OBSERVED: Infinity,
      USER_VERIFIED: Infinity,
    },
  };
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/** Score one text + vector under a model. */
export function scoreExample(
  m: InstructionModel,
  e: { text: string; vec: Float32Array; features?: Float64Array },
): number {
  const f = e.features ?? instructionFeatures(e.text);
  return scoreFeatures(
    m,
    f,
    e.vec.length === m.direction.length ? project(m.direction, e.vec) : undefined,
  ).score;
}

/** Fold of a text (stable across runs and machines). */
export function foldOf(text: string, k = FOLDS): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) % k;
}

/** Out-of-fold scores of the statement-form examples (y = 0) of `xs`. */
export function outOfFoldStatementScores(xs: readonly Example[], k = FOLDS): number[] {
  const out: number[] = [];
  for (let f = 0; f < k; f++) {
    const tr = xs.filter((e) => foldOf(e.text, k) !== f);
    const te = xs.filter((e) => e.y === 0 && foldOf(e.text, k) === f);
    if (te.length === 0) continue;
    const m = trainModel(tr);
    for (const e of te) out.push(scoreExample(m, e));
  }
  return out;
}

/** The smallest threshold t with share(scores > t) ≤ budget (the (1 − budget) order statistic). */
export function thresholdAtBudget(scores: readonly number[], budget: number): number {
  if (scores.length === 0) return Number.NEGATIVE_INFINITY;
  const s = [...scores].sort((a, b) => a - b);
  const allowed = Math.floor(budget * s.length + 1e-9);
  if (allowed >= s.length) return Number.NEGATIVE_INFINITY;
  return s[s.length - 1 - allowed] as number;
}

/** Per-tier thresholds: the highest of each tier's budgets over the two benign sets. */
export function tierThresholds(
  statementScores: readonly number[],
  userRequestScores: readonly number[],
  budgets = TIER_BUDGETS,
): Record<ScreenedTier, number> {
  const out = {} as Record<ScreenedTier, number>;
  for (const [tier, b] of Object.entries(budgets) as [
    ScreenedTier,
    { statements: number; userRequests: number },
  ][]) {
    const t = Math.max(
      thresholdAtBudget(statementScores, b.statements),
      thresholdAtBudget(userRequestScores, b.userRequests),
    );
    out[tier] = round6(t);
  }
  return out;
}

/**
 * The whole procedure: weights on every example, thresholds from out-of-fold statement scores
 * and the user requests' scores under those weights.
 */
export function trainScreen(
  xs: readonly Example[],
  userRequests: readonly { text: string; vec: Float32Array }[],
  o: { version?: string; embedder?: string; budgets?: typeof TIER_BUDGETS } = {},
): { model: InstructionModel; statementScores: number[]; userRequestScores: number[] } {
  const model = trainModel(xs, o);
  const statementScores = outOfFoldStatementScores(xs);
  const userRequestScores = userRequests.map((u) => scoreExample(model, u));
  return {
    model: { ...model, thresholds: tierThresholds(statementScores, userRequestScores, o.budgets) },
    statementScores,
    userRequestScores,
  };
}
