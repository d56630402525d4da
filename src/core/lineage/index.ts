/**
 * @module core/lineage
 * Lineage (MemLineage §3.5, §4.3, §6.6): the derivation DAG, attribution algorithms and the
 * Equation (1) propagation rule with the strict operating-point knobs.
 */
export {
  type ChildFacts,
  type LineageOptions,
  type ParentEdge,
  DEFAULT_LINEAGE_OPTIONS,
  NO_STRONG_PARENT,
  derivedLabel,
  isStrongEdge,
  propagate,
  propagateRaw,
  strictLineageOptions,
  strongMax,
  thresholdFor,
  validateEdges,
  validateLineageOptions,
} from './propagation.js';
export { type DagNode, type DagNodeInput, LineageDag } from './dag.js';
export {
  type AttentionReadout,
  type Attribution,
  type AttributionCandidate,
  type AttributionChild,
  type AttributionContext,
  AttentionAttribution,
  CoarseAttribution,
  ScriptedJudge,
} from './attribution.js';
export {
  type JudgeModel,
  type JudgeRequest,
  JUDGE_SYSTEM_PROMPT,
  LmSelfEval,
  MAX_CANDIDATES,
  MAX_CONTENT_CHARS,
  SAFE_WEIGHT,
  buildJudgeRequest,
  parseJudgeReply,
  truncateContent,
} from './lm-self-eval.js';
