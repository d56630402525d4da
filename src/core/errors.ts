/**
 * @module core/errors
 * One base error with a stable string `code`. Tests and callers branch on the code, never on
 * the message. Codes are UPPER_SNAKE, prefixed by domain.
 */

/** Every error code memwarden can raise, by domain. Extend here, nowhere else. */
export const ErrorCodes = [
  // codec: canonical CBOR and record schema
  'CODEC_MALFORMED',
  'CODEC_NON_CANONICAL',
  'CODEC_TRAILING_BYTES',
  'CODEC_DUPLICATE_KEY',
  'CODEC_UNKNOWN_KEY',
  'CODEC_MISSING_KEY',
  'CODEC_WRONG_TYPE',
  'CODEC_OVERSIZE',
  'CODEC_UNSUPPORTED_VERSION',
  'CODEC_INVALID_VALUE',
  // entries
  'ENTRY_INVALID',
  'ENTRY_SIGNATURE_INVALID',
  // keys, principals and MACs
  'KEY_INVALID',
  'KEY_UNKNOWN',
  'KEY_REVOKED',
  'KEY_NOT_YET_VALID',
  'KEY_EXPIRED',
  'KEY_SOURCE_FAILED',
  'PRINCIPAL_INVALID',
  'PRINCIPAL_ALREADY_REGISTERED',
  'PRINCIPAL_UNKNOWN',
  'MAC_INVALID',
  'MAC_KEY_UNKNOWN',
  'MAC_KEY_RETIRED',
  'MAC_KEY_CONFLICT',
  // the Merkle log
  'LOG_INDEX_OUT_OF_RANGE',
  'LOG_SIZE_INVALID',
  'LOG_PROOF_INVALID',
  'LOG_ROOT_MISMATCH',
  'LOG_CHECKPOINT_MALFORMED',
  'LOG_CHECKPOINT_SIGNATURE_INVALID',
  'LOG_CORRUPT',
  'LOG_COSIGNATURE_INVALID',
  'LOG_COSIGNATURES_INSUFFICIENT',
  // witnesses (C2SP tlog-witness)
  'WITNESS_REQUEST_MALFORMED',
  'WITNESS_REFUSED',
  'WITNESS_UNREACHABLE',
  // storage
  'STORAGE_CONFLICT',
  'STORAGE_NOT_FOUND',
  'STORAGE_FAILED',
  /** The database is unreachable, restarting or shutting down: nothing was changed; retry. */
  'STORAGE_UNAVAILABLE',
  'STORAGE_DENIED',
  // quotas, review, authentication at the edges
  'QUOTA_EXCEEDED',
  'REVIEW_NOT_PENDING',
  /** A write (an update's new version) was screened and held for review: nothing stored yet. */
  'WRITE_HELD',
  'AUTH_REQUIRED',
  'AUTH_FORBIDDEN',
  // lineage and the sensitive-action gate
  'LINEAGE_CYCLE',
  'LINEAGE_INVALID',
  'POLICY_INVALID',
  'POLICY_DENIED',
  // models: LLM providers and embedders
  'LLM_TRANSPORT',
  'LLM_MALFORMED',
  'LLM_UNAVAILABLE',
  'EMBEDDING_FAILED',
  // evaluation harnesses
  /** An eval was run without its data folder (`--data DIR` / `MEMWARDEN_EVAL_DATA`) or the file is absent. */
  'EVAL_DATA_MISSING',
  // generic input validation at the edges
  'INPUT_INVALID',
  'INPUT_TOO_LARGE',
] as const;

export type ErrorCode = (typeof ErrorCodes)[number];

/** The base of every error memwarden throws on purpose. */
export class MemwardenError extends Error {
  override readonly name: string = 'MemwardenError';
  readonly code: ErrorCode;
  /** Structured, non-secret detail for logs and API responses. */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options?.details;
  }
}

/** True when `e` is a MemwardenError, optionally with the given code. */
export function isMemwardenError(e: unknown, code?: ErrorCode): e is MemwardenError {
  return e instanceof MemwardenError && (code === undefined || e.code === code);
}

/** Result of a safe parse: never throws on attacker-controlled input. */
export type SafeResult<T> = { ok: true; value: T } | { ok: false; error: MemwardenError };

/**
 * Run `fn`, turning a thrown MemwardenError into `{ ok: false }`. Any other throwable is a bug
 * in memwarden, not bad input, so it is wrapped with `fallback` and kept as `cause`.
 */
export function safely<T>(fn: () => T, fallback: ErrorCode): SafeResult<T> {
  try {
    return { ok: true, value: fn() };
  } catch (e) {
    return failed(e, fallback);
  }
}

/** The `{ ok: false }` that {@link safely} makes of a caught throwable (for hot paths that inline it). */
export function failed(e: unknown, fallback: ErrorCode): { ok: false; error: MemwardenError } {
  if (e instanceof MemwardenError) return { ok: false, error: e };
  return { ok: false, error: new MemwardenError(fallback, 'unexpected failure', { cause: e }) };
}
