/**
 * @module core/graph/push
 * Personalized PageRank by residual push (Andersen–Chung–Lang forward push, relaxed in
 * Gauss–Seidel sweeps over the CSR), stopped as soon as the top-k is *certified* — the exact PPR
 * vector provably has the same top-k as the estimate — instead of after a fixed tolerance on the
 * whole vector. ADR 0068 gives the measurements behind this choice.
 *
 * The convention is that of `ppr.ts` (igraph, AuthSelect App. C): π = (1 − d)·s + d·M·π with
 * M = W·D⁻¹ and dangling (isolated) columns resetting to s. Write Π(r) = (1 − d)(I − d·M)⁻¹·r,
 * so π = Π(s). Push keeps an estimate p and a residual r with the invariant
 *
 *     π = p + Π(r)                                                            (exact)
 *
 * starting from p = 0, r = s. Pushing node u moves (1 − d)·r_u into p_u and d·r_u along u's
 * column of M (to u's neighbours in proportion to the edge weights; to s when u is isolated);
 * Π(e_u) = (1 − d)·e_u + d·Π(M·e_u) keeps the invariant. A relaxation at level ε pushes until
 * |r_u| ≤ ε·S_u on every non-isolated node (S_u its strength) and |r_u| ≤ ε on isolated ones.
 *
 * Error certificate (per node). For a non-isolated u the walk never leaves u's component, and an
 * undirected walk is reversible: S_u·Π(e_u)(v) = S_v·Π(e_v)(u). Hence, with
 * ρ = max over non-isolated u of |r_u|/S_u and R = Σ over isolated u of |r_u|,
 *
 *     |π_v − p_v| ≤ S_v·ρ + R,   and π_v ≥ p_v when r ≥ 0.
 *
 * The certificate tightens this per candidate from the residual near it (`nearBounds`, ADR
 * 0078): an interval of width d²·S_c·ρ (d³ for the few candidates that need it) whose lower end
 * is not below p_c. The top-k ranked by these intervals is the exact top-k when every compared pair
 * is separated by more than `slack`, the reference power iteration's own error, so the answer
 * is also the one the power iteration at that tolerance gives. Otherwise ε is lowered and the
 * relaxation continues from where it stopped (no work is thrown away). A budget bounds the work:
 * past it (near-ties the certificate cannot separate) the caller falls back to the power
 * iteration.
 *
 * AuthSelect pushes a state on G and one on the authenticated subgraph G_A in the same sweeps
 * (`relaxPair`, ADR 0069): a node whose arcs are the same in both views is scanned once for both.
 */
import type { Csr } from './structure.js';

/** Per-view data derived once per CSR snapshot (views are immutable, so a WeakMap is exact). */
interface Derived {
  /** Nodes with strength 0 (dangling: their column of M resets to s). */
  readonly isolated: Int32Array;
  /** Σ strength (twice the total edge weight). */
  readonly volume: number;
}

const derivedCache = new WeakMap<Csr, Derived>();

function derived(g: Csr): Derived {
  let d = derivedCache.get(g);
  if (d === undefined) {
    const iso: number[] = [];
    let volume = 0;
    for (let v = 0; v < g.n; v++) {
      const s = g.strength[v]!;
      if (s === 0) iso.push(v);
      volume += s;
    }
    d = { isolated: Int32Array.from(iso), volume };
    derivedCache.set(g, d);
  }
  return d;
}

/** A normalised sparse reset vector s (the seeds). */
export interface SparseReset {
  readonly nodes: Int32Array;
  readonly weights: Float64Array;
}

/**
 * Relax (p, r) on `g` at level `eps`: Gauss–Seidel sweeps in node order, pushing every node over
 * its threshold, until a sweep pushes nothing. Returns the arc work done (arcs scanned). Signed
 * residuals are allowed (the threshold is on |r_u|). No allocation.
 */
