/**
 * @module core/graph/authselect
 * AuthSelect (§5, Algorithm 1): replay the deployment's own selector on the authenticated
 * subgraph G_A (every structural write below A removed — integrity follows the write, §5.2) and
 * compare with the selection on G. A divergence is an authority event, not a verdict: the caller
 * routes it through the gate (`core/gate` `decideByAuthority`), see {@link divergenceAuthority}.
 *
 * For PPR the replay is made cheap in two steps, both exact about the selected *set*:
 *
 * 1. A skip certificate. With δ = π_G − π_{G_A},
 *      δ = (I − d·M_A)⁻¹ · d·(M_G − M_A)·π_G,
 *    and column u of M_G − M_A has L1 norm 2·φ_u, φ_u the share of u's strength written through
 *    an unauthenticated channel. Hence ‖δ‖₁ ≤ 2d/(1 − d) · Σ_u π_G(u)·φ_u. When the top-k margin
 *    on G exceeds that (plus the solver error) — two scores move by at most ‖δ‖₁ together — no replay can change the set: skip it.
 *    A clean index (no unauthenticated structure) has bound 0 and never replays (§6.7).
 * 2. A delta replay. Otherwise solve (I − d·M_A)·δ = b, b = d(M_G − M_A)π_G (supported on the
 *    neighbourhood of the unauthenticated writes), and stop as soon as the top-k of π_G − δ is
 *    certified against the residual's error bound — L1, or per node in the degree-weighted max
 *    norm (see `replayDelta`) — or δ has converged to the base tolerance. The result is what an
 *    independent PPR on G_A selects.
 *
 * Both steps now run on the certified push of `core/graph/push` (ADR 0068): the G selection is
 * pushed only until its top-k is certified, the skip certificate uses the push's per-node upper
 * bounds on π_G, and the replay continues the *same* push state on G_A (estimate kept, residual
 * re-expressed for M_A on the tainted columns) until the G_A top-k is certified. Where a
 * certificate cannot separate a near-tie within the work budget, the power-iteration algorithm
 * above (`authSelectPprPower`, the reference) answers. Every answer is the one the reference
 * gives; only `mode` (which certificate settled it) and the work counters can differ.
 */
