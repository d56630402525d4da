/**
 * @module core/gate/authority
 * The gate on the authority view of the one trust lattice (core/trust; AuthSelect §3,
 * ⊥ < U < A < T), so graph memory can route AuthSelect divergences through the same decision.
 *
 * A tool's required authority: its policy's `authority`, else A for a sensitive tool (a user or
 * operator channel with an untainted label — what Layer 1 accepts) and U for a non-sensitive
 * one; an unknown tool needs T unless the policy allows unknown tools. ⊥ (unverified) never
 * authorises anything. Layer 1 uses the same ranks: a segment whose rendered authority is below
 * the tool's requirement is rejected exactly like an untrusted label — for the default A they
 * coincide (`labelAuthority`: untrusted labels are U).
 */
import { type Authority, authorityRank } from '../trust.js';
import type { Policy } from './policy.js';
import type { AuditRecord, SourceRef, Verdict, VerdictMode } from './types.js';

/** The authority a justification for `tool` needs under `policy`. */
export function requiredAuthority(policy: Policy, tool: string): Authority {
  const t = policy.tools.get(tool);
  if (t !== undefined) return t.authority;
  return policy.unknownTools === 'allow' ? 'U' : 'T';
}

/** True when `have` meets `required` (⊥ never does). */
export function authoritySatisfies(required: Authority, have: Authority): boolean {
  return have !== 'BOTTOM' && authorityRank(have) >= authorityRank(required);
}

/** Options of {@link decideByAuthority}. */
export interface AuthorityDecisionOptions {
  /** What a shortfall becomes (the tool's or the policy's mode). Default `deny`. */
  readonly mode?: VerdictMode;
  /** Tool name for the audit record (default `graph_selection`). */
  readonly tool?: string;
  /** Whether the action is sensitive (audit only; default true). */
  readonly sensitive?: boolean;
  /**
   * For `repair_and_retry`: the answer replayed on the authenticated subgraph (AuthSelect) —
   * without it a repair mode falls back to deny.
   */
  readonly repairedArguments?: Readonly<Record<string, unknown>>;
  /** Sources (e.g. graph entries) that supplied `have`, for the audit record. */
  readonly usedSources?: readonly SourceRef[];
  readonly rejectedSources?: readonly SourceRef[];
}

/**
 * The gate's decision on the authority view: allow when `have` meets `required`; a ⊥ source
 * is always denied; otherwise the mode's verdict (`strip_and_retry` asks the caller to drop the
 * under-authorised items and re-select; `repair_and_retry` needs `repairedArguments`).
 */
export function decideByAuthority(
  required: Authority,
  have: Authority,
  options: AuthorityDecisionOptions = {},
): Verdict {
  const mode = options.mode ?? 'deny';
  const used = options.usedSources ?? [];
  const rejected = options.rejectedSources ?? [];
  let kind: Verdict['kind'];
  if (authoritySatisfies(required, have)) kind = 'allow';
  else if (have === 'BOTTOM') kind = 'deny';
  else if (mode === 'repair_and_retry')
    kind = options.repairedArguments === undefined ? 'deny' : 'repair_and_retry';
  else kind = mode;
  const reason =
    kind === 'allow'
      ? 'clean'
      : kind === 'repair_and_retry'
        ? 'repaired'
        : 'insufficient_authority';
  const audit: AuditRecord = {
    tool: options.tool ?? 'graph_selection',
    verdict: kind,
    reason,
    sensitive: options.sensitive ?? true,
    mode,
    usedSources: used,
    rejectedSources: rejected,
    repairs: [],
    unauthorisedParams: [],
    untracedParams: [],
  };
  return {
    kind,
    reason,
    usedSources: used,
    rejectedSources: rejected,
    ...(kind === 'repair_and_retry' && options.repairedArguments !== undefined
      ? { repairedArguments: options.repairedArguments }
      : {}),
    audit,
  };
}
