/**
 * @module core/graph/authselect
 * AuthSelect (§5, Algorithm 1): replay the deployment's own selector on the authenticated
 * subgraph G_A (every structural write below A removed — integrity follows the write, §5.2) and
 * compare with the selection on G. A divergence is an authority event, not a verdict: the caller
 * routes it through the gate (`core/gate` `decideByAuthority`), see {@link divergenceAuthority}.
 *
 * For PPR, two facts make it cheap:
 *
 * 1. A skip certificate. With δ = π_G − π_{G_A},
 *      δ = (I − d·M_A)⁻¹ · d·(M_G − M_A)·π_G,
 *    and column u of M_G − M_A has L1 norm 2·φ_u, φ_u the share of u's strength written through
 *    an unauthenticated channel. Hence ‖δ‖₁ ≤ 2d/(1 − d) · Σ_u π_G(u)·φ_u. When the top-k margin
 *    on G exceeds that (plus the solver error) — two scores move by at most ‖δ‖₁ together — no
 *    replay can change the selection: skip it. A clean index (no unauthenticated structure) has
 *    bound 0 and never replays (§6.7).
 * 2. Otherwise G_A is selected on its own, and both selections run on the certified push of
 *    `core/graph/push` (ADR 0068): each view's top-k is pushed only until it is certified, and
 *    the G and G_A pushes share their work (ADR 0069: one scan of each arc both views have).
 *    Where a certificate cannot separate a near-tie within the work budget, the power
 *    iteration on that view answers.
 *
 * `authSelectPprPower` is the reference: power iteration on G, the skip certificate, and an
 * independent power iteration on G_A. Every answer of `authSelectPpr` is the one it gives; only
 * `mode` (which certificate settled it) and the work counters can differ.
 */
import { type Authority, meetAuthority } from '../trust.js';
import {
  PPR_DAMPING,
  type PprOptions,
  type Seed,
  personalizedPageRank,
  resetVector,
  topK,
} from './ppr.js';
import {
  MAX_LEVELS,
  type PushTuning,
  certifiedTopK,
  pushUntilCertified,
  relax,
  relaxPair,
  relaxedBounds,
  sparseReset,
  startLevel,
  upperBound,
} from './push.js';
import { type Csr, type GraphIndex, isAuthenticated } from './structure.js';

/** One selection: node numbers best first. */
export interface Selection {
  readonly nodes: readonly number[];
}

/** How AuthSelect reached its answer. */
export type ReplayMode = 'clean' | 'certified' | 'replayed';

export interface AuthSelectResult {
  /** Selection on the full graph G. */
  readonly full: readonly number[];
  /** Selection on the authenticated subgraph G_A (equal to `full` when not diverged). */
  readonly auth: readonly number[];
  /** The two selected sets differ (order-insensitive). */
  readonly diverged: boolean;
  /** `clean`: no unauthenticated structure; `certified`: margin bound proved no divergence. */
  readonly mode: ReplayMode;
  /**
   * Work spent on the replay (0 unless `replayed`), in transition applications: one unit is one
   * pass over the view's arcs, so push work is fractional.
   */
  readonly replayIterations: number;
  /** Work spent on the selection on G, in the same unit. */
  readonly fullIterations: number;
  /** PPR mass on G of every node (what `full` was ranked by), for scoring the selection. */
  readonly fullScores?: Float64Array;
}

export interface PprQuery {
  readonly seeds: readonly Seed[];
  /** Nodes eligible for selection (passage nodes). */
  readonly candidates: ArrayLike<number>;
  readonly k: number;
  /**
   * Compare ranked lists, not sets (default true): a reader consumes the selection in rank order,
   * so a write that only re-orders the top-k can still flip the answer. Certificates then use
   * the smallest neighbour gap in the top-k+1 instead of the k-th gap.
   */
  readonly ordered?: boolean;
}