export function relax(
  g: Csr,
  p: Float64Array,
  r: Float64Array,
  d: number,
  eps: number,
  s: SparseReset,
): number {
  const { n, offsets, targets, weights, strength, invStrength } = g;
  const keep = 1 - d;
  const sn = s.nodes;
  const sw = s.weights;
  let work = 0;
  for (;;) {
    let pushed = 0;
    for (let u = 0; u < n; u++) {
      const ru = r[u]!;
      // Isolated nodes have strength 0, so any non-zero residual enters; they have their own level.
      if (!(Math.abs(ru) > eps * strength[u]!)) continue;
      const inv = invStrength[u]!;
      if (inv === 0) {
        if (!(Math.abs(ru) > eps)) continue;
        r[u] = 0;
        p[u]! += keep * ru;
        const c = d * ru;
        for (let i = 0; i < sn.length; i++) r[sn[i]!]! += c * sw[i]!;
        pushed++;
        continue;
      }
      r[u] = 0;
      p[u]! += keep * ru;
      const c = d * ru * inv;
      const end = offsets[u + 1]!;
      const start = offsets[u]!;
      for (let k = start; k < end; k++) r[targets[k]!]! += c * weights[k]!;
      work += end - start;
      pushed++;
    }
    if (pushed === 0) return work;
  }
}

/**
 * Relax two push states at one level in the same sweeps (AuthSelect, ADR 0069): (pG, rG) on G
 * (`full`) and (pA, rA) on G_A (`auth`), Gauss–Seidel in node order until a sweep pushes
 * nothing on either. A node outside `tainted` (the endpoints of unauthenticated writes,
 * ascending and distinct, as `GraphIndex.taintedNodes` gives them) has the same column of M in
 * both views, so one scan of its arcs pushes both states; a tainted node is pushed per view over
 * that view's own arcs. Each state is pushed exactly where `relax` on its own view would push it
 * (|r_u| above the level), so on return each satisfies what `relax` guarantees, with the same
 * invariant. Returns the arc work per view.
 *
 * A sweep runs over the stretches between tainted nodes, so the hot loop reads no per-node taint
 * flag (ADR 0089: 10–17 % less CPU than a flag test per node, the pushes unchanged).
 */
export function relaxPair(
  full: Csr,
  auth: Csr,
  tainted: Int32Array,
  pG: Float64Array,
  rG: Float64Array,
  pA: Float64Array,
  rA: Float64Array,
  d: number,
  eps: number,
  s: SparseReset,
): { g: number; a: number } {
  const { n, offsets, targets, weights, strength, invStrength } = full;
  const keep = 1 - d;
  const nt = tainted.length;
  let workG = 0;
  let workA = 0;
  for (;;) {
    let pushed = 0;
    let u = 0;
    for (let ti = 0; ti <= nt; ti++) {
      const stop = ti < nt ? tainted[ti]! : n;
      for (; u < stop; u++) {
        const rg = rG[u]!;
        const ra = rA[u]!;
        const thr = eps * strength[u]!;
        const overG = Math.abs(rg) > thr;
        const overA = Math.abs(ra) > thr;
        if (!overG && !overA) continue;
        const inv = invStrength[u]!;
        if (inv === 0) {
          // Isolated in both views (same column): each state resets through s at its own level.
          if (pushNode(full, pG, rG, u, eps, d, s) >= 0) pushed++;
          if (pushNode(auth, pA, rA, u, eps, d, s) >= 0) pushed++;
          continue;
        }
        const start = offsets[u]!;
        const end = offsets[u + 1]!;
        pushed++;
        if (overG && overA) {
          rG[u] = 0;
          rA[u] = 0;
          pG[u]! += keep * rg;
          pA[u]! += keep * ra;
          const cg = d * rg * inv;
          const ca = d * ra * inv;
          for (let k = start; k < end; k++) {
            const t = targets[k]!;
            const w = weights[k]!;
            rG[t]! += cg * w;
            rA[t]! += ca * w;
          }
          workG += end - start;
          workA += end - start;
        } else if (overG) {
          rG[u] = 0;
          pG[u]! += keep * rg;
          const c = d * rg * inv;
          for (let k = start; k < end; k++) rG[targets[k]!]! += c * weights[k]!;
          workG += end - start;
        } else {
          rA[u] = 0;
          pA[u]! += keep * ra;
          const c = d * ra * inv;
          for (let k = start; k < end; k++) rA[targets[k]!]! += c * weights[k]!;
          workA += end - start;
        }
      }
      if (ti < nt) {
        // u is tainted: its columns differ, so each view pushes it over its own arcs.
        const wg = pushNode(full, pG, rG, u, eps, d, s);
        const wa = pushNode(auth, pA, rA, u, eps, d, s);
        if (wg >= 0) {
          workG += wg;
          pushed++;
        }
        if (wa >= 0) {
          workA += wa;
          pushed++;
        }
        u++;
      }
    }
    if (pushed === 0) return { g: workG, a: workA };
  }
}

