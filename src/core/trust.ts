/**
 * @module core/trust
 * The one trust lattice. memwarden has three views of trust and this module is the only
 * place that relates them; everything else asks here.
 *
 * 1. Source tier (article Pattern 1) — fixed at write time by the ingestion channel, never by
 *    the content: OPERATOR > USER_VERIFIED > USER_OBSERVED > EXTERNAL_TOOL > EXTERNAL_WEB.
 * 2. Lineage label (MemLineage §3.2, §3.5) — TRUSTED(0) < DERIVED_TRUSTED(1) <
 *    DERIVED_UNTRUSTED(2) < EXTERNAL(3), where a larger value is *less* safe, so propagation
 *    can take a max.
 * 3. Authority (AuthSelect §3.1) — ⊥ < U < A < T: none, unauthenticated, authenticated,
 *    trusted policy / administrative.
 *
 * The mapping (docs/architecture.md, "Trust lattice"):
 *
 * | tier          | base label | tier authority |
 * |---------------|------------|----------------|
 * | OPERATOR      | TRUSTED    | T              |
 * | USER_VERIFIED | TRUSTED    | A              |
 * | USER_OBSERVED | TRUSTED    | A              |
 * | EXTERNAL_TOOL | EXTERNAL   | U              |
 * | EXTERNAL_WEB  | EXTERNAL   | U              |
 *
 * | label             | label authority |
 * |-------------------|-----------------|
 * | TRUSTED           | T               |
 * | DERIVED_TRUSTED   | T               |
 * | DERIVED_UNTRUSTED | U               |
 * | EXTERNAL          | U               |
 *
 * An entry's effective authority is the weakest of its tier's authority and its label's
 * authority; because the label already carries the worst strong-edge ancestor (Theorem 1),
 * this is "the weakest of its own tier and that of every ancestor reached through strong
 * edges" (DESIGN.md). An entry that fails verification has authority ⊥.
 */

/** Source tiers, most trusted first. Numeric rank 1..5 as in the article's `Trust` enum. */
export const SourceTiers = [
  'OPERATOR',
  'USER_VERIFIED',
  'USER_OBSERVED',
  'EXTERNAL_TOOL',
  'EXTERNAL_WEB',
] as const;
export type SourceTier = (typeof SourceTiers)[number];

/** Lineage labels in MemLineage's numeric order (0 = safest). */
export const TrustLabels = ['TRUSTED', 'DERIVED_TRUSTED', 'DERIVED_UNTRUSTED', 'EXTERNAL'] as const;
export type TrustLabel = (typeof TrustLabels)[number];

/** Authority levels, weakest first: ⊥ < U < A < T. */
export const AuthorityLevels = ['BOTTOM', 'U', 'A', 'T'] as const;
export type Authority = (typeof AuthorityLevels)[number];

/** Principal kinds (DESIGN.md "Writers are principals"). `operator` is deployment tooling. */
export const PrincipalKinds = ['operator', 'user', 'agent', 'tool', 'external'] as const;
export type PrincipalKind = (typeof PrincipalKinds)[number];

/** 1 (OPERATOR) … 5 (EXTERNAL_WEB): the article's numeric tier. */
export function tierRank(t: SourceTier): number {
  return SourceTiers.indexOf(t) + 1;
}

/** MemLineage's numeric trust value 0..3 (larger is less safe). */
export function labelValue(l: TrustLabel): 0 | 1 | 2 | 3 {
  // A switch, not indexOf: the gate and propagation call this on their hot paths.
  switch (l) {
    case 'TRUSTED':
      return 0;
    case 'DERIVED_TRUSTED':
      return 1;
    case 'DERIVED_UNTRUSTED':
      return 2;
    case 'EXTERNAL':
      return 3;
  }
}

export function labelFromValue(v: number): TrustLabel {
  const l = TrustLabels[v];
  if (l === undefined) throw new RangeError(`trust value out of range: ${v}`);
  return l;
}

/** 0 (⊥) … 3 (T). */
export function authorityRank(a: Authority): number {
  switch (a) {
    case 'BOTTOM':
      return 0;
    case 'U':
      return 1;
    case 'A':
      return 2;
    case 'T':
      return 3;
  }
}

/** The label an entry carries from its own channel, before any lineage is considered. */
export function baseLabel(t: SourceTier): TrustLabel {
  return t === 'EXTERNAL_TOOL' || t === 'EXTERNAL_WEB' ? 'EXTERNAL' : 'TRUSTED';
}

/** The label is "untrusted" (Theorem 1's trust ≥ 2). */
export function isUntrustedLabel(l: TrustLabel): boolean {
  return labelValue(l) >= 2;
}

export function tierAuthority(t: SourceTier): Authority {
  switch (t) {
    case 'OPERATOR':
      return 'T';
    case 'USER_VERIFIED':
    case 'USER_OBSERVED':
      return 'A';
    case 'EXTERNAL_TOOL':
    case 'EXTERNAL_WEB':
      return 'U';
  }
}

export function labelAuthority(l: TrustLabel): Authority {
  return isUntrustedLabel(l) ? 'U' : 'T';
}

/** The weaker of two authorities (lattice meet). */
export function meetAuthority(a: Authority, b: Authority): Authority {
  return authorityRank(a) <= authorityRank(b) ? a : b;
}

/** The riskier of two labels (lattice join in MemLineage's order). */
export function joinLabel(a: TrustLabel, b: TrustLabel): TrustLabel {
  return labelValue(a) >= labelValue(b) ? a : b;
}

/**
 * Effective authority of a verified entry: weakest of its tier and its (propagated) label.
 * Pass `verified: false` for an entry whose signature, tag or inclusion did not verify: ⊥.
 */
export function effectiveAuthority(
  tier: SourceTier,
  label: TrustLabel,
  verified = true,
): Authority {
  if (!verified) return 'BOTTOM';
  return meetAuthority(tierAuthority(tier), labelAuthority(label));
}

/**
 * The most trusted tier a principal of this kind may write. The channel decides the tier;
 * this bound stops a channel from claiming more than its principal can hold (an agent can
 * never write OPERATOR memory; an external writer only EXTERNAL_WEB).
 */
export function maxTierFor(kind: PrincipalKind): SourceTier {
  switch (kind) {
    case 'operator':
      return 'OPERATOR';
    case 'user':
      return 'USER_VERIFIED';
    case 'agent':
      return 'USER_OBSERVED';
    case 'tool':
      return 'EXTERNAL_TOOL';
    case 'external':
      return 'EXTERNAL_WEB';
  }
}

/** True when a principal of `kind` may write at `tier`. */
export function mayWriteTier(kind: PrincipalKind, tier: SourceTier): boolean {
  return tierRank(tier) >= tierRank(maxTierFor(kind));
}

export function isSourceTier(x: unknown): x is SourceTier {
  return typeof x === 'string' && (SourceTiers as readonly string[]).includes(x);
}
export function isTrustLabel(x: unknown): x is TrustLabel {
  return typeof x === 'string' && (TrustLabels as readonly string[]).includes(x);
}
export function isPrincipalKind(x: unknown): x is PrincipalKind {
  return typeof x === 'string' && (PrincipalKinds as readonly string[]).includes(x);
}
