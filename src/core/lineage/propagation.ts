/**
 * @module core/lineage/propagation
 * The propagation rule of MemLineage §3.5, Equation (1), and the strict operating point of
 * §6.6 as explicit knobs.
 *
 *     trust(c) = max_{p ∈ P_c} 1[w(p,c) > τ] · trust(p)
 *
 * Trust values are MemLineage's numeric labels from `core/trust` (`labelValue`: TRUSTED 0 <
 * DERIVED_TRUSTED 1 < DERIVED_UNTRUSTED 2 < EXTERNAL 3; larger is less safe), so the max picks
 * the riskiest still-strong parent. The inequality is strict: at τ = 0 every parent with a
 * positive weight contributes; at τ = 1 no weight in [0, 1] contributes (the inert endpoint).
 *
 * ## Label of a derived entry (our reading of §2.3 and §3.5)
 * Equation (1) yields a raw value r, or "no strong parent". The entry's stored label is:
 *
 * | entry                                    | label                                   |
 * |------------------------------------------|-----------------------------------------|
 * | own tier EXTERNAL_TOOL / EXTERNAL_WEB    | EXTERNAL (its channel; r can only be ≤3) |
 * | not derived (no parents, direct write)   | baseLabel(tier) = TRUSTED               |
 * | derived, ≥ 1 strong parent, r ≤ 1        | DERIVED_TRUSTED  (= max(r, 1))          |
 * | derived, ≥ 1 strong parent, r ≥ 2        | DERIVED_UNTRUSTED                       |
 * | derived, no strong parent (incl. none)   | `fallback` (TRUSTED §3.5; DERIVED_UNTRUSTED strict, §8) |
 *
 * The map r ↦ label is monotone and keeps r ≥ 2 at ≥ 2, so Theorem 1 (untrusted-path
 * persistence) holds on stored labels: an EXTERNAL ancestor reaches the tip as
 * DERIVED_UNTRUSTED. §2.3 names the derived label by the *parents'* status ("derived from
 * parents that all evaluate above τ"), which is why a trusted-side child is DERIVED_TRUSTED,
 * never TRUSTED, once a strong edge exists.
 *
 * The hot function {@link strongMax} allocates nothing and runs over plain number arrays; the
 * issue target is ≤ 1 µs for 8 parents.
 */
import { MemwardenError } from '../errors.js';
import { type SourceTier, type TrustLabel, baseLabel, isTrustLabel, labelValue } from '../trust.js';

/** Returned by {@link strongMax} when no parent edge is strong. */
export const NO_STRONG_PARENT = -1;

/**
 * Propagation settings. Security-relevant, so every field is explicit at the call site
 * (CONVENTIONS: no permissive default hidden in a helper); start from
 * {@link DEFAULT_LINEAGE_OPTIONS} or {@link strictLineageOptions}.
 */
export interface LineageOptions {
  /** Declassification threshold τ ∈ [0, 1]; an edge is strong iff w > τ (strict). */
  readonly tau: number;
  /**
   * Label of a derived entry with no strong parent (§3.5 fallback). `TRUSTED` is the paper's
   * default; `DERIVED_UNTRUSTED` is the fail-closed variant of §8 (more false positives).
   */
  readonly fallback: 'TRUSTED' | 'DERIVED_TRUSTED' | 'DERIVED_UNTRUSTED';
  /**
   * §6.6 "zero-threshold explicit edges": an edge the writer declared explicitly (not
   * auto-attributed from the last retrieval) whose parent is untrusted (value ≥ 2) is strong
   * at τ = 0, i.e. whenever its weight is positive. Closes edge dilution (Table 12).
   */
  readonly zeroThresholdExplicitEdges: boolean;
  /**
   * §6.6 "lower τ for multi-hop summaries": the threshold used for entries flagged
   * `multiHop` (summaries of summaries), where attribution decays with depth
   * (w_k = w0·d^(k−1)). The effective threshold is min(tau, multiHopTau). Undefined = off.
   */
  readonly multiHopTau?: number;
  /**
   * §6.6 "parentless sensitive deny": consumed by the gate (`core/gate`), which refuses a
   * sensitive action justified by a memory entry that has no parents. Carried here so one
   * options object describes the whole operating point.
   */
  readonly parentlessSensitiveDeny: boolean;
}

/** The paper's default (utility-first) operating point: τ = 0 (§6.5), Trusted fallback. */
export const DEFAULT_LINEAGE_OPTIONS: LineageOptions = Object.freeze({
  tau: 0,
  fallback: 'TRUSTED',
  zeroThresholdExplicitEdges: false,
  parentlessSensitiveDeny: false,
});

/**
 * The strict (security-first) operating point of §6.6 at threshold `tau`: Derived-Untrusted
 * fallback, zero-threshold explicit untrusted edges, multi-hop threshold 0 (any positive
 * attribution on a multi-hop summary propagates, whatever the chain length K), parentless
 * sensitive deny. Table 13 lists the utility cost (parentless deny blocks direct reminders).
 */
export function strictLineageOptions(tau = 0.3): LineageOptions {
  return validateLineageOptions({
    tau,
    fallback: 'DERIVED_UNTRUSTED',
    zeroThresholdExplicitEdges: true,
    multiHopTau: 0,
    parentlessSensitiveDeny: true,
  });
}

const inUnit = (x: unknown): x is number => typeof x === 'number' && x >= 0 && x <= 1;