/** One push of node u (as in `relax`); -1 when its residual is at or below the level. */
function pushNode(
  g: Csr,
  p: Float64Array,
  r: Float64Array,
  u: number,
  eps: number,
  d: number,
  s: SparseReset,
): number {
  const ru = r[u]!;
  if (!(Math.abs(ru) > eps * g.strength[u]!)) return -1;
  const inv = g.invStrength[u]!;
  if (inv === 0) {
    if (!(Math.abs(ru) > eps)) return -1;
    r[u] = 0;
    p[u]! += (1 - d) * ru;
    const c = d * ru;
    for (let j = 0; j < s.nodes.length; j++) r[s.nodes[j]!]! += c * s.weights[j]!;
    return 0;
  }
  r[u] = 0;
  p[u]! += (1 - d) * ru;
  const c = d * ru * inv;
  const start = g.offsets[u]!;
  const end = g.offsets[u + 1]!;
  for (let k = start; k < end; k++) r[g.targets[k]!]! += c * g.weights[k]!;
  return end - start;
}

/** The first relaxation level of a push on `g` (`startScale`/volume). */
export function startLevel(g: Csr, tuning: PushTuning = {}): number {
  return (tuning.startScale ?? 0.1) / Math.max(derived(g).volume, 1);
}

/** The certificate's two constants for a residual: ρ = max |r_u|/S_u (non-isolated), R = Σ_isolated |r_u|. */
export function residualBounds(g: Csr, r: Float64Array): { rho: number; iso: number } {
  const inv = g.invStrength;
  let rho = 0;
  for (let u = 0; u < g.n; u++) {
    const t = Math.abs(r[u]!) * inv[u]!;
    if (t > rho) rho = t;
  }
  let iso = 0;
  const isolated = derived(g).isolated;
  for (let i = 0; i < isolated.length; i++) iso += Math.abs(r[isolated[i]!]!);
  return { rho, iso };
}

/**
 * The certificate's constants right after a relaxation at level `eps`: every non-isolated u then
 * has |r_u| ≤ eps·S_u, so ρ ≤ eps (on the bench the exact maximum is eps to within 0.5 %), and
 * only the isolated nodes need reading for R (ADR 0085: saves an n-length pass per certificate).
 */
export function relaxedBounds(g: Csr, r: Float64Array, eps: number): { rho: number; iso: number } {
  let iso = 0;
  const isolated = derived(g).isolated;
  for (let i = 0; i < isolated.length; i++) iso += Math.abs(r[isolated[i]!]!);
  return { rho: eps, iso };
}

/** A residual the certificate accounts for, with its bound constants (see `residualBounds`). */
export interface ResidualPart {
  readonly r: Float64Array;
  readonly rho: number;
  readonly iso: number;
}