/** Element-wise equality of two ranked selections. */
export function sameOrder(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Order-insensitive set equality of two selections. */
export function sameSet(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  for (const x of b) if (!s.has(x)) return false;
  return true;
}

/** A PPR selection: the ranked top-k and the scores it was ranked by. */
export interface PprSelection {
  readonly nodes: number[];
  /** PPR mass per node: the push estimate (within `errorBound`) or the power iteration's. */
  readonly scores: Float64Array;
  /** Work in transition applications (passes over the arcs; fractional for push). */
  readonly iterations: number;
  /** Upper bound on ‖scores − π‖₁. */
  readonly errorBound: number;
}

/**
 * The top-k PPR selection on one view (HippoRAG2: passages ranked by their own mass), in rank
 * order. Certified push (see the module comment of `push.ts`); the order is the one the power
 * iteration at `opts.tol` gives ({@link pprSelectPower}), which answers the near-ties.
 */
export function pprSelect(g: Csr, q: PprQuery, opts: PprOptions = {}): PprSelection {
  if (opts.push === false) return pprSelectPower(g, q, opts);
  const d = opts.damping ?? PPR_DAMPING;
  const tol = opts.tol ?? 1e-8;
  if (!(d >= 0 && d < 1)) throw new RangeError('damping must be in [0, 1)');
  const s = sparseReset(g.n, q.seeds);
  const p = new Float64Array(g.n);
  const r = new Float64Array(g.n);
  for (let i = 0; i < s.nodes.length; i++) r[s.nodes[i]!] = s.weights[i]!;
  const run = pushUntilCertified(
    g,
    p,
    r,
    d,
    s,
    {
      candidates: q.candidates,
      k: q.k,
      ordered: true,
      oneSided: true,
      slack: (tol * d) / (1 - d),
    },
    opts.push,
  );
  if (run.nodes === undefined) {
    const ref = pprSelectPower(g, q, opts);
    return { ...ref, iterations: ref.iterations + run.sweeps };
  }
  let mass = 0;
  for (let v = 0; v < g.n; v++) mass += r[v]!;
  return { nodes: run.nodes, scores: p, iterations: run.sweeps, errorBound: mass };
}

/** The reference selection: power iteration to `opts.tol`, then the top-k of its scores. */
export function pprSelectPower(g: Csr, q: PprQuery, opts: PprOptions = {}): PprSelection {
  const s = resetVector(g.n, q.seeds);
  const r = personalizedPageRank(g, s, opts);
  return {
    nodes: topK(r.scores, q.candidates, q.k).nodes,
    scores: r.scores,
    iterations: r.iterations,
    errorBound: r.errorBound,
  };
}

/** AuthSelect over PPR on an index (see the module comment). */
export function authSelectPpr(
  index: GraphIndex,
  q: PprQuery,
  opts: PprOptions = {},
): AuthSelectResult {
  if (opts.push === false) return authSelectPprPower(index, q, opts);
  const d = opts.damping ?? PPR_DAMPING;
  const tol = opts.tol ?? 1e-8;
  if (!(d >= 0 && d < 1)) throw new RangeError('damping must be in [0, 1)');
  const ordered = q.ordered ?? true;
  const same = ordered ? sameOrder : sameSet;
  const full = index.view('full');
  const n = full.n;
  const s = sparseReset(n, q.seeds);
  const slack = (tol * d) / (1 - d);
  const sel = { candidates: q.candidates, k: q.k, ordered, slack };
  if (index.unauthenticatedCount === 0) {
    const p = new Float64Array(n);
    const r = new Float64Array(n);
    for (let i = 0; i < s.nodes.length; i++) r[s.nodes[i]!] = s.weights[i]!;
    const g1 = pushUntilCertified(full, p, r, d, s, { ...sel, oneSided: true }, opts.push);
    if (g1.nodes === undefined) {
      const ref = authSelectPprPower(index, q, opts);
      return { ...ref, fullIterations: ref.fullIterations + g1.sweeps };
    }
    return {
      full: g1.nodes,
      fullIterations: g1.sweeps,
      fullScores: p,
      auth: g1.nodes,
      diverged: false,
      mode: 'clean',
      replayIterations: 0,
    };
  }
  return authSelectJoint(index, q, opts, d, tol, s, same, sel);
}

/**
 * AuthSelect with unauthenticated structure present (ADR 0069): push on G and on G_A together
 * (`relaxPair`: one scan of each arc serves both states), level by level. Each side stops once
 * its own top-k is certified. When G's is, the skip certificate (‖π_G − π_{G_A}‖₁ bound from
 * the push's upper bounds on π_G) may settle G_A as well (`certified`); otherwise the G_A side
 * runs until its own certificate (`replayed`). Both states start from s and stay non-negative,
 * so both certificates are the one-sided ones of `pprSelect`. A side that runs out of budget on
 * a near-tie is answered by the power iteration on that side's view (`pprSelectPower`).
 */
function authSelectJoint(
  index: GraphIndex,
  q: PprQuery,
  opts: PprOptions,
  d: number,
  tol: number,
  s: ReturnType<typeof sparseReset>,
  same: (a: readonly number[], b: readonly number[]) => boolean,
  sel: { candidates: ArrayLike<number>; k: number; ordered: boolean; slack: number },
): AuthSelectResult {
  const full = index.view('full');
  const auth = index.view('auth');
  const n = full.n;
  const tainted = index.taintedNodes();
  const pG = new Float64Array(n);
  const pA = new Float64Array(n);
  const rG = new Float64Array(n);
  const rA = new Float64Array(n);
  for (let i = 0; i < s.nodes.length; i++) {
    rG[s.nodes[i]!] = s.weights[i]!;
    rA[s.nodes[i]!] = s.weights[i]!;
  }
  const tuning: PushTuning = opts.push === false ? {} : (opts.push ?? {});
  const factor = tuning.factor ?? 2;
  const budget = tuning.budgetSweeps ?? 4;
  const arcsG = Math.max(1, full.targets.length);
  const arcsA = Math.max(1, auth.targets.length);
  const scratch = new Uint8Array(n);
  let eps = startLevel(full, tuning);
  let workG = 0;
  let workA = 0;
  let fullNodes: number[] | undefined;
  let fullScores: Float64Array = pG;
  let authNodes: number[] | undefined;
  let authFailed = false;
  // Levels are capped as well as work: on a view with no arcs (every edge unauthenticated) the
  // work never grows, and an exact tie there is never certified.
  // One side's certificate at the current push state (the same call for G and for G_A).
  const certify = (g: typeof full, p: typeof pG, r: typeof rG) => {
    const { rho, iso } = relaxedBounds(g, r, eps);
    const c = certifiedTopK(
      g,
      p,
      d,
      { r, rho, iso },
      true,
      sel.candidates,
      sel.k,
      sel.ordered,
      scratch,
      sel.slack,
    );
    return { c, rho, iso };
  };
  for (let level = 0; ; level++) {
    // Both sides open: one scan of each shared arc; one side settled: the plain relaxation.
    if (fullNodes === undefined && authNodes === undefined && !authFailed) {
      const w = relaxPair(full, auth, tainted, pG, rG, pA, rA, d, eps, s);
      workG += w.g;
      workA += w.a;
    } else if (fullNodes === undefined) workG += relax(full, pG, rG, d, eps, s);
    else workA += relax(auth, pA, rA, d, eps, s);
    if (fullNodes === undefined) {
      const { c, rho, iso } = certify(full, pG, rG);
      if (c.margin > sel.slack) {
        fullNodes = c.nodes;
        // Skip certificate on exact scores: ‖π_G − π_{G_A}‖₁ ≤ 2d/(1 − d)·Σ π_G(u)·φ_u, with
        // π_G(u) bounded above by the push certificate.
        if (authNodes === undefined) {
          let u = 0;
          for (let i = 0; i < tainted.length; i++) {
            const v = tainted[i]!;
            const sf = full.strength[v]!;
            if (sf > 0)
              u += upperBound(pG, full.strength, rho, iso, v) * (1 - auth.strength[v]! / sf);
          }
          if (c.margin > (2 * d * u) / (1 - d) + sel.slack) {
            return {
              full: fullNodes,
              fullIterations: workG / arcsG,
              fullScores: pG,
              auth: fullNodes,
              diverged: false,
              mode: 'certified',
              replayIterations: workA / arcsA,
            };
          }
        }
      } else if (workG > budget * arcsG || !(eps > 0) || level >= MAX_LEVELS) {
        // A near-tie on G: the power iteration answers (as `pprSelect` does); G_A goes on.
        const ref = pprSelectPower(full, q, opts);
        fullNodes = ref.nodes;
        fullScores = ref.scores;
        workG += ref.iterations * arcsG;
      }
    }
    if (authNodes === undefined && !authFailed) {
      const { c } = certify(auth, pA, rA);
      if (c.margin > sel.slack) authNodes = c.nodes;
      else if (workA > budget * arcsA || !(eps > 0) || level >= MAX_LEVELS) authFailed = true;
    }
    if (fullNodes !== undefined && (authNodes !== undefined || authFailed)) break;
    eps /= factor;
  }
  let replayIterations = workA / arcsA;
  if (authNodes === undefined) {
    // A near-tie (or an exact tie) on G_A: the power iteration on G_A answers, as for PPR.
    const ref = pprSelectPower(auth, q, opts);
    authNodes = ref.nodes;
    replayIterations += ref.iterations;
  }
  return {
    full: fullNodes,
    fullIterations: workG / arcsG,
    fullScores,
    auth: authNodes,
    diverged: !same(fullNodes, authNodes),
    mode: 'replayed',
    replayIterations,
  };
}

/**
 * The reference AuthSelect over PPR: power iteration on G, the skip certificate, and otherwise
 * an independent power iteration on G_A — exactly the straightforward AuthSelect (select on G,
 * select on G_A, compare), which is what every faster path must answer.
 *
 * (Until issue 19's fix the replay solved for δ = π_G − π_{G_A} on G_A and ranked π_G − δ. Where
 * G_A's scores tie exactly — a seed isolated in G_A leaves candidates at 0, and the independent
 * selection orders them by node number — the subtraction's rounding noise chose instead.)
 */
export function authSelectPprPower(
  index: GraphIndex,
  q: PprQuery,
  opts: PprOptions = {},
): AuthSelectResult {
  const d = opts.damping ?? PPR_DAMPING;
  const tol = opts.tol ?? 1e-8;
  const full = index.view('full');
  const s = resetVector(full.n, q.seeds);
  const pf = personalizedPageRank(full, s, opts);
  const ordered = q.ordered ?? true;
  const same = ordered ? sameOrder : sameSet;
  const sel = topK(pf.scores, q.candidates, q.k);
  const margin = ordered ? sel.minGap : sel.gap;
  const base = { full: sel.nodes, fullIterations: pf.iterations, fullScores: pf.scores };
  if (index.unauthenticatedCount === 0) {
    return { ...base, auth: sel.nodes, diverged: false, mode: 'clean', replayIterations: 0 };
  }
  const auth = index.view('auth');
  // Tainted nodes: endpoints of unauthenticated writes; Σ π̂(u)·φ_u over them.
  const tainted = index.taintedNodes();
  let u = 0;
  for (const v of tainted) {
    const sf = full.strength[v]!;
    if (sf > 0) u += pf.scores[v]! * (1 - auth.strength[v]! / sf);
  }
  // On exact scores: the G gap is at least margin − e (e = ‖π̂_G − π_G‖₁), ‖π_G − π_{G_A}‖₁ is
  // at most 2d/(1 − d)·(u + e) (φ ≤ 1), and a power iteration on G_A at `tol` ranks as the exact
  // π_{G_A} when its gaps exceed that iteration's own error, tol·d/(1 − d).
  const e = pf.errorBound;
  const bound = e + ((2 * d) / (1 - d)) * (u + e) + (tol * d) / (1 - d);
  if (margin > bound) {
    return { ...base, auth: sel.nodes, diverged: false, mode: 'certified', replayIterations: 0 };
  }
  const onA = pprSelectPower(auth, q, opts);
  return {
    ...base,
    auth: onA.nodes,
    diverged: !same(sel.nodes, onA.nodes),
    mode: 'replayed',
    replayIterations: onA.iterations,
  };
}

/**
 * Generic AuthSelect for any selector over a view (community, node-distance, …): run it on G,
 * replay the same selector on G_A unless the index is clean, compare the sets.
 */
export function authSelect<T extends Selection>(
  index: GraphIndex,
  selector: (view: Csr, which: 'full' | 'auth') => T,
): { full: T; auth: T; diverged: boolean; mode: ReplayMode } {
  const full = selector(index.view('full'), 'full');
  if (index.unauthenticatedCount === 0) return { full, auth: full, diverged: false, mode: 'clean' };
  const auth = selector(index.view('auth'), 'auth');
  return { full, auth, diverged: !sameSet([...full.nodes], [...auth.nodes]), mode: 'replayed' };
}

/**
 * The authority a selection carries into the gate: the weakest authority of the selected items,
 * and U when the selection diverged from its authenticated replay (the result was induced by
 * unauthenticated structure, §3.5). Feed it to `decideByAuthority(requiredAuthority(…), have)`.
 */
export function divergenceAuthority(
  index: GraphIndex,
  selected: readonly number[],
  diverged: boolean,
): Authority {
  let have: Authority = 'T';
  for (const v of selected) have = meetAuthority(have, index.nodeAuthority(v));
  return diverged ? meetAuthority(have, 'U') : have;
}

/** True when an authority is at least A (re-exported convenience for callers of this module). */
export { isAuthenticated };
