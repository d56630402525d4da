/**
 * @module adapters/embeddings/types
 * The error helpers the embedding adapters share, and the `Embedder` port they implement
 * (defined in ports/embedder.ts, re-exported for convenience).
 */
import { MemwardenError, type ErrorCode } from '../../core/errors.js';

export type { Embedder } from '../../ports/embedder.js';

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
 * fault, so the edge maps it to 5xx; `details.reason` says which failure it was.
 */
export const EMBEDDING_ERROR_CODE: ErrorCode = 'EMBEDDING_FAILED';

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
