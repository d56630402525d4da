/**
 * @module adapters/embeddings/types
 * The embedder port and the one error helper the embedding adapters share.
 *
 * `Embedder` belongs in `src/ports/embedder.ts`; it lives here until the lead moves it (this
 * folder may not import the application, and ports are owned elsewhere right now).
 */
import { MemwardenError, type ErrorCode } from '../../core/errors.js';

/** Turns texts into fixed-width vectors; the memory layer ranks by their similarity. */
export interface Embedder {
  /** Stable model identifier, stored beside vectors so a model change is detectable. */
  readonly name: string;
  /** Width of every vector `embed` returns. */
  readonly dimensions: number;
  /** One vector per input, in input order. An empty input yields an empty output. */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/**
 * Why an embedding call failed; carried in `details.reason` so callers and tests branch on a
 * value, not on message text.
 */
export type EmbeddingFailure =
  | 'auth'
  | 'http_status'
  | 'network'
  | 'timeout'
  | 'response_invalid'
  | 'dimension_mismatch'
  | 'model_failed';

/**
 * The code every embedding failure carries. An embedder failure is never the HTTP client's
 * fault, so it must map to 5xx at the edge. Proposed replacement: a dedicated
 * `EMBEDDING_FAILED` in core/errors.ts (one-line change here when it exists).
 */
export const EMBEDDING_ERROR_CODE: ErrorCode = 'STORAGE_FAILED';

/** A coded embedding error with its `reason`; never includes credentials or input text. */
export function embeddingError(
  reason: EmbeddingFailure,
  message: string,
  extra?: { cause?: unknown; details?: Record<string, unknown> },
): MemwardenError {
  return new MemwardenError(EMBEDDING_ERROR_CODE, message, {
    ...(extra?.cause === undefined ? {} : { cause: extra.cause }),
    details: { reason, ...extra?.details },
  });
}

/** `INPUT_INVALID` unless `texts` is an array of strings. */
export function assertTexts(texts: unknown): asserts texts is string[] {
  if (!Array.isArray(texts) || !texts.every((t) => typeof t === 'string')) {
    throw new MemwardenError('INPUT_INVALID', 'texts must be an array of strings');
  }
}