/**
 * Bounds on Π(r)(c) from the residual near c (ADR 0078). With f_x = |r_x|/S_x and, by
 * reversibility, Π(r)(c) = S_c·F(c) + Π(r_iso)(c), F(v) = Σ_x f_x·Π(e_v)(x) obeys
 *
 *     F(v) = (1 − d)·f_v + d·Σ_u (w_vu/S_v)·F(u),   0 ≤ F ≤ ρ,
 *
 * so unrolling it `depth` times (2 or 3) and closing with [0, ρ] gives F ∈ [L, U], U − L =
 * d^depth·ρ. For a non-negative residual Π(r)(c) ∈ [S_c·L, S_c·U + R]; for a signed one
 * |Π(r)(c)| ≤ S_c·U + R. Depth 2 scans c's arcs; depth 3 also its neighbours' (used only for
 * the few candidates a depth-2 certificate could not separate). `out` receives [lo, hi].
 */
function nearBounds(
  g: Csr,
  x: ResidualPart,
  d: number,
  c: number,
  depth: 2 | 3,
  oneSided: boolean,
  out: Float64Array,
): void {
  const { offsets, targets, weights, invStrength } = g;
  const r = x.r;
  const rho = x.rho;
  const sc = g.strength[c]!;
  if (sc === 0 || rho === 0) {
    out[0] = oneSided ? 0 : -x.iso;
    out[1] = x.iso;
    return;
  }
  const keep = 1 - d;
  let near = 0;
  let tail: number;
  if (depth === 2) {
    for (let k = offsets[c]!; k < offsets[c + 1]!; k++) {
      const t = targets[k]!;
      near += weights[k]! * Math.abs(r[t]!) * invStrength[t]!;
    }
    near = keep * near * invStrength[c]!;
    tail = d * rho;
  } else {
    // Σ_u (w_cu/S_c)·L2(u), L2(u) = (1 − d)·f_u + d(1 − d)·Σ_x (w_ux/S_u)·f_x; U2 = L2 + d²ρ.
    for (let k = offsets[c]!; k < offsets[c + 1]!; k++) {
      const u = targets[k]!;
      const iu = invStrength[u]!;
      let nu = 0;
      for (let j = offsets[u]!; j < offsets[u + 1]!; j++) {
        const t = targets[j]!;
        nu += weights[j]! * Math.abs(r[t]!) * invStrength[t]!;
      }
      near += weights[k]! * (keep * Math.abs(r[u]!) * iu + d * keep * nu * iu);
    }
    near *= invStrength[c]!;
    tail = d * d * rho;
  }
  const lo = keep * Math.abs(r[c]!) * invStrength[c]! + d * near;
  const hi = Math.min(rho, lo + d * tail);
  out[0] = oneSided ? sc * lo : -(sc * hi + x.iso);
  out[1] = sc * hi + x.iso;
}

/**
 * The top `k` of `candidates` and the certified margin: the smallest separation, on the
 * *exact* scores π = p + Π(r), between compared pairs — consecutive pairs of the top-k when
 * `ordered`, and the k-th against every other candidate. Positive means the exact top-k (in
 * order when `ordered`) is `nodes`; Infinity when nothing is compared.
 *
 * Every candidate gets the crude interval [p_c (or p_c − S_c·ρ − R when signed), p_c + S_c·ρ +
 * R]; those that can reach the top-k get the depth-2 interval of {@link nearBounds} and are
 * ranked by its midpoint (ties by node number); if that margin is not above `need`, the nodes
 * of the failing comparisons get depth 3 (ADR 0078). `scratch` is a zeroed Uint8Array of
 * length n, returned zeroed.
 */
