/**
 * @module server
 * The HTTP service: `createApp` builds the Hono app over a `MemoryApi`, `startServer` listens.
 */
export { createApp, type AppOptions, type ConsoleOptions, type MetricsAccess } from './app.js';
export { startServer, type RunningServer, type StartServerOptions } from './serve.js';
export {
  createCachedAuthenticator,
  createHashedKeyAuthenticator,
  createStaticKeyAuthenticator,
  hashApiKey,
  parseBearer,
  MAX_BEARER_TOKEN_LENGTH,
  type Authenticator,
  type CachedAuthenticatorOptions,
} from './auth.js';
export {
  Metrics,
  noopMetrics,
  labelValue,
  type EntriesCollector,
  type MetricsOptions,
  type MetricsSink,
} from './metrics.js';
export { createLogger, REDACT_PATHS, type LoggerConfig, type RequestLogger } from './logger.js';
export {
  EdgeError,
  EdgeErrorCodes,
  HTTP_STATUS_BY_CODE,
  mapError,
  type ApiErrorCode,
  type EdgeErrorCode,
  type ErrorBody,
  type MappedError,
} from './errors.js';
export { buildOpenApiDocument } from './openapi.js';
export { MAX_BODY_BYTES, MAX_CONTENT_BYTES } from './schemas.js';
export { DEFAULT_DELETE_REASON, type AppEnv, type AppVariables } from './routes.js';
