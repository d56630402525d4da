/**
 * @module core/merkle
 * The RFC 6962 / RFC 9162 Merkle log primitives: hashing, proof planning, verification,
 * frontier appends and C2SP checkpoints. Pure: no I/O, no clock.
 */
export { HASH_SIZE, emptyRoot, leafHash, nodeHash } from './hash.js';
export {
  type NodeRef,
  type RangePlan,
  assembleProof,
  consistencyPlan,
  decomposeRange,
  foldRight,
  inclusionPlan,
  isPerfect,
  planRefs,
  rootPlan,
  splitPoint,
} from './plan.js';
export {
  checkConsistency,
  checkInclusion,
  rootFromInclusionProof,
  verifyConsistency,
  verifyInclusion,
} from './verify.js';
export {
  type Frontier,
  type FrontierAppend,
  type MerkleNode,
  EMPTY_FRONTIER,
  appendToFrontier,
  frontierFromHashes,
  frontierRefs,
  frontierRoot,
  rightBorderHashes,
} from './frontier.js';
export {
  type NoteSignFn,
  type NoteSignature,
  type NoteVerifyFn,
  type ParsedNote,
  MAX_NOTE_BYTES,
  formatVerifierKey,
  noteKeyId,
  parseNote,
  parseVerifierKey,
  signNote,
  verifyNote,
} from './note.js';
export {
  type Checkpoint,
  formatCheckpoint,
  parseCheckpoint,
  signCheckpoint,
  verifyCheckpoint,
} from './checkpoint.js';
export {
  type CosignatureCheckOptions,
  type CosignedCheckpoint,
  type CosignedCheckpointPolicy,
  type CosignerKey,
  type VerifiedCosignature,
  COSIGNATURE_V1_BYTES,
  COSIGNATURE_V1_TYPE,
  cosignCheckpoint,
  cosignatureKeyId,
  cosignatureMessage,
  cosignatureTimestamp,
  formatCosignerVerifierKey,
  parseCosignerVerifierKey,
  verifyCosignatures,
  verifyCosignedCheckpoint,
} from './cosignature.js';
export {
  type AddCheckpointRequest,
  type AuthenticateResult,
  type WitnessDecision,
  type WitnessLogState,
  type WitnessedLog,
  MAX_ADD_CHECKPOINT_BYTES,
  MAX_CONSISTENCY_PROOF_LINES,
  TLOG_SIZE_CONTENT_TYPE,
  authenticateCheckpoint,
  decideAddCheckpoint,
  formatAddCheckpointRequest,
  parseAddCheckpointRequest,
  parseTreeSizeBody,
} from './witness-protocol.js';
