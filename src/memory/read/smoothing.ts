/**
 * @module memory/read/smoothing
 * Smoothed search (issue 19): SMSR Algorithm 1's ablation step on the product's read path.
 *
 * `Memory.search(q, { smoothing })` retrieves the top-m *verified* memories (the read path's own
 * verification is SMSR component 1), then {@link smoothPool} draws `runs` independent uniform
 * k-subsets from the host's CSPRNG and renders each under its own seal. The caller gives the
 * model one ablated context per call, judges each answer and aggregates with
 * {@link voteSmoothed}: the strict-majority rule Theorem 2 bounds. The certificate is the one
 * for the pool actually retrieved (m′ ≤ m, k′ = min(k, m′)).
 */
import { toHex } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import { renderSegments } from '../../core/render/sentinel.js';
import {
  Verdicts,
  aggregateVerdicts,
  certificate,
  planPoolSize,
  sampleSubset,
  type Certificate,
  type Verdict,
  type VerdictCounts,
} from '../../core/smsr/index.js';
import { effectiveAuthority } from '../../core/trust.js';
import type { RandomSource } from '../../ports/clock.js';
import type {
  SearchHit,
  SmoothedContext,
  SmoothingCertificate,
  SmoothingOptions,
  SmoothingResult,
} from '../api.js';
import { wordsFromRandomSource } from './smsr.js';

/** Largest pool a smoothed search retrieves (every member is verified on the request path). */
export const SMOOTHING_MAX_M = 500;
/** Most ablated contexts one search returns. */
export const SMOOTHING_MAX_RUNS = 101;

/** Resolved smoothing parameters. */
export interface SmoothingParams {
  readonly m: number;
  readonly k: number;
  readonly runs: number;
  readonly t: number;
  readonly target?: number;
}

function int(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new MemwardenError(
      'INPUT_INVALID',
      `smoothing.${name} must be an integer in ${min}..${max}`,
      {
        details: { field: `smoothing.${name}` },
      },
    );
  }
  return v;
}

const planCache = new Map<string, number>();

/**
 * Validate smoothing options and pick m: as given, or the smallest m whose certificate reaches
 * `delta` for budget `t` (exact, `planPoolSize`). `INPUT_INVALID` on bad input or an unreachable
 * target (no m ≤ {@link SMOOTHING_MAX_M}).
 */
export function resolveSmoothing(o: SmoothingOptions): SmoothingParams {
  if (o === null || typeof o !== 'object')
    throw new MemwardenError('INPUT_INVALID', 'smoothing must be an object');
  const k = int('k', o.k ?? 5, 1, SMOOTHING_MAX_M);
  const runs = int('runs', o.runs ?? 5, 1, SMOOTHING_MAX_RUNS);
  if (o.delta !== undefined && o.m !== undefined)
    throw new MemwardenError('INPUT_INVALID', 'give smoothing.m or smoothing.delta, not both');
  if (o.delta === undefined) {
    const m = int('m', o.m, 1, SMOOTHING_MAX_M);
    const t = int('t', o.t ?? 1, 0, SMOOTHING_MAX_M);
    if (k > m) throw new MemwardenError('INPUT_INVALID', 'smoothing.k must not exceed smoothing.m');
    return { m, k, runs, t };
  }
  const target = o.delta;
  if (typeof target !== 'number' || !(target > 0 && target <= 1))
    throw new MemwardenError('INPUT_INVALID', 'smoothing.delta must be in (0, 1]', {
      details: { field: 'smoothing.delta' },
    });
  const t = int('t', o.t, 0, SMOOTHING_MAX_M);
  const key = `${t}/${target}/${k}/${runs}`;
  let m = planCache.get(key);
  if (m === undefined) {
    m = planPoolSize(t, target, k, runs, { maxM: SMOOTHING_MAX_M }).m;
    if (planCache.size >= 256) planCache.clear();
    planCache.set(key, m);
  }
  return { m, k, runs, t, target };
}

const certCache = new Map<string, SmoothingCertificate>();

/** Theorem 2 as JSON (cached: the exact BigInt arithmetic is paid once per parameter set). */
export function certificateView(
  t: number,
  m: number,
  k: number,
  runs: number,
): SmoothingCertificate {
  const key = `${t}/${m}/${k}/${runs}`;
  let v = certCache.get(key);
  if (v === undefined) {
    v = toView(certificate(t, m, k, runs));
    if (certCache.size >= 1024) certCache.clear();
    certCache.set(key, v);
  }
  return v;
}

function toView(c: Certificate): SmoothingCertificate {
  return {
    t: c.t,
    m: c.m,
    k: c.k,
    runs: c.runs,
    pClean: c.pClean,
    delta: c.delta,
    exact: { num: c.exact.num.toString(), den: c.exact.den.toString() },
    threshold: c.threshold,
  };
}

/**
 * Algorithm 1's "for j = 1 to n_runs: sample k from C without replacement" over a verified pool,
 * each subset rendered under its own fresh seal. Words come from `random` (the host's CSPRNG in
 * production): an adaptive attacker cannot predict which subsets will be drawn.
 */
