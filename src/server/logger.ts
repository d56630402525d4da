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

/** A pino logger with memwarden's redaction and an ISO timestamp. */
export function createLogger(cfg: LoggerConfig = {}): Logger {
  const opts: LoggerOptions = {
    level: cfg.level ?? 'info',
    base: { service: 'memwarden' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return cfg.destination === undefined ? pino(opts) : pino(opts, cfg.destination);
}
