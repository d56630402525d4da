/**
 * @module server/errors
 * The one table from error codes to HTTP statuses (CONVENTIONS "Errors": map codes at the
 * edge, in one place). A client gets `{ error: { code, message } }`; a 5xx never carries the
 * internal message, details or cause, and a throwable that is not a MemwardenError is a bug,
 * reported as `INTERNAL`.
 *
 * The table is keyed by every `ErrorCode`, so adding a code in core/errors.ts without deciding
 * its status here fails the type check.
 */
import { isMemwardenError, type ErrorCode } from '../core/errors.js';

/** Codes only the HTTP edge raises (no domain meaning below it). */
export const EdgeErrorCodes = ['ROUTE_NOT_FOUND', 'UNSUPPORTED_MEDIA_TYPE', 'INTERNAL'] as const;
export type EdgeErrorCode = (typeof EdgeErrorCodes)[number];

/** Every code an HTTP error body can carry. */
export type ApiErrorCode = ErrorCode | EdgeErrorCode;

/** THE table. 5xx means "our fault", never the client's. */
export const HTTP_STATUS_BY_CODE: Readonly<Record<ApiErrorCode, number>> = {
  // codec: malformed client-supplied structure
  CODEC_MALFORMED: 400,
  CODEC_NON_CANONICAL: 400,
  CODEC_TRAILING_BYTES: 400,
  CODEC_DUPLICATE_KEY: 400,
  CODEC_UNKNOWN_KEY: 400,
  CODEC_MISSING_KEY: 400,
  CODEC_WRONG_TYPE: 400,
  CODEC_OVERSIZE: 413,
  CODEC_UNSUPPORTED_VERSION: 400,
  CODEC_INVALID_VALUE: 400,
  // entries
  ENTRY_INVALID: 400,
  // a stored entry that fails its signature is tampering, detected by us: not the client's fault
  ENTRY_SIGNATURE_INVALID: 500,
  // keys and principals: the caller may not act
  KEY_INVALID: 400,
  KEY_UNKNOWN: 403,
  KEY_REVOKED: 403,
  KEY_NOT_YET_VALID: 403,
  KEY_EXPIRED: 403,
  KEY_SOURCE_FAILED: 500,
  PRINCIPAL_INVALID: 400,
  PRINCIPAL_ALREADY_REGISTERED: 409,
  PRINCIPAL_UNKNOWN: 403,
  // MACs are verified over stored entries with host keys: internal
  MAC_INVALID: 500,
  MAC_KEY_UNKNOWN: 500,
  MAC_KEY_RETIRED: 500,
  MAC_KEY_CONFLICT: 500,
  // the log: out-of-range sizes come from the query string; the rest is corruption
  LOG_INDEX_OUT_OF_RANGE: 400,
  LOG_SIZE_INVALID: 400,
  LOG_PROOF_INVALID: 500,
  LOG_ROOT_MISMATCH: 500,
  LOG_CHECKPOINT_MALFORMED: 500,
  LOG_CHECKPOINT_SIGNATURE_INVALID: 500,
  LOG_CORRUPT: 500,
  // cosignatures come from witnesses we called: a bad one or too few is an upstream fault
  LOG_COSIGNATURE_INVALID: 502,
  LOG_COSIGNATURES_INSUFFICIENT: 503,
  // witnesses: a malformed add-checkpoint body is the caller's; a refusing or unreachable
  // witness is a gateway fault
  WITNESS_REQUEST_MALFORMED: 400,
  WITNESS_REFUSED: 502,
  WITNESS_UNREACHABLE: 502,
  // storage
  STORAGE_CONFLICT: 409,
  STORAGE_NOT_FOUND: 404,
  STORAGE_FAILED: 500,
  // the database is restarting or unreachable: retryable, sent with Retry-After
  STORAGE_UNAVAILABLE: 503,
  // row-level security refused the principal
  STORAGE_DENIED: 403,
  // quotas, review, authentication
  QUOTA_EXCEEDED: 429,
  REVIEW_NOT_PENDING: 409,
  // held for review, not applied (PUT /v1/memories/:id answers 202 pending_review itself)
  WRITE_HELD: 409,
  AUTH_REQUIRED: 401,
  AUTH_FORBIDDEN: 403,
  // lineage and the gate: parents and policies come from the request
  LINEAGE_CYCLE: 400,
  LINEAGE_INVALID: 400,
  POLICY_INVALID: 400,
  POLICY_DENIED: 403,
  // models behind us failed: a gateway fault, never the client's
  LLM_TRANSPORT: 502,
  LLM_MALFORMED: 502,
  LLM_UNAVAILABLE: 503,
  EMBEDDING_FAILED: 502,
  // input at the edges
  INPUT_INVALID: 400,
  INPUT_TOO_LARGE: 413,
  // the eval harnesses' data folder (CLI only; the server never raises it)
  EVAL_DATA_MISSING: 400,
  // edge only
  ROUTE_NOT_FOUND: 404,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
};

/** An error raised by the HTTP edge itself with a code core does not define (routing, media type). */
export class EdgeError extends Error {
  override readonly name = 'EdgeError';
  readonly code: EdgeErrorCode;
  constructor(code: EdgeErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** The JSON body of every error response. */
export interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly details?: Record<string, unknown>;
  };
}

/** What to send for `err`, and whether it is a server-side fault to log loudly. */
export interface MappedError {
  readonly status: number;
  readonly body: ErrorBody;
  /** The code for logs and metrics (equals `body.error.code`). */
  readonly code: string;
  readonly serverFault: boolean;
  /** Seconds for a `Retry-After` header: the failure is transient and nothing was changed. */
  readonly retryAfter?: number;
}

/** Codes whose failure is transient: the client should retry after this many seconds. */
const RETRY_AFTER_S: Partial<Record<ApiErrorCode, number>> = { STORAGE_UNAVAILABLE: 1 };

function statusOf(code: string): number | undefined {
  return Object.hasOwn(HTTP_STATUS_BY_CODE, code)
    ? HTTP_STATUS_BY_CODE[code as ApiErrorCode]
    : undefined;
}

/**
 * Map any throwable to a response. 4xx keep their message and non-secret details; 5xx keep
 * only the code (a MemwardenError's code is stable and safe; its message may quote storage
 * internals). Anything unrecognised is `INTERNAL`.
 */
export function mapError(err: unknown): MappedError {
  let code: string | undefined;
  let message = '';
  let details: Record<string, unknown> | undefined;
  if (isMemwardenError(err)) {
    code = err.code;
    message = err.message;
    details = err.details === undefined ? undefined : { ...err.details };
  } else if (err instanceof EdgeError) {
    code = err.code;
    message = err.message;
  }
  const status = code === undefined ? undefined : statusOf(code);
  if (code === undefined || status === undefined) {
    return {
      status: 500,
      code: 'INTERNAL',
      serverFault: true,
      body: { error: { code: 'INTERNAL', message: 'internal error' } },
    };
  }
  const retryAfter = RETRY_AFTER_S[code as ApiErrorCode];
  if (retryAfter !== undefined) {
    // Transient (the database is restarting or unreachable): a retryable 503, code only.
    return {
      status,
      code,
      serverFault: true,
      retryAfter,
      body: { error: { code, message: 'temporarily unavailable, retry' } },
    };
  }
  if (status >= 500) {
    return {
      status,
      code,
      serverFault: true,
      body: { error: { code, message: 'internal error' } },
    };
  }
  const error = details === undefined ? { code, message } : { code, message, details };
  return { status, code, serverFault: false, body: { error } };
}
