/**
 * @module server/app
 * The HTTP service as a Hono app: request ids, structured logs and latency metrics for every
 * request; bearer authentication on every `/v1` route; one error mapping (server/errors.ts).
 *
 * Unauthenticated: `GET /healthz`, `GET /openapi.json`, (by default) `GET /metrics`, and the
 * console's static files under `/console/` (server/console.ts), which hold no data.
 */
import { randomUUID } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { routePath } from 'hono/route';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { MemwardenError } from '../core/errors.js';
import type { MemoryApi } from '../memory/api.js';
import { parseBearer, type Authenticator } from './auth.js';
import { EdgeError, mapError } from './errors.js';
import type { RequestLogger } from './logger.js';
import type { Metrics } from './metrics.js';
import { buildOpenApiDocument } from './openapi.js';
import { registerRoutes, type AppEnv, type CheckpointHook } from './routes.js';
import { registerConsole } from './console.js';
import { registerInspectRoutes } from './inspect-routes.js';
import { ReportLibrary } from './reports.js';
import { MAX_BODY_BYTES } from './schemas.js';

/** Who may read `/metrics`. */
export type MetricsAccess = 'public' | 'authenticated' | 'disabled';

export interface AppOptions {
  readonly memory: MemoryApi;
  readonly auth: Authenticator;
  readonly metrics: Metrics;
  readonly logger: RequestLogger;
  /** Default `public` (scrapers on a private network); `authenticated` requires a key. */
  readonly metricsAccess?: MetricsAccess;
  /**
   * Called with each checkpoint before `GET /v1/log/checkpoint` serves it; returns it with
   * witness cosignatures appended to the note (`memwarden serve --witness`, src/witness).
   */
  readonly cosignCheckpoint?: CheckpointHook;
  /**
   * Accept a precomputed `embedding` on add and search (ADR 0012). Default false: the server
   * embeds every text with its own model.
   */
  readonly clientEmbeddings?: boolean;
  /** The review console at `/console/` (server/console.ts). */
  readonly console?: ConsoleOptions;
}

export interface ConsoleOptions {
  /** The built console (default: `dist/console` next to this module). */
  readonly dir?: string;
  /** Where the evaluation reports are (`<dir>/<name>/report.html`); absent: none listed. */
  readonly reportsDir?: string;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** Send the coded JSON error for `err`, logging server faults with their cause. */
function errorResponse(c: Context<AppEnv>, err: unknown, logger: RequestLogger): Response {
  const m = mapError(err);
  c.set('errorCode', m.code);
  if (m.serverFault) {
    const e = err instanceof Error ? err : undefined;
    logger.error(
      {
        reqId: c.get('requestId'),
        code: m.code,
        // name, code and stack only: a cause's message may quote stored content
        err:
          e === undefined
            ? { type: typeof err }
            : { name: e.name, code: (e as { code?: unknown }).code, stack: e.stack },
      },
      'request failed',
    );
  }
  if (m.retryAfter !== undefined) c.header('Retry-After', String(m.retryAfter));
  return c.json(m.body, m.status as ContentfulStatusCode);
}

/** Build the service. The app holds no state of its own beyond what it is given. */
export function createApp(opts: AppOptions): Hono<AppEnv> {
  const { memory, auth, metrics, logger } = opts;
  const metricsAccess = opts.metricsAccess ?? 'public';
  const app = new Hono<AppEnv>();
  const openapi = JSON.stringify(buildOpenApiDocument());

  // Request id, access log and latency for every request, including failures.
  app.use('*', async (c, next) => {
    const t0 = performance.now();
    const inbound = c.req.header('x-request-id');
    const reqId = inbound !== undefined && REQUEST_ID_RE.test(inbound) ? inbound : randomUUID();
    c.set('requestId', reqId);
    await next();
    c.header('x-request-id', reqId);
    c.header('x-content-type-options', 'nosniff');
    const seconds = (performance.now() - t0) / 1000;
    const route = routePath(c, -1);
    const status = c.res.status;
    metrics.observeHttp(c.req.method, route, status, seconds);
    const line = {
      reqId,
      principal: c.get('principal'),
      method: c.req.method,
      route,
      status,
      latencyMs: Math.round(seconds * 1e6) / 1e3,
      ...(c.get('errorCode') === undefined ? {} : { code: c.get('errorCode') }),
    };
    if (status >= 500) logger.error(line, 'request');
    else if (status >= 400) logger.warn(line, 'request');
    else logger.info(line, 'request');
  });

  const authenticate = async (c: Context<AppEnv>, next: () => Promise<void>): Promise<void> => {
    const token = parseBearer(c.req.header('authorization'));
    // Missing, malformed and unknown keys answer alike: no oracle for which keys exist.
    if (token === undefined)
      throw new MemwardenError('AUTH_REQUIRED', 'a valid bearer API key is required');
    const principal = await auth.authenticate(token);
    if (principal === undefined)
      throw new MemwardenError('AUTH_REQUIRED', 'a valid bearer API key is required');
    c.set('principal', principal);
    c.header('cache-control', 'no-store');
    await next();
  };
  app.use('/v1/*', authenticate);
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => {
        if (c.req.method === 'POST' && c.req.path === '/v1/memories')
          metrics.recordRejected('oversize');
        const err = new MemwardenError(
          'INPUT_TOO_LARGE',
          `the body exceeds ${MAX_BODY_BYTES} bytes`,
        );
        return errorResponse(c as Context<AppEnv>, err, logger);
      },
    }),
  );

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/openapi.json', (c) =>
    c.body(openapi, 200, { 'content-type': 'application/json; charset=utf-8' }),
  );
  if (metricsAccess !== 'disabled') {
    const handler = async (c: Context<AppEnv>): Promise<Response> => {
      const { contentType, body } = await metrics.expose();
      return c.body(body, 200, { 'content-type': contentType });
    };
    if (metricsAccess === 'authenticated') app.get('/metrics', authenticate, handler);
    else app.get('/metrics', handler);
  }

  registerRoutes(app, memory, metrics, {
    clientEmbeddings: opts.clientEmbeddings === true,
    ...(opts.cosignCheckpoint === undefined ? {} : { cosignCheckpoint: opts.cosignCheckpoint }),
  });
  const reports = new ReportLibrary(opts.console?.reportsDir);
  registerInspectRoutes(app, memory, reports);
  registerConsole(app, {
    ...(opts.console?.dir === undefined ? {} : { dir: opts.console.dir }),
    reports,
  });

  app.notFound((c) => errorResponse(c, new EdgeError('ROUTE_NOT_FOUND', 'no such route'), logger));
  app.onError((err, c) => errorResponse(c, err, logger));
  return app;
}
