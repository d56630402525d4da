/**
 * @module memwarden
 * The public API. Explicit named exports only; the surface is pinned by test/api-surface.test.ts.
 */
export {
  ErrorCodes,
  MemwardenError,
  isMemwardenError,
  type ErrorCode,
  type SafeResult,
} from './core/errors.js';
export {
  AuthorityLevels,
  PrincipalKinds,
  SourceTiers,
  TrustLabels,
  baseLabel,
  effectiveAuthority,
  mayWriteTier,
  type Authority,
  type PrincipalKind,
  type SourceTier,
  type TrustLabel,
} from './core/trust.js';
export {
  decodeSignedEntry,
  decodeSignedTombstone,
  encodeEntryBody,
  encodeSignedEntry,
  entryLeafData,
  safeDecodeSignedEntry,
  signingInput,
  tombstoneLeafData,
  type EntryBody,
  type SignedEntry,
  type SignedTombstone,
  type TombstoneBody,
} from './core/entry/index.js';
export {
  emptyRoot,
  leafHash,
  nodeHash,
  parseCheckpoint,
  verifyCheckpoint,
  verifyConsistency,
  verifyInclusion,
  formatVerifierKey,
  type Checkpoint,
  // witnessing (C2SP tlog-cosignature): clients that require N witness cosignatures
  verifyCosignedCheckpoint,
  parseCosignerVerifierKey,
  type CosignedCheckpoint,
  type CosignedCheckpointPolicy,
  type VerifiedCosignature,
} from './core/merkle/index.js';
export { verifyEd25519 } from './core/crypto/ed25519.js';
// The ledger is not exported: it would be a second door for writes (ADR 0029). `Memory.ledger`
// is its read-and-administer view (verify, prove, checkpoints, keys), for deployment tooling.
export type { Verification } from './memory/log/ledger.js';
export type { LedgerView } from './memory/log/view.js';
export type {
  CheckpointView,
  ConsistencyProofView,
  HistoryEvent,
  InclusionProofView,
  InvestigateOptions,
  InvestigatedEntry,
  InvestigationPage,
  InvestigationRow,
  UnverifiedEntry,
  ReviewItem,
  AddOptions,
  AddResult,
  LineageReport,
  MemoryApi,
  MemoryRecord,
  SearchHit,
  SearchOptions,
  SearchResult,
  SmoothedContext,
  SmoothingCertificate,
  SmoothingOptions,
  SmoothingResult,
} from './memory/api.js';
export type { Clock, RandomSource } from './ports/clock.js';
export type { Embedder } from './ports/embedder.js';
export type { LlmProvider, LlmRequest, LlmResponse } from './ports/llm.js';
export type { MetricsSink } from './ports/metrics.js';
export type { KeySource } from './ports/keysource.js';
export type { RootStorage, StorageBackend, StoredEntry } from './ports/storage.js';
export { Memory, type OpenOptions } from './open.js';
export { retentionConfig, type RetentionConfig } from './memory/config.js';
export {
  /**
   * The pure decision on the labels written in segment headers: only for a context you rendered
   * and verified yourself. `Gate` (below) re-verifies every segment against the store first.
   */
  Gate as LabelTrustingGate,
  loadPolicy,
  safeLoadPolicy,
  type DecideInput,
  type PolicyDocument,
  type Verdict,
} from './core/gate/index.js';
export {
  VerifiedGate as Gate,
  type VerifiedDecideInput,
  type VerifiedGateOptions,
  type VerifiedVerdict,
} from './memory/action/verified-gate.js';
export { DEFAULT_POLICY } from './memory/action/default-policy.js';
export {
  CoarseAttribution,
  DEFAULT_LINEAGE_OPTIONS,
  LmSelfEval,
  ScriptedJudge,
  propagate,
  strictLineageOptions,
  type Attribution,
  type LineageOptions,
} from './core/lineage/index.js';
export { escapeContent, parseSegments, renderSegments } from './core/render/sentinel.js';
export {
  certificate,
  nearDuplicate,
  planPoolSize,
  type Certificate,
  type Plan,
} from './core/smsr/index.js';
export {
  SmoothedRetrieval,
  llmGenerator,
  llmJudge,
  macVerifiedRetriever,
  wordsFromRandomSource,
  type SmoothedAnswer,
  type SmsrOptions,
} from './memory/read/smsr.js';
export { voteSmoothed, type SmoothedVote } from './memory/read/smoothing.js';
export { DetectionPipeline, type DetectionConfig, verdictOf } from './memory/detect/pipeline.js';
export type { AutoDetectionOptions } from './memory/detect/calibration.js';
export {
  GraphMemory,
  type GraphMemoryOptions,
  type GraphSource,
  type GraphWriter,
} from './memory/graph/graph.js';
export { KnowledgeGraphTools } from './memory/graph/knowledge-graph.js';
export type { GraphToolResult, PrincipalGraph } from './memory/graph/principal-graph.js';
export {
  ARTICLE_QUOTAS,
  DEFAULT_WRITE_LIMITS,
  parseRetentionOverrides,
  type RetentionOverrides,
  type WriteLimits,
} from './memory/config.js';
