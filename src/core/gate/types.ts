/**
 * @module core/gate/types
 * The values the sensitive-action gate (MemLineage §3.7, M6) takes and returns. A decision is
 * a value — never an exception — and every verdict carries an audit record naming the
 * sources used and rejected.
 */
import type { Authority, TrustLabel } from '../trust.js';

/** The five verdicts of §3.7. */
export const VerdictKinds = [
  'allow',
  'deny',
  'require_user',
  'strip_and_retry',
  'repair_and_retry',
] as const;
export type VerdictKind = (typeof VerdictKinds)[number];

/** The deployment-level choice of what an untrusted finding turns into (§3.7). */
export const VerdictModes = [
  'deny',
  'require_user',
  'strip_and_retry',
  'repair_and_retry',
] as const;
export type VerdictMode = (typeof VerdictModes)[number];

/** Stable, machine-readable reasons (tests and dashboards branch on these, not on prose). */
export type VerdictReason =
  | 'non_sensitive'
  | 'clean'
  | 'repaired'
  | 'malformed_call'
  | 'unknown_tool'
  | 'policy_rule_deny'
  | 'policy_rule_no_allow'
  | 'untrusted_context'
  | 'parameter_unauthorised'
  | 'parentless_sensitive'
  | 'insufficient_authority'
  /** A governed value traces to nothing: not the user's request, no segment (ADR 0043). */
  | 'untraced_value'
  /** A tool the policy does not name received a value that traces to untrusted memory. */
  | 'unknown_tool_untrusted';

/** A proposed tool call. */
export interface ToolCallInput {
  readonly tool: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/**
 * Where one candidate value of a parameter came from (Layer 2 parameter provenance). Supplied
 * by the integration (e.g. the framework that tracked which tool result a value was copied
 * from). Claims are checked where they can be: an `entryId` must name a segment sealed in this
 * context that mentions the value, within the class's `maxLabel`; a `user_request`-origin
 * class must be mentioned by `userRequest`.
 */
export interface ParameterSource {
  readonly value: unknown;
  /** A deployment source class, e.g. `trusted_bill`, `user_request`, `external_todo`. */
  readonly sourceClass: string;
  readonly entryId?: string;
}

/** Input to `Gate.decide`. */
export interface DecideInput {
  readonly call: ToolCallInput;
  /** The rendered context the model saw (`core/render` segments). */
  readonly context: string;
  /** The seal memwarden rendered that context with; segments under any other seal are ignored. */
  readonly seal: string;
  /** Parameter provenance for Layer 2: parameter name → candidate values. */
  readonly sources?: Readonly<Record<string, readonly ParameterSource[]>>;
  /** The user's fresh request this turn (authorises `user_request`-origin classes). */
  readonly userRequest?: string;
  /**
   * Parentless lookup for the strict §6.6 knob (e.g. `LineageDag.isParentless`). When the
   * knob is on and this is absent, every justifying segment counts as parentless (fail closed).
   */
  readonly isParentless?: (entryId: string) => boolean;
}

/** A source the gate used or rejected. */
export interface SourceRef {
  /** `segment`: a sealed memory segment (Layer 1); `parameter`: a Layer 2 parameter source. */
  readonly kind: 'segment' | 'parameter';
  readonly entryId?: string;
  readonly label?: TrustLabel;
  readonly authority?: Authority;
  readonly param?: string;
  readonly sourceClass?: string;
  /** Why it was rejected (absent on used sources). */
  readonly why?:
    | 'untrusted_label'
    | 'insufficient_authority'
    | 'class_not_allowed'
    | 'no_provenance'
    | 'not_in_context'
    | 'value_not_in_segment'
    | 'label_above_class_max'
    | 'not_in_user_request'
    | 'parentless'
    /** The value is near this untrusted segment's (skeleton, decoded encoding, a piece of it). */
    | 'near_untrusted_value'
    /** The value traces to nothing: no segment, not the user's request. */
    | 'untraced';
}

/** One parameter the gate rewrote (Repair-and-Retry). */
export interface Repair {
  readonly param: string;
  readonly rejectedValue: unknown;
  readonly value: unknown;
  /** The authority selected for the new value. */
  readonly selected: SourceRef;
}

/** The audit record every verdict carries (§3.7). Pure data; the caller adds time and actor. */
export interface AuditRecord {
  readonly tool: string;
  readonly verdict: VerdictKind;
  readonly reason: VerdictReason;
  readonly sensitive: boolean;
  readonly mode: VerdictMode;
  /** Weakest (max) label over the segments the call's arguments mention, if any. */
  readonly weakestLabel?: TrustLabel;
  readonly usedSources: readonly SourceRef[];
  readonly rejectedSources: readonly SourceRef[];
  readonly repairs: readonly Repair[];
  /** Governed parameters left without an authorised value. */
  readonly unauthorisedParams: readonly string[];
  /** Of those (and of governed-kind arguments), the ones whose value traces to nothing. */
  readonly untracedParams: readonly string[];
}

/** The gate's decision. */
export interface Verdict {
  readonly kind: VerdictKind;
  readonly reason: VerdictReason;
  readonly usedSources: readonly SourceRef[];
  readonly rejectedSources: readonly SourceRef[];
  /** Repair-and-Retry: the full argument object with only the repaired parameters rewritten. */
  readonly repairedArguments?: Readonly<Record<string, unknown>>;
  /** Strip-and-Retry: the segments to remove before asking the model to re-emit. */
  readonly strippedSegmentIds?: readonly string[];
  /** Strip-and-Retry: the context with those segments cut out. */
  readonly retryContext?: string;
  readonly audit: AuditRecord;
}
