/**
 * @module core/smsr/certificate
 * The SMSR certificate (Theorem 2 of the SMSR paper, §VI-A) in exact rational arithmetic, and
 * parameter selection (§VII-J): the smallest candidate pool m that reaches a target δ.
 *
 * Theorem 2: with t′ ≤ min(t, m) adversarial entries among the top-m verified candidates and
 * n_runs independent uniform k-subsets,
 *
 *   p_clean = C(m − t′, k) / C(m, k)            (hypergeometric: a run sees no adversarial entry)
 *   δ       = Σ_{i=⌈n/2⌉}^{n} C(n, i) (1 − p_clean)^i p_clean^(n − i)
 *           = P[Bin(n_runs, 1 − p_clean) ≥ ⌈n_runs/2⌉]
 *
 * ## Ties and why n_runs should be odd
 * The sum starts at ⌈n/2⌉ exactly as the paper states it. For odd n that is the strict majority
 * (n+1)/2 and no tie is possible. For even n, ⌈n/2⌉ = n/2: the bound counts a tie (half the runs
 * contaminated) against the defender. That is the sound reading — an aggregator could break the
 * tie toward the attacker — but it means an even n_runs buys nothing: δ(n = 2j) ≥ δ(n = 2j − 1)
 * (e.g. t=1, m=20, k=5: δ = 0.1035 at n=5, 0.1694 at n=6, 0.0706 at n=7). Use odd n_runs.
 * (Our aggregator, `aggregateVerdicts`, never lets malicious win a tie, so for even n the
 * bound is merely conservative.)
 *
 * All binomial coefficients are BigInt; δ is an exact rational num/den (den = C(m,k)^n), and
 * the `number` is the correctly rounded-down double of that rational.
 */
import { MemwardenError } from '../errors.js';

/** An exact non-negative rational. */
export interface Rational {
  readonly num: bigint;
  readonly den: bigint;
}

/** The certificate of one parameter setting. */
export interface Certificate {
  /** Adversarial entries assumed in the pool, already clamped: t′ = min(t, m). */
  readonly t: number;
  readonly m: number;
  readonly k: number;
  readonly runs: number;
  /** P[one ablation run sees no adversarial entry]. */
  readonly pClean: number;
  /** Upper bound on P[majority verdict is malicious]. */
  readonly delta: number;
  /** δ as an exact rational (reduced). */
  readonly exact: Rational;
  /** Contaminated runs needed for the bound to count a loss: ⌈runs/2⌉. */
  readonly threshold: number;
}