export function certifiedTopK(
  g: Csr,
  p: Float64Array,
  d: number,
  pushed: ResidualPart,
  oneSided: boolean,
  candidates: ArrayLike<number>,
  k: number,
  ordered: boolean,
  scratch: Uint8Array,
  need = 0,
): { nodes: number[]; margin: number } {
  const want = Math.min(k, candidates.length);
  if (want <= 0) return { nodes: [], margin: Infinity };
  const strength = g.strength;
  const crudeRho = pushed.rho;
  const crudeIso = pushed.iso;
  const iv = new Float64Array(2);
  // The pool: the top-k by p and every candidate whose upper bound reaches their lowest lower
  // bound. Everything else is below the pool; `out` is the highest upper bound among them.
  const pool: number[] = topByEstimate(p, candidates, want);
  const lo: number[] = [];
  const hi: number[] = [];
  let low = Infinity;
  for (const c of pool) {
    nearBounds(g, pushed, d, c, 2, oneSided, iv);
    lo.push(p[c]! + iv[0]!);
    hi.push(p[c]! + iv[1]!);
    low = Math.min(low, p[c]! + iv[0]!);
    scratch[c] = 1;
  }
  let out = -Infinity;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i]!;
    if (scratch[c] === 1) continue;
    const h = p[c]! + strength[c]! * crudeRho + crudeIso;
    if (h < low) {
      if (h > out) out = h;
      continue;
    }
    nearBounds(g, pushed, d, c, 2, oneSided, iv);
    if (p[c]! + iv[1]! < low) {
      if (p[c]! + iv[1]! > out) out = p[c]! + iv[1]!;
      continue;
    }
    pool.push(c);
    lo.push(p[c]! + iv[0]!);
    hi.push(p[c]! + iv[1]!);
  }
  for (let i = 0; i < want; i++) scratch[pool[i]!] = 0;
  let best = certifyPool(pool, lo, hi, want, ordered, out, need);
  if (best.margin > need || !(crudeRho > 0)) return { nodes: best.nodes, margin: best.margin };
  // Depth 3 for the nodes of the comparisons that failed.
  const idx = new Map<number, number>();
  for (let i = 0; i < pool.length; i++) idx.set(pool[i]!, i);
  let refined = 0;
  for (const c of best.failing) {
    const i = idx.get(c)!;
    nearBounds(g, pushed, d, c, 3, oneSided, iv);
    lo[i] = Math.max(lo[i]!, p[c]! + iv[0]!);
    hi[i] = Math.min(hi[i]!, p[c]! + iv[1]!);
    refined++;
  }
  if (refined > 0) best = certifyPool(pool, lo, hi, want, ordered, out, need);
  // Still failing: refine the failing candidates by a local push from each of them (ADR 0085),
  // within a small arc budget; past it the caller relaxes a whole level instead.
  if (best.margin > need || best.failing.length === 0)
    return { nodes: best.nodes, margin: best.margin };
  const cap = localArcs(g);
  const local = new Map<number, LocalPush>();
  try {
    let spent = 0;
    for (let round = 0; round < MAX_LOCAL_ROUNDS && best.margin <= need; round++) {
      let progressed = false;
      for (const c of best.failing) {
        if (!(strength[c]! > 0)) continue;
        let st = local.get(c);
        if (st === undefined) {
          st = new LocalPush(g, c, d);
          local.set(c, st);
        }
        const w = st.refine(cap - spent);
        if (w < 0) continue;
        spent += w;
        progressed = true;
        st.bounds(pushed, oneSided, iv);
        const i = idx.get(c)!;
        lo[i] = Math.max(lo[i]!, p[c]! + iv[0]!);
        hi[i] = Math.min(hi[i]!, p[c]! + iv[1]!);
      }
      if (!progressed) break;
      best = certifyPool(pool, lo, hi, want, ordered, out, need);
    }
  } finally {
    for (const st of local.values()) st.release();
  }
  return { nodes: best.nodes, margin: best.margin };
}

/** Rounds of local refinement per certificate (each halves the local push's level). */
const MAX_LOCAL_ROUNDS = 16;

/** Arcs one certificate may spend on local pushes: 1/16 of the view's arcs (≈ 1/8 of a level). */
function localArcs(g: Csr): number {
  return Math.max(64, g.targets.length >> 4);
}

/**
 * Zeroed n-length vectors per view for the local pushes (ADR 0089). A certificate that refines a
 * near-tie starts a local push per failing candidate, and allocating and zeroing two n-length
 * vectors for each cost more than the ~1,000 arcs the refinement scans (40 % of such a
 * certificate, with the collector). They come back zeroed through the nodes a push touched.
 * Views are immutable snapshots, so the WeakMap frees a pool with its view.
 */
