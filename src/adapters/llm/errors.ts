/**
 * @module adapters/llm/errors
 * One table from whatever the AI SDK (or the network below it) throws to the three coded
 * model errors of `ports/llm` (MemLineage §4.3):
 *
 * | failure                                              | code              |
 * |------------------------------------------------------|-------------------|
 * | network error, timeout, abort, HTTP 408/409/429/5xx  | `LLM_TRANSPORT`   |
 * | HTTP 401/403/404, other 4xx, missing API key         | `LLM_UNAVAILABLE` |
 * | 2xx whose body lacks the promised shape              | `LLM_MALFORMED`   |
 * | anything unrecognised                                | `LLM_MALFORMED`   |
 *
 * Unrecognised failures fail closed (`LLM_MALFORMED` is never treated as transient), so a
 * new failure mode can never be mistaken for a retryable one. Messages carry the HTTP status
 * only — never the API key, the request or the response body; the original error is kept as
 * `cause` for debugging.
 */
import {
  APICallError,
  EmptyResponseBodyError,
  InvalidResponseDataError,
  InvalidToolInputError,
  JSONParseError,
  LoadAPIKeyError,
  NoContentGeneratedError,
  NoObjectGeneratedError,
  NoSuchToolError,
  RetryError,
  TypeValidationError,
} from 'ai';
import { MemwardenError } from '../../core/errors.js';

/** Statuses that mean "this model is not reachable with this configuration". */
const UNAVAILABLE_STATUSES = new Set([401, 403, 404]);

function isAbortLike(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return e.name === 'AbortError' || e.name === 'TimeoutError' || e.name === 'ResponseAborted';
}

/** True for the AI SDK errors that describe a response of the wrong shape. */
function isShapeError(e: unknown): boolean {
  return (
    JSONParseError.isInstance(e) ||
    TypeValidationError.isInstance(e) ||
    NoObjectGeneratedError.isInstance(e) ||
    InvalidToolInputError.isInstance(e) ||
    NoSuchToolError.isInstance(e) ||
    NoContentGeneratedError.isInstance(e) ||
    InvalidResponseDataError.isInstance(e) ||
    EmptyResponseBodyError.isInstance(e)
  );
}

/**
 * Map any failure of a model call to a coded MemwardenError. `provider` (e.g.
 * `openai-compatible:gpt-4o-mini`) goes into `details`; it is configuration, not a secret.
 */
export function toLlmError(e: unknown, provider: string): MemwardenError {
  if (e instanceof MemwardenError) return e;
  // The SDK wraps exhausted retries; the last attempt decides the class.
  if (RetryError.isInstance(e)) {
    const last = e.lastError;
    const mapped = toLlmError(last, provider);
    return new MemwardenError(mapped.code, mapped.message, {
      cause: e,
      details: mapped.details ?? {},
    });
  }
  if (isAbortLike(e)) {
    return new MemwardenError('LLM_TRANSPORT', 'LLM request aborted or timed out', {
      cause: e,
      details: { provider, reason: 'timeout_or_abort' },
    });
  }
  if (APICallError.isInstance(e)) {
    const status = e.statusCode;
    if (status === undefined) {
      return new MemwardenError('LLM_TRANSPORT', 'LLM endpoint unreachable', {
        cause: e,
        details: { provider, reason: 'network' },
      });
    }
    if (status >= 200 && status < 300) {
      return new MemwardenError(
        'LLM_MALFORMED',
        `LLM response (HTTP ${status}) has an unexpected shape`,
        {
          cause: e,
          details: { provider, status },
        },
      );
    }
    if (status === 408 || status === 409 || status === 429 || status >= 500) {
      return new MemwardenError('LLM_TRANSPORT', `LLM request failed: HTTP ${status}`, {
        cause: e,
        details: { provider, status },
      });
    }
    if (UNAVAILABLE_STATUSES.has(status) || (status >= 400 && status < 500)) {
      return new MemwardenError(
        'LLM_UNAVAILABLE',
        `LLM endpoint refused the request: HTTP ${status}`,
        {
          cause: e,
          details: { provider, status },
        },
      );
    }
    return new MemwardenError('LLM_MALFORMED', `LLM endpoint answered HTTP ${status}`, {
      cause: e,
      details: { provider, status },
    });
  }
  if (LoadAPIKeyError.isInstance(e)) {
    return new MemwardenError('LLM_UNAVAILABLE', 'LLM API key is not configured', {
      cause: e,
      details: { provider },
    });
  }
  if (isShapeError(e)) {
    return new MemwardenError('LLM_MALFORMED', 'LLM response has an unexpected shape', {
      cause: e,
      details: { provider },
    });
  }
  // Fail closed: an unrecognised failure is never reported as transient.
  return new MemwardenError('LLM_MALFORMED', 'LLM call failed unexpectedly', {
    cause: e,
    details: { provider },
  });
}
