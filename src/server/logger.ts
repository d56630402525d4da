/**
 * @module server/logger
 * Structured request logs with pino. One line per request: request id, principal, method,
 * route pattern, status, latency, error code. Never content, queries or keys: the request
 * middleware logs only those fields, and redaction is a second fence for anything else.
 */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/** The logging the service needs; a pino logger satisfies it. */
export interface RequestLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Field paths redacted wherever they appear (defence in depth). */
export const REDACT_PATHS = [
  'content',
  'query',
  'apiKey',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.content',
  '*.query',
  '*.apiKey',
  '*.authorization',
];

export interface LoggerConfig {
  /** pino level (default `info`). */
  readonly level?: LoggerOptions['level'];
  /** Where lines go (default stdout); tests pass a stream to read them back. */
  readonly destination?: DestinationStream;
}

/**
 * The logger for access lines (one per request). Those lines are built from fixed fields only —
 * request id, principal id, method, route pattern, status, latency, error code — none of which
 * can hold content, a query or a key (test/server/routes.test.ts pins the field set), so on a
 * pino logger they skip redaction: with the wildcard paths it was ~60% of a line's cost
 * (~6 µs of ~10). Every other line keeps it.
 */
export function accessLogger(logger: RequestLogger): RequestLogger {
  const child = (logger as Partial<Pick<Logger, 'child'>>).child;
  if (typeof child !== 'function') return logger;
  return child.call(logger, {}, { redact: { paths: [], censor: '[redacted]' } });
}

/** Whole seconds → `,"time":"2026-11-21T22:02:14.` (one per second of log lines). */
let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * pino's `stdTimeFunctions.isoTime` (`,"time":"<new Date(Date.now()).toISOString()>"`),
 * exactly, with the text up to the second built once per second: a Date and its ISO string
 * per line were ~1 % of a search's CPU at load (one access line per request).
 */
export function isoTime(ms = Date.now()): string {
  const sec = Math.floor(ms / 1000);
  // Outside 0000–9999 (signed six-digit years) and for non-integers, pino's own formatting.
  if (!Number.isInteger(ms) || ms < -62_167_219_200_000 || ms >= 253_402_300_800_000)
    return `,"time":"${new Date(ms).toISOString()}"`;
  if (sec !== isoSecond) {
    isoPrefix = `,"time":"${new Date(sec * 1000).toISOString().slice(0, -4)}`;
    isoSecond = sec;
  }
  const r = ms - sec * 1000;
  return `${isoPrefix}${r < 10 ? '00' : r < 100 ? '0' : ''}${r}Z"`;
}

/** A pino logger with memwarden's redaction and an ISO timestamp. */
export function createLogger(cfg: LoggerConfig = {}): Logger {
  const opts: LoggerOptions = {
    level: cfg.level ?? 'info',
    base: { service: 'memwarden' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: () => isoTime(),
  };
  return cfg.destination === undefined ? pino(opts) : pino(opts, cfg.destination);
}
