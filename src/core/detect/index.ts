/**
 * @module core/detect
 * Write-time and read-time poisoning detectors (issue 7): MemSAD and MemSAD+, watermark,
 * validation, proactive probes, the composite, injection-risk and implausible-similarity.
 * All return `Finding` values and never throw on content.
 */
export { type DetectorName, type Finding, abstain, finding, meanStd } from './types.js';
export { DotMatrix, cosineSim, dotProduct, normalized, strideOf } from './kernel.js';
export {
  DEFAULT_MEMSAD_KAPPA,
  Memsad,
  type MemsadCalibration,
  type MemsadMode,
  type MemsadOptions,
  type MemsadScores,
} from './memsad.js';
export {
  DEFAULT_NGRAM_KAPPA,
  type GramKey,
  type IndexedText,
  type NgramBaseline,
  NgramIndex,
  NgramJsd,
  type NgramOptions,
  gramKey,
  jsdAgainst,
  ngramCounts,
  ngramKeys,
} from './ngram.js';
export { Watermark, type WatermarkOptions } from './watermark.js';
export {
  INJECTION_PATTERNS,
  type InjectionRiskOptions,
  type Rule,
  VALIDATION_RULES,
  injectionRisk,
  validate,
} from './rules.js';
export {
  DEFAULT_PROACTIVE_KAPPA,
  type ImplausibleOptions,
  Proactive,
  type ProactiveOptions,
  embeddingMismatch,
  implausibleSimilarity,
  lexicalOverlap,
} from './embedding-checks.js';
export { COMPOSITE_MEMBERS, composite } from './composite.js';
export {
  EMBEDDING_TERM,
  INSTRUCTION_FEATURES,
  type InstructionFeature,
  type InstructionModel,
  type InstructionScore,
  InstructionScreen,
  MAX_CHARS as INSTRUCTION_MAX_CHARS,
  type ScreenedTier,
  directionProjection,
  firedTerms,
  instructionFeatures,
  scoreFeatures,
  warmInstructionScreen,
} from './instruction.js';
export { INSTRUCTION_MODEL } from './instruction-model.js';