import { type Authority, meetAuthority } from '../trust.js';
import {
  PPR_DAMPING,
  type PprOptions,
  type Seed,
  personalizedPageRank,
  resetVector,
  topK,
  transitionStep,
} from './ppr.js';
import {
  MAX_LEVELS,
  type PushTuning,
  certifiedTopK,
  pushUntilCertified,
  relax,
  relaxPair,
  residualBounds,
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
  const mark = new Uint8Array(n);
  for (let i = 0; i < tainted.length; i++) mark[tainted[i]!] = 1;
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
    const { rho, iso } = residualBounds(g, r);
    const c = certifiedTopK(
      g,
      p,
      d,
      { r, rho, iso },
      true,
      undefined,
      sel.candidates,
      sel.k,
      sel.ordered,
      scratch,
    );
    return { c, rho, iso };
  };
  for (let level = 0; ; level++) {
    // Both sides open: one scan of each shared arc; one side settled: the plain relaxation.
    if (fullNodes === undefined && authNodes === undefined && !authFailed) {
      const w = relaxPair(full, auth, mark, pG, rG, pA, rA, d, eps, s);
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
 * The reference AuthSelect over PPR: power iteration on G, the margin certificate, and the delta
 * replay by Richardson steps (see the module comment).
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
  // Tainted nodes: endpoints of unauthenticated writes; Σ π(u)·φ_u over them.
  const tainted = index.taintedNodes();
  let u = 0;
  for (const v of tainted) {
    const sf = full.strength[v]!;
    if (sf > 0) u += pf.scores[v]! * (1 - auth.strength[v]! / sf);
  }
  const bound = (2 * d * u) / (1 - d) + 2 * pf.errorBound;
  if (margin > bound) {
    return { ...base, auth: sel.nodes, diverged: false, mode: 'certified', replayIterations: 0 };
  }
  const r = replayDelta(
    full,
    auth,
    pf.scores,
    s,
    tainted,
    d,
    q,
    tol,
    pf.errorBound,
    opts.maxIter ?? 200,
  );
  return {
    ...base,
    auth: r.nodes,
    diverged: !same(sel.nodes, r.nodes),
    mode: 'replayed',
    replayIterations: r.iterations,
  };
}

function replayDelta(
  full: Csr,
  auth: Csr,
  pf: Float64Array,
  s: Float64Array,
  tainted: Iterable<number>,
  d: number,
  q: PprQuery,
  tol: number,
  errF: number,
  maxIter: number,
): { nodes: number[]; iterations: number } {
  const n = full.n;
  // b = d·(M_G − M_A)·π_G: only columns of tainted nodes differ.
  const b = new Float64Array(n);
  for (const v of tainted) {
    const x = pf[v]!;
    if (x === 0) continue;
    const invF = full.invStrength[v]!;
    if (invF === 0) continue; // dangling in G, hence in G_A: identical columns
    for (let p = full.offsets[v]!; p < full.offsets[v + 1]!; p++)
      b[full.targets[p]!]! += d * x * full.weights[p]! * invF;
    const invA = auth.invStrength[v]!;
    if (invA === 0) {
      for (let w = 0; w < n; w++) if (s[w]! !== 0) b[w]! -= d * x * s[w]!;
    } else {
      for (let p = auth.offsets[v]!; p < auth.offsets[v + 1]!; p++)
        b[auth.targets[p]!]! -= d * x * auth.weights[p]! * invA;
    }
  }
  // Solve (I − d·M_A)·δ = b by Richardson steps in residual form: x ← x + r, r ← d·M_A·r.
  // Certificates (e = δ − x satisfies e = r + d·M_A·e):
  //  - L1: ‖e‖₁ ≤ ‖r‖₁/(1 − d), since ‖(I − d·M_A)⁻¹‖₁ ≤ 1/(1 − d);
  //  - per node: with f = D⁻¹e, D⁻¹·M_A·e = D⁻¹·W·f is a row average, so in the norm
  //    max_v |e_v|/S_v M_A does not expand and |e_c| ≤ S_c · max_v(|r_v|/S_v)/(1 − d). Valid when
  //    no residual sits on a dangling (isolated) node and no seed is isolated — the dangling
  //    reset term then vanishes. Far tighter on skewed graphs, where the residual lives on hubs.
  const x = new Float64Array(n);
  let r = Float64Array.from(b);
  let y = new Float64Array(n);
  const pa = new Float64Array(n);
  const cands = q.candidates;
  const ordered = q.ordered ?? true;
  const strength = auth.strength;
  let seedIsolated = false;
  for (let v = 0; v < n; v++) if (s[v]! !== 0 && strength[v] === 0) seedIsolated = true;
  const errFF = errF * (1 + (2 * d) / (1 - d));
  const dangling: number[] = [];
  for (let v = 0; v < n; v++) if (auth.invStrength[v] === 0) dangling.push(v);
  const invS = auth.invStrength;
  let it = 0;
  for (;;) {
    // One pass: x += (previous residual, already in x after the first step), residual stats.
    let norm = 0;
    let rhoD = 0;
    for (let v = 0; v < n; v++) {
      const a = Math.abs(r[v]!);
      norm += a;
      const t = a * invS[v]!;
      if (t > rhoD) rhoD = t;
    }
    let dangR = 0;
    for (const v of dangling) dangR += Math.abs(r[v]!);
    for (let i = 0; i < cands.length; i++) {
      const c = cands[i]!;
      pa[c] = pf[c]! - x[c]!;
    }
    const sel = topK(pa, cands, q.k);
    const err = norm / (1 - d) + errFF;
    // |e_i| + |e_j| ≤ ‖e‖₁ for i ≠ j, so a margin above the L1 error already fixes the result.
    let done = (ordered ? sel.minGap : sel.gap) > err;
    if (!done && dangR === 0 && !seedIsolated)
      done = certifyPerNode(sel.nodes, pa, cands, strength, rhoD / (1 - d), errFF, ordered);
    if (done || norm < tol || it >= maxIter) return { nodes: sel.nodes, iterations: it };
    let dm = 0;
    for (const v of dangling) dm += r[v]!;
    transitionStep(auth, r, y, s, d, dm, 0);
    for (let v = 0; v < n; v++) x[v]! += r[v]!;
    [r, y] = [y, r];
    it++;
  }
}

/**
 * The selection is fixed if every ordered neighbour pair (when `ordered`) and the k-boundary are
 * separated by the per-node bounds `strength[c]·scale + add`.
 */
function certifyPerNode(
  top: readonly number[],
  pa: Float64Array,
  cands: ArrayLike<number>,
  strength: Float64Array,
  scale: number,
  add: number,
  ordered: boolean,
): boolean {
  if (top.length === 0) return true;
  const lo = (c: number): number => pa[c]! - strength[c]! * scale - add;
  const hi = (c: number): number => pa[c]! + strength[c]! * scale + add;
  if (ordered)
    for (let i = 0; i + 1 < top.length; i++) if (!(lo(top[i]!) > hi(top[i + 1]!))) return false;
  let low = Infinity;
  for (const c of top) low = Math.min(low, lo(c));
  for (let i = 0; i < cands.length; i++) {
    const c = cands[i]!;
    if (pa[c]! + strength[c]! * scale + add >= low && !top.includes(c)) return false;
  }
  return true;
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