const zeroedPool = new WeakMap<Csr, Float64Array[]>();

/** Most vectors a view's pool keeps (a certificate holds a handful of local pushes at once). */
const POOL_MAX = 16;

function takeZeroed(g: Csr): Float64Array {
  return zeroedPool.get(g)?.pop() ?? new Float64Array(g.n);
}

function giveZeroed(g: Csr, v: Float64Array): void {
  let pool = zeroedPool.get(g);
  if (pool === undefined) {
    pool = [];
    zeroedPool.set(g, pool);
  }
  if (pool.length < POOL_MAX) pool.push(v);
}

/**
 * A forward push from one candidate c (ADR 0085): Π(e_c) = q + Π(res) with q, res ≥ 0 and
 * ‖q‖₁ + ‖res‖₁ = 1 (c is not isolated, so the walk never meets a dangling node). With f = |r|/S
 * and F(c) = Σ_x f_x·Π(e_c)(x) (the quantity `nearBounds` bounds), 0 ≤ f ≤ ρ and
 * Π(res) = (1 − d)·res + d·Π(M·res) give
 *
 *     ⟨f, q⟩ + (1 − d)⟨f, res⟩ ≤ F(c) ≤ ⟨f, q⟩ + (1 − d)⟨f, res⟩ + d·ρ·‖res‖₁,
 *
 * an interval of width d·ρ·‖res‖₁, which each push narrows. `nearBounds` at depth t is the
 * special case res = d^(t−1)·(t−1-step walk distribution); pushing by res_u/S_u instead spends
 * the arcs where they remove the most mass and does not expand hubs that hold little of it.
 */
export class LocalPush {
  private readonly q: Float64Array;
  private readonly res: Float64Array;
  private readonly touched: number[] = [];
  private eta: number;

  constructor(
    private readonly g: Csr,
    c: number,
    private readonly d: number,
  ) {
    this.q = takeZeroed(g);
    this.res = takeZeroed(g);
    this.res[c] = 1;
    this.touched.push(c);
    // The first round pushes c and whatever holds at least half of c's share per arc.
    this.eta = 0.5 / g.strength[c]!;
  }

  /** Push every node over the current level (FIFO), then halve it. Arcs scanned, or -1 if over `maxArcs`. */
  refine(maxArcs: number): number {
    const { offsets, targets, weights, invStrength, strength } = this.g;
    const { q, res, touched, d } = this;
    const eta = this.eta;
    // The invariant holds between any two pushes, so the budget may cut a round short.
    const queue: number[] = [];
    for (const u of touched) if (res[u]! > eta * strength[u]!) queue.push(u);
    if (queue.length === 0) {
      this.eta = eta / 2;
      return 0;
    }
    let arcs = 0;
    const keep = 1 - d;
    for (let h = 0; h < queue.length; h++) {
      const u = queue[h]!;
      const ru = res[u]!;
      if (!(ru > eta * strength[u]!)) continue;
      const deg = offsets[u + 1]! - offsets[u]!;
      if (arcs + deg > maxArcs) return arcs === 0 ? -1 : this.finish(arcs, eta);
      arcs += deg;
      res[u] = 0;
      q[u]! += keep * ru;
      const c = d * ru * invStrength[u]!;
      for (let k = offsets[u]!; k < offsets[u + 1]!; k++) {
        const t = targets[k]!;
        const before = res[t]!;
        if (before === 0 && q[t] === 0) touched.push(t);
        const after = before + c * weights[k]!;
        res[t] = after;
        if (!(before > eta * strength[t]!) && after > eta * strength[t]!) queue.push(t);
      }
    }
    return this.finish(arcs, eta);
  }

  private finish(arcs: number, eta: number): number {
    this.eta = eta / 2;
    return arcs;
  }

  /**
   * Give the two vectors back to the view's pool, zeroed (every non-zero entry of q and res is in
   * `touched`: an entry first becomes non-zero by receiving mass while both were 0). The push
   * must not be used afterwards.
   */
  release(): void {
    const { q, res } = this;
    for (const u of this.touched) {
      q[u] = 0;
      res[u] = 0;
    }
    giveZeroed(this.g, q);
    giveZeroed(this.g, res);
  }

