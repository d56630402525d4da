/**
 * @module core/gate
 * The sensitive-action gate (MemLineage §3.7, M6): Progent-style policies, the two-layer
 * decision (context chain of custody, per-tool parameter authority), the five verdicts with
 * audit records, and the authority-lattice view for graph memory (AuthSelect).
 */
export {
  type AuditRecord,
  type DecideInput,
  type ParameterSource,
  type Repair,
  type SourceRef,
  type ToolCallInput,
  type Verdict,
  type VerdictKind,
  type VerdictMode,
  type VerdictReason,
  VerdictKinds,
  VerdictModes,
} from './types.js';
export { POLICY_SCHEMA } from './policy-schema.js';
export {
  type CompiledRule,
  type CompiledTool,
  type GovernedParam,
  type Policy,
  type PolicyDocument,
  type SourceClassSpec,
  type ToolPolicyDocument,
  loadPolicy,
  safeLoadPolicy,
} from './policy.js';
export { type GateOptions, Gate } from './gate.js';
export {
  type AuthorityDecisionOptions,
  authoritySatisfies,
  decideByAuthority,
  requiredAuthority,
} from './authority.js';
export { mentions, normText } from './match.js';