/** Check an options object; throws `LINEAGE_INVALID`. Returns it frozen. */
export function validateLineageOptions(o: LineageOptions): LineageOptions {
  if (!inUnit(o.tau)) throw new MemwardenError('LINEAGE_INVALID', 'tau must be in [0, 1]');
  if (o.multiHopTau !== undefined && !inUnit(o.multiHopTau))
    throw new MemwardenError('LINEAGE_INVALID', 'multiHopTau must be in [0, 1]');
  if (
    o.fallback !== 'TRUSTED' &&
    o.fallback !== 'DERIVED_TRUSTED' &&
    o.fallback !== 'DERIVED_UNTRUSTED'
  )
    throw new MemwardenError(
      'LINEAGE_INVALID',
      'fallback must be TRUSTED, DERIVED_TRUSTED or DERIVED_UNTRUSTED',
    );
  if (
    typeof o.zeroThresholdExplicitEdges !== 'boolean' ||
    typeof o.parentlessSensitiveDeny !== 'boolean'
  )
    throw new MemwardenError('LINEAGE_INVALID', 'strict knobs must be booleans');
  return Object.isFrozen(o) ? o : Object.freeze({ ...o });
}

/**
 * Equation (1) on raw numbers: the max of `trust[i]` over the edges with `weights[i] > tau`,
 * or {@link NO_STRONG_PARENT}. `explicitTau` (default = `tau`) is the threshold for edges with
 * `explicit[i]` set whose parent value is ≥ 2 (the zero-threshold knob passes 0).
 * No allocation; O(n).
 */
export function strongMax(
  trust: ArrayLike<number>,
  weights: ArrayLike<number>,
  tau: number,
  explicit?: ArrayLike<boolean>,
  explicitTau: number = tau,
): number {
  let best = NO_STRONG_PARENT;
  const n = trust.length;
  for (let i = 0; i < n; i++) {
    const t = trust[i] as number;
    const threshold = explicit !== undefined && explicit[i] === true && t >= 2 ? explicitTau : tau;
    if ((weights[i] as number) > threshold && t > best) best = t;
  }
  return best;
}

/** One parent edge as the propagation sees it. */
export interface ParentEdge {
  /** The parent's (already propagated) label. */
  readonly label: TrustLabel;
  /** Attribution weight w(p, c) ∈ [0, 1]. */
  readonly weight: number;
  /** Declared explicitly by the writer (vs auto-attributed from the last retrieval, §4.4). */
  readonly explicit?: boolean;
}

/** What the propagation needs to know about the child. */
export interface ChildFacts {
  /** The child's own source tier (its ingestion channel). */
  readonly tier: SourceTier;
  /**
   * Whether the child was derived by the model from context. Defaults to "has parents". Set
   * `true` for a derived write with no declared parents (parent omission, §6.6): it then
   * takes the fallback label.
   */
  readonly derived?: boolean;
  /** A summary over summaries: uses `min(tau, multiHopTau)` when that knob is set. */
  readonly multiHop?: boolean;
}

/** The threshold that applies to a child (τ, or the lower multi-hop τ). */
export function thresholdFor(child: Pick<ChildFacts, 'multiHop'>, o: LineageOptions): number {
  return child.multiHop === true && o.multiHopTau !== undefined
    ? Math.min(o.tau, o.multiHopTau)
    : o.tau;
}

/** Whether one edge is strong under `o` for a child with threshold `tau` (see {@link strongMax}). */
export function isStrongEdge(edge: ParentEdge, tau: number, o: LineageOptions): boolean {
  const zero =
    o.zeroThresholdExplicitEdges && edge.explicit === true && labelValue(edge.label) >= 2;
  return edge.weight > (zero ? 0 : tau);
}

/**
 * Raw Equation (1) over labelled edges: the max numeric trust over strong parents, or
 * {@link NO_STRONG_PARENT}. No allocation.
 */
export function propagateRaw(
  parents: readonly ParentEdge[],
  tau: number,
  o: LineageOptions,
): number {
  let best = NO_STRONG_PARENT;
  const zeroExplicit = o.zeroThresholdExplicitEdges;
  for (let i = 0; i < parents.length; i++) {
    const p = parents[i] as ParentEdge;
    const t = labelValue(p.label);
    const threshold = zeroExplicit && p.explicit === true && t >= 2 ? 0 : tau;
    if (p.weight > threshold && t > best) best = t;
  }
  return best;
}

/** Map a raw Equation (1) value to the stored label of a derived, non-external child. */
export function derivedLabel(raw: number, fallback: LineageOptions['fallback']): TrustLabel {
  if (raw === NO_STRONG_PARENT) return fallback;
  return raw >= 2 ? 'DERIVED_UNTRUSTED' : 'DERIVED_TRUSTED';
}

/**
 * The label of a child (module table). Weights must be in [0, 1] and labels valid; callers on
 * untrusted input validate first ({@link validateEdges}) — the DAG does.
 */
export function propagate(
  child: ChildFacts,
  parents: readonly ParentEdge[],
  o: LineageOptions,
): TrustLabel {
  const own = baseLabel(child.tier);
  if (own === 'EXTERNAL') return 'EXTERNAL';
  const derived = child.derived ?? parents.length > 0;
  if (!derived) return own;
  return derivedLabel(propagateRaw(parents, thresholdFor(child, o), o), o.fallback);
}

/** Validate edges from outside (weights finite in [0, 1], labels known); `LINEAGE_INVALID`. */
export function validateEdges(parents: readonly ParentEdge[]): void {
  for (const p of parents) {
    if (!inUnit(p.weight) || Number.isNaN(p.weight))
      throw new MemwardenError('LINEAGE_INVALID', 'edge weight must be a number in [0, 1]');
    if (!isTrustLabel(p.label)) throw new MemwardenError('LINEAGE_INVALID', 'unknown parent label');
  }
}