  /** Bounds on Π(r)(c) from this push, written as `nearBounds` writes them. */
  bounds(x: ResidualPart, oneSided: boolean, out: Float64Array): void {
    const { invStrength } = this.g;
    const r = x.r;
    const keep = 1 - this.d;
    let known = 0;
    let mass = 0;
    for (const u of this.touched) {
      const fu = Math.abs(r[u]!) * invStrength[u]!;
      known += fu * (this.q[u]! + keep * this.res[u]!);
      mass += this.res[u]!;
    }
    const sc = this.g.strength[this.touched[0]!]!;
    const lo = known;
    const hi = Math.min(x.rho, known + this.d * x.rho * mass);
    out[0] = oneSided ? sc * lo : -(sc * hi + x.iso);
    out[1] = sc * hi + x.iso;
  }
}

/**
 * Rank a pool of candidates with intervals [lo, hi] by midpoint (ties by node number), take the
 * top `want`, and the margin: consecutive pairs (when `ordered`) and the lowest selected lower
 * bound against every other upper bound (pool and `out`). `failing`: the pool nodes of the
 * comparisons separated by `need` or less.
 */
function certifyPool(
  pool: readonly number[],
  lo: readonly number[],
  hi: readonly number[],
  want: number,
  ordered: boolean,
  out: number,
  need: number,
): { nodes: number[]; margin: number; failing: number[] } {
  const order = pool.map((_, i) => i);
  order.sort((a, b) => lo[b]! + hi[b]! - (lo[a]! + hi[a]!) || pool[a]! - pool[b]!);
  const nodes: number[] = [];
  for (let j = 0; j < want; j++) nodes.push(pool[order[j]!]!);
  const fail = new Set<number>();
  let margin = Infinity;
  if (ordered)
    for (let j = 0; j + 1 < want; j++) {
      const m = lo[order[j]!]! - hi[order[j + 1]!]!;
      margin = Math.min(margin, m);
      if (m <= need) fail.add(pool[order[j]!]!).add(pool[order[j + 1]!]!);
    }
  if (order.length > want || out > -Infinity) {
    let low = Infinity;
    for (let j = 0; j < want; j++) low = Math.min(low, lo[order[j]!]!);
    let high = out;
    for (let j = want; j < order.length; j++) {
      const i = order[j]!;
      high = Math.max(high, hi[i]!);
      if (low - hi[i]! <= need) fail.add(pool[i]!);
    }
    for (let j = 0; j < want; j++) if (lo[order[j]!]! - high <= need) fail.add(pool[order[j]!]!);
    margin = Math.min(margin, low - high);
  }
  return { nodes, margin, failing: [...fail] };
}

/** The k best candidates by score, descending, ties by node number (O(|candidates|·k)). */
function topByEstimate(scores: Float64Array, candidates: ArrayLike<number>, k: number): number[] {
  const want = Math.min(k, candidates.length);
  const best: number[] = [];
  if (want <= 0) return best;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i]!;
    const sc = scores[c]!;
    if (best.length === want) {
      const last = best[want - 1]!;
      const ls = scores[last]!;
      if (sc < ls || (sc === ls && c > last)) continue;
      best.pop();
    }
    let j = best.length;
    while (j > 0) {
      const o = best[j - 1]!;
      const os = scores[o]!;
      if (os > sc || (os === sc && o < c)) break;
      j--;
    }
    best.splice(j, 0, c);
  }
  return best;
}

/** Relaxation levels before a push gives up to the power iteration (ε falls by 2⁶⁴). */
export const MAX_LEVELS = 64;

/** Tuning of the certified push (defaults measured in ADR 0068). */
export interface PushTuning {
  /** First relaxation level, as a multiple of 1/volume (the mean of π_v/S_v). Default 0.1. */
  readonly startScale?: number;
  /** Each refinement divides ε by this. Default 2. */
  readonly factor?: number;
  /** Give up (caller falls back to power iteration) past this many arcs·(1/|arcs|). Default 4. */
  readonly budgetSweeps?: number;
}