/** C(n, r) exactly; 0 when r < 0 or r > n. */
export function binomial(n: number, r: number): bigint {
  if (r < 0 || r > n) return 0n;
  const rr = Math.min(r, n - r);
  let acc = 1n;
  // acc stays an integer at every step: acc_i = C(n - rr + i, i).
  for (let i = 1; i <= rr; i++) acc = (acc * BigInt(n - rr + i)) / BigInt(i);
  return acc;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

function reduce(num: bigint, den: bigint): Rational {
  const g = gcd(num, den);
  return g === 0n ? { num: 0n, den: 1n } : { num: num / g, den: den / g };
}

/** The double nearest below num/den (0 ≤ num/den ≤ 1), exact to 2⁻⁶³ relative. */
export function rationalToNumber(r: Rational): number {
  if (r.num === 0n) return 0;
  if (r.num === r.den) return 1;
  // Scale so the integer quotient carries 64 significant bits, then shift back.
  const shift = BigInt(r.den.toString(2).length - r.num.toString(2).length + 64);
  const q = (r.num << shift) / r.den;
  return Number(q) / 2 ** Number(shift);
}

function checkInt(name: string, v: number, min: number): void {
  if (!Number.isSafeInteger(v) || v < min) {
    throw new MemwardenError('INPUT_INVALID', `${name} must be an integer ≥ ${min}`, {
      details: { [name]: v },
    });
  }
}

/** Validate (t, m, k, runs): integers, t ≥ 0, 1 ≤ k ≤ m, runs ≥ 1. `INPUT_INVALID` otherwise. */
export function checkParams(t: number, m: number, k: number, runs: number): void {
  checkInt('t', t, 0);
  checkInt('m', m, 1);
  checkInt('k', k, 1);
  checkInt('runs', runs, 1);
  if (k > m)
    throw new MemwardenError('INPUT_INVALID', 'k must not exceed m', { details: { k, m } });
  if (m > 100_000 || runs > 1_000) {
    throw new MemwardenError('INPUT_INVALID', 'm ≤ 100000 and runs ≤ 1000', {
      details: { m, runs },
    });
  }
}

/** p_clean = C(m − t′, k) / C(m, k), exact. */
export function pCleanExact(t: number, m: number, k: number): Rational {
  checkParams(t, m, k, 1);
  const tp = Math.min(t, m);
  return reduce(binomial(m - tp, k), binomial(m, k));
}

/** Theorem 2's δ(t, m, k, n_runs), exact. */
export function certificate(t: number, m: number, k: number, runs: number): Certificate {
  checkParams(t, m, k, runs);
  const tp = Math.min(t, m);
  const a = binomial(m - tp, k); // clean subsets
  const b = binomial(m, k); // all subsets
  const c = b - a; // contaminated subsets
  const threshold = Math.ceil(runs / 2);
  // δ = Σ C(n,i) c^i a^(n−i) / b^n
  let num = 0n;
  for (let i = threshold; i <= runs; i++) {
    num += binomial(runs, i) * c ** BigInt(i) * a ** BigInt(runs - i);
  }
  const exact = reduce(num, b ** BigInt(runs));
  return {
    t: tp,
    m,
    k,
    runs,
    pClean: rationalToNumber(reduce(a, b)),
    delta: rationalToNumber(exact),
    exact,
    threshold,
  };
}

/** δ(t, m, k, n_runs) as a number (see {@link certificate}). */
export function delta(t: number, m: number, k: number, runs: number): number {
  return certificate(t, m, k, runs).delta;
}

/** True when num/den ≤ x for a finite double x (exact comparison). */
function rationalAtMost(r: Rational, x: number): boolean {
  if (x >= 1) return true;
  if (x < 0) return false;
  // x is a dyadic rational: x = X / 2^e exactly.
  let e = 0;
  let y = x;
  while (!Number.isInteger(y)) {
    y *= 2;
    e++;
  }
  return r.num * (1n << BigInt(e)) <= BigInt(y) * r.den;
}

/** The result of {@link planPoolSize}. */
export interface Plan {
  /** Smallest m with δ(t, m, k, runs) ≤ target. */
  readonly m: number;
  readonly certificate: Certificate;
  /** δ at m − 1 (undefined when m − 1 < k), showing m is the smallest. */
  readonly deltaAtMMinus1: number | undefined;
}

/**
 * Parameter selection (§VII-J): the smallest m ≥ k with δ(t, m, k, runs) ≤ target, compared
 * exactly. δ is non-increasing in m (p_clean = Π_{j<k} (m−t−j)/(m−j) grows with m), so an
 * exponential then binary search is exact. `INPUT_INVALID` when target is not in (0, 1] or no
 * m ≤ maxM reaches it.
 */
export function planPoolSize(
  t: number,
  target: number,
  k: number,
  runs: number,
  opts: { maxM?: number } = {},
): Plan {
  if (!(target > 0 && target <= 1)) {
    throw new MemwardenError('INPUT_INVALID', 'target δ must be in (0, 1]', {
      details: { target },
    });
  }
  const maxM = opts.maxM ?? 100_000;
  checkParams(t, Math.max(k, 1), k, runs);
  const ok = (m: number): boolean => rationalAtMost(certificate(t, m, k, runs).exact, target);
  let lo = k - 1; // invariant: lo fails (or lo < k), hi succeeds
  let hi = k;
  while (!ok(hi)) {
    lo = hi;
    if (hi >= maxM) {
      throw new MemwardenError('INPUT_INVALID', 'no pool size up to maxM reaches the target δ', {
        details: { t, target, k, runs, maxM },
      });
    }
    hi = Math.min(maxM, hi * 2);
  }
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (mid >= k && ok(mid)) hi = mid;
    else lo = mid;
  }
  return {
    m: hi,
    certificate: certificate(t, hi, k, runs),
    deltaAtMMinus1: hi - 1 >= k ? delta(t, hi - 1, k, runs) : undefined,
  };
}