export function smoothPool(
  pool: readonly SearchHit[],
  p: SmoothingParams,
  random: RandomSource,
): SmoothingResult {
  const n = Math.min(pool.length, p.m);
  const k = Math.min(p.k, n);
  const contexts: SmoothedContext[] = [];
  if (n > 0) {
    const words = wordsFromRandomSource(random, 64);
    const scratch = new Uint32Array(n);
    for (let j = 0; j < p.runs; j++) {
      const hits = sampleSubset(words, n, k, scratch).map((i) => pool[i] as SearchHit);
      const seal = toHex(random.randomBytes(16));
      contexts.push({
        ids: hits.map((h) => h.memory.id),
        seal,
        context: renderSegments(
          hits.map((h) => ({
            id: h.memory.id,
            label: h.memory.label,
            tier: h.memory.tier,
            authority: effectiveAuthority(h.memory.tier, h.memory.label),
            content: h.memory.content,
          })),
          seal,
        ),
      });
    }
  }
  const cert = n === 0 ? undefined : certificateView(p.t, n, k, p.runs);
  return {
    m: p.m,
    k: p.k,
    runs: p.runs,
    t: p.t,
    ...(p.target === undefined ? {} : { target: p.target }),
    poolSize: n,
    ...(cert === undefined ? {} : { certificate: cert }),
    certified: cert !== undefined && (p.target === undefined || certAtMost(cert, p.target)),
    contexts,
  };
}

/** δ ≤ x, compared on the exact rational. */
function certAtMost(c: SmoothingCertificate, x: number): boolean {
  if (x >= 1) return true;
  let e = 0;
  let y = x;
  while (!Number.isInteger(y)) {
    y *= 2;
    e++;
  }
  return BigInt(c.exact.num) * (1n << BigInt(e)) <= BigInt(y) * BigInt(c.exact.den);
}

/** The certified outcome of a smoothed search (see {@link voteSmoothed}). */
export interface SmoothedVote {
  /**
   * The strict-majority verdict: `malicious` only with ≥ ⌈runs/2⌉ runs and more than each other
   * verdict (the event Theorem 2 bounds), else the larger of correct / neither (ties: correct).
   */
  readonly verdict: Verdict;
  readonly counts: VerdictCounts;
  /** Index of the first ablated context whose answer carries `verdict` (−1: none). */
  readonly index: number;
  /** Ids of that context's memories (empty when index is −1). */
  readonly ids: readonly string[];
  /** Safe to act on: the verdict is not malicious and the certificate holds as asked. */
  readonly safe: boolean;
  /** The certificate the outcome carries (P[majority malicious] ≤ certificate.delta). */
  readonly certificate?: SmoothingCertificate;
  readonly certified: boolean;
}

/**
 * Aggregate the caller's per-context verdicts (one per `smoothing.contexts[j]`, same order) with
 * the strict majority rule. Every context needs exactly one verdict: a dropped run would change
 * n_runs under the certificate (`INPUT_INVALID`).
 */
export function voteSmoothed(
  smoothing: Pick<SmoothingResult, 'contexts' | 'certificate' | 'certified'>,
  verdicts: readonly Verdict[],
): SmoothedVote {
  if (!Array.isArray(verdicts) || verdicts.length !== smoothing.contexts.length) {
    throw new MemwardenError('INPUT_INVALID', 'give exactly one verdict per ablated context', {
      details: { expected: smoothing.contexts.length },
    });
  }
  for (const v of verdicts)
    if (!(Verdicts as readonly unknown[]).includes(v))
      throw new MemwardenError('INPUT_INVALID', 'a verdict is correct, malicious or neither');
  const agg = aggregateVerdicts(verdicts);
  return {
    verdict: agg.verdict,
    counts: agg.counts,
    index: agg.index,
    ids: agg.index < 0 ? [] : [...(smoothing.contexts[agg.index] as SmoothedContext).ids],
    safe: agg.verdict !== 'malicious' && smoothing.certified,
    ...(smoothing.certificate === undefined ? {} : { certificate: smoothing.certificate }),
    certified: smoothing.certified,
  };
}

/**
 * {@link voteSmoothed} from the parameters a smoothed search returned (t, poolSize, k, runs and
 * the planner's target), for a caller that kept only those (the HTTP vote route): the certificate
 * is recomputed here, never taken from the caller.
 */
export function voteOn(
  p: { t: number; poolSize: number; k: number; runs: number; target?: number },
  verdicts: readonly Verdict[],
): SmoothedVote {
  const poolSize = int('poolSize', p.poolSize, 1, SMOOTHING_MAX_M);
  const runs = int('runs', p.runs, 1, SMOOTHING_MAX_RUNS);
  const k = Math.min(int('k', p.k, 1, SMOOTHING_MAX_M), poolSize);
  const t = int('t', p.t, 0, SMOOTHING_MAX_M);
  if (p.target !== undefined && !(typeof p.target === 'number' && p.target > 0 && p.target <= 1))
    throw new MemwardenError('INPUT_INVALID', 'target must be in (0, 1]');
  const cert = certificateView(t, poolSize, k, runs);
  const certified = p.target === undefined || certAtMost(cert, p.target);
  const contexts: SmoothedContext[] = Array.from({ length: runs }, () => ({
    ids: [],
    context: '',
    seal: '',
  }));
  return voteSmoothed({ contexts, certificate: cert, certified }, verdicts);
}