export interface PushRun {
  /** Certified top-k (undefined when the budget ran out first). */
  readonly nodes: number[] | undefined;
  readonly margin: number;
  /** The residual's bound constants (ρ, R) at the end. */
  readonly rho: number;
  readonly iso: number;
  /** Arc work in units of one full sweep over the view's arcs. */
  readonly sweeps: number;
  readonly eps: number;
}

export interface PushGoal {
  readonly candidates: ArrayLike<number>;
  readonly k: number;
  readonly ordered: boolean;
  /** The residual is non-negative (p is then a lower bound). */
  readonly oneSided: boolean;
  /** Required certified margin (the reference's own error). */
  readonly slack: number;
  /** Arc work allowed, in sweeps (default the tuning's `budgetSweeps`). */
  readonly budgetSweeps?: number;
  /** First level (default `startScale`/volume). */
  readonly eps0?: number;
}

/**
 * Relax (p, r) on `g` at decreasing levels until the top-k of p is certified with `margin >
 * slack`, or the work budget is spent. `margin` is what the last certificate proved.
 */
export function pushUntilCertified(
  g: Csr,
  p: Float64Array,
  r: Float64Array,
  d: number,
  s: SparseReset,
  goal: PushGoal,
  tuning: PushTuning = {},
): PushRun {
  const { volume } = derived(g);
  const factor = tuning.factor ?? 2;
  const arcs = Math.max(1, g.targets.length);
  const budget = (goal.budgetSweeps ?? tuning.budgetSweeps ?? 4) * arcs;
  let eps = goal.eps0 ?? (tuning.startScale ?? 0.1) / Math.max(volume, 1);
  const scratch = new Uint8Array(g.n);
  let work = 0;
  // Levels are capped as well as work: when every seed is isolated the work never grows, and the
  // exact tie among the candidates (all 0) is never certified; below 2⁻⁶⁴ of the first level a
  // relaxation only chases denormals (it took minutes before the cap).
  for (let level = 0; ; level++) {
    work += relax(g, p, r, d, eps, s);
    const { rho, iso } = relaxedBounds(g, r, eps);
    const c = certifiedTopK(
      g,
      p,
      d,
      { r, rho, iso },
      goal.oneSided,
      goal.candidates,
      goal.k,
      goal.ordered,
      scratch,
      goal.slack,
    );
    if (c.margin > goal.slack)
      return { nodes: c.nodes, margin: c.margin, rho, iso, sweeps: work / arcs, eps };
    if (work > budget || !(eps > 0) || level >= MAX_LEVELS)
      return { nodes: undefined, margin: c.margin, rho, iso, sweeps: work / arcs, eps };
    eps /= factor;
  }
}

/** Upper bound on π_v from a push state (for the skip certificate's Σ π·φ). */
export function upperBound(
  p: Float64Array,
  strength: Float64Array,
  rho: number,
  iso: number,
  v: number,
): number {
  return p[v]! + strength[v]! * rho + iso;
}

/** Sparse normalised reset from seeds (same validation and normalisation as `resetVector`). */
export function sparseReset(
  n: number,
  seeds: readonly { node: number; weight: number }[],
): SparseReset {
  const acc = new Map<number, number>();
  let total = 0;
  for (const x of seeds) {
    if (x.node < 0 || x.node >= n || !(x.weight > 0)) continue;
    acc.set(x.node, (acc.get(x.node) ?? 0) + x.weight);
    total += x.weight;
  }
  if (total === 0)
    throw new RangeError('PPR needs at least one in-range seed with positive weight');
  const nodes = new Int32Array(acc.size);
  const weights = new Float64Array(acc.size);
  let i = 0;
  for (const [node, w] of acc) {
    nodes[i] = node;
    weights[i] = w / total;
    i++;
  }
  return { nodes, weights };
}
