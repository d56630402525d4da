/**
 * @module adapters/sql/errors
 * SQLSTATE → storage error codes, one table for both drivers (CONVENTIONS "Errors": normalise
 * `pg` and PGlite `DatabaseError` codes, keep `cause`). Both drivers expose the five-character
 * SQLSTATE as `code`; Node socket errors expose `ECONNREFUSED`-style codes.
 *
 * A lost or refused connection and a server shutting down or starting up are
 * `STORAGE_UNAVAILABLE` (retryable: the transaction did not commit — or, if the connection
 * died during COMMIT, its outcome is unknown and it was not acknowledged); the service
 * answers 503 with `Retry-After`.
 */
import { type ErrorCode, MemwardenError } from '../../core/errors.js';

interface Mapping {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly reason: string;
}

/** SQLSTATE classes and codes we distinguish (PostgreSQL Appendix A). */
function mapSqlState(state: string): Mapping | undefined {
  switch (state) {
    case '23505': // unique_violation: the key exists — the port's "never overwrite" rule
      return { code: 'STORAGE_CONFLICT', retryable: false, reason: 'unique_violation' };
    case '40001': // serialization_failure
      return { code: 'STORAGE_CONFLICT', retryable: true, reason: 'serialization_failure' };
    case '40P01': // deadlock_detected
      return { code: 'STORAGE_CONFLICT', retryable: true, reason: 'deadlock_detected' };
    case '22021': // character_not_in_repertoire: e.g. U+0000 in a text parameter (a search query)
    case '22P05': // untranslatable_character: the same in json / jsonb
      return { code: 'INPUT_INVALID', retryable: false, reason: 'unrepresentable_text' };
    case '42501': // insufficient_privilege, including "violates row-level security policy"
      return { code: 'STORAGE_FAILED', retryable: false, reason: 'denied' };
    case '57P01': // admin_shutdown
    case '57P02': // crash_shutdown
    case '57P03': // cannot_connect_now
      return { code: 'STORAGE_UNAVAILABLE', retryable: true, reason: 'connection' };
  }
  if (state.startsWith('08'))
    return { code: 'STORAGE_UNAVAILABLE', retryable: true, reason: 'connection' };
  if (state.startsWith('23'))
    return { code: 'STORAGE_FAILED', retryable: false, reason: 'integrity' };
  return undefined;
}

const NODE_CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);

function codeOf(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const c = (e as { code?: unknown }).code;
  return typeof c === 'string' ? c : undefined;
}

/** True when `e` came from the database or its connection (as opposed to caller code). */
export function isDatabaseError(e: unknown): boolean {
  if (e instanceof MemwardenError) return false;
  const c = codeOf(e);
  if (c === undefined) return false;
  return /^[0-9A-Z]{5}$/.test(c) || NODE_CONNECTION_CODES.has(c);
}

/**
 * Turn a driver error into a coded MemwardenError (keeping it as `cause`). A MemwardenError or
 * an error that did not come from the database (e.g. thrown by a transaction callback) is
 * returned unchanged so callers see their own errors.
 */
export function normaliseDbError(e: unknown): unknown {
  if (!isDatabaseError(e)) return e;
  const c = codeOf(e)!;
  const m: Mapping = NODE_CONNECTION_CODES.has(c)
    ? { code: 'STORAGE_UNAVAILABLE', retryable: true, reason: 'connection' }
    : (mapSqlState(c) ?? { code: 'STORAGE_FAILED', retryable: false, reason: 'database' });
  const message = e instanceof Error ? e.message : String(e);
  return new MemwardenError(m.code, `database: ${message}`, {
    cause: e,
    details: { sqlstate: c, retryable: m.retryable, reason: m.reason },
  });
}

/** Await `p`, rethrowing any database error normalised. */
export async function normalised<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw normaliseDbError(e);
  }
}

/** The `pg` driver's own (uncoded) messages for a connection that is gone or never came. */
const LOST_CONNECTION =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect)/;

/**
 * The `pg` driver reports a connection that died mid-query ("Connection terminated
 * unexpectedly", "Client has encountered a connection error and is not queryable") as a plain
 * Error without a code. Call this on errors the driver threw for a query or a checkout: those
 * messages are `STORAGE_UNAVAILABLE`; a coded error is normalised as usual; anything else
 * (a bug, e.g. a parameter the driver cannot serialise) passes unchanged and stays a 500.
 */
export function normaliseDriverError(e: unknown): unknown {
  if (!(e instanceof Error) || codeOf(e) !== undefined || !LOST_CONNECTION.test(e.message)) {
    return normaliseDbError(e);
  }
  return new MemwardenError('STORAGE_UNAVAILABLE', `database: ${e.message}`, {
    cause: e,
    details: { retryable: true, reason: 'connection' },
  });
}
