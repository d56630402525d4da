/**
 * @module memory/detect/instruction-tiers
 * Per-tier thresholds of the instruction screen (issue 22, ADR 0040). The shipped model
 * carries thresholds set from benign false-positive budgets (scripts/train-instruction-screen.mjs):
 * EXTERNAL_* content is held at 1 % of statement-form benign texts, USER_OBSERVED at 0.25 %
 * of them and 5 % of legitimate user requests, USER_VERIFIED at 0.1 % and none of the user
 * requests ("remind me to call mom" is stored). OPERATOR writes are not screened. A
 * deployment may set its own per tier (`detection.config.instruction.thresholds`).
 */
import {
  INSTRUCTION_MODEL,
  type InstructionModel,
  type ScreenedTier,
} from '../../core/detect/index.js';
import type { SourceTier } from '../../core/trust.js';

export interface InstructionConfig {
  /** Weights and default thresholds (default: the shipped `INSTRUCTION_MODEL`). */
  readonly model?: InstructionModel;
  /** Per-tier overrides of the model's thresholds (a score above it holds the write). */
  readonly thresholds?: Partial<Record<ScreenedTier, number>>;
}

/** The threshold each tier's writes are held at (OPERATOR: never screened). */
export function instructionThresholds(
  c: InstructionConfig = {},
): Readonly<Record<SourceTier, number>> {
  const m = c.model ?? INSTRUCTION_MODEL;
  const t = { ...m.thresholds, ...(c.thresholds ?? {}) };
  return {
    OPERATOR: Number.POSITIVE_INFINITY,
    USER_VERIFIED: t.USER_VERIFIED,
    USER_OBSERVED: t.USER_OBSERVED,
    EXTERNAL_TOOL: t.EXTERNAL_TOOL,
    EXTERNAL_WEB: t.EXTERNAL_WEB,
  };
}
