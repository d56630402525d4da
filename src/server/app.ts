/**
 * @module server/app
 * The HTTP service as a Hono app: request ids, structured logs and latency metrics for every
 * request; bearer authentication on every `/v1` route; one error mapping (server/errors.ts).
 *
 * Unauthenticated: `GET /healthz`, `GET /openapi.json`, (by default) `GET /metrics`, and the
 * console's static files under `/console/` (server/console.ts), which hold no data.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Hono, type Context, type MiddlewareHandler, type Next } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { routePath } from 'hono/route';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { MemwardenError } from '../core/errors.js';
import type { MemoryApi } from '../memory/api.js';
import { parseBearer, type Authenticator } from './auth.js';
import { EdgeError, mapError } from './errors.js';
import { accessLogger, type RequestLogger } from './logger.js';
import type { Metrics } from './metrics.js';
import { buildOpenApiDocument } from './openapi.js';
import { registerRoutes, type AppEnv, type CheckpointHook } from './routes.js';
import { registerConsole } from './console.js';
import { registerInspectRoutes } from './inspect-routes.js';
import { actForHeaders, actingPrincipal, registerAdminRoutes } from './admin.js';
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
  /**
   * More fields for `GET /healthz` (serve: which storage and vector paths run, and why, and
   * whether a shared store's read model is caught up).
   */
  readonly health?: () => Record<string, unknown>;
}

export interface ConsoleOptions {
  /** The built console (default: `dist/console` next to this module). */
  readonly dir?: string;
  /** Where the evaluation reports are (`<dir>/<name>/report.html`); absent: none listed. */
  readonly reportsDir?: string;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** What `@hono/node-server` passes as the app's env: the Node request behind `c.req`. */
interface NodeBindings {
  readonly incoming?: IncomingMessage;
}

/**
 * The body limit. Hono's `bodyLimit` asks for `c.req.raw.body` first, which on the Node adapter
 * builds a full Web Request and body stream for every request (even a GET): the cheap cases are
 * decided here from the headers, exactly as `bodyLimit` decides them, and only a body of unknown
 * length is counted as it streams (by `bodyLimit`).
 * - `Content-Length` without `Transfer-Encoding`: the length is the body's (Node's HTTP parser
 *   reads exactly that many bytes and refuses a malformed or conflicting header);
 * - neither header on a request Node parsed: HTTP/1.1 says there is no body (RFC 9112 §6.3).
 */
async function bodySizeGuard(
  c: Context<AppEnv>,
  next: Next,
  tooLarge: (c: Context<AppEnv>) => Response,
  streamed: MiddlewareHandler,
): Promise<Response | void> {
  const te = c.req.header('transfer-encoding');
  if (te === undefined) {
    const cl = c.req.header('content-length');
    if (cl !== undefined) {
      // What bodyLimit does: parseInt of the header (Node already refused anything malformed).
      return Number.parseInt(cl, 10) > MAX_BODY_BYTES ? tooLarge(c) : next();
    }
    if ((c.env as NodeBindings | undefined)?.incoming !== undefined) return next();
  }
  return streamed(c, next);
}

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
  const access = accessLogger(logger);

  // Request id, access log and latency for every request, including failures.
  app.use('*', async (c, next) => {
    const t0 = performance.now();
    const inbound = c.req.header('x-request-id');
    const reqId = inbound !== undefined && REQUEST_ID_RE.test(inbound) ? inbound : randomUUID();
    c.set('requestId', reqId);
    // Set before the handler runs, so they go into the response it builds. Setting them on a
    // finished response makes Hono rebuild it (a full Web Response and body stream per request
    // on the Node adapter); that slow path is left only for a response built some other way.
    c.header('x-request-id', reqId);
    c.header('x-content-type-options', 'nosniff');
    await next();
    if (c.res.headers.get('x-request-id') !== reqId) {
      c.header('x-request-id', reqId);
      c.header('x-content-type-options', 'nosniff');
    }
    const seconds = (performance.now() - t0) / 1000;
    const route = routePath(c, -1);
    const status = c.res.status;
    metrics.observeHttp(c.req.method, route, status, seconds);
    const code = c.get('errorCode');
    // Only these fields: the access logger does not redact (server/logger.ts, accessLogger).
    const line = {
      reqId,
      principal: c.get('principal'),
      ...(c.get('platform') === undefined ? {} : { platform: c.get('platform') }),
      method: c.req.method,
      route,
      status,
      latencyMs: Math.round(seconds * 1e6) / 1e3,
      ...(code === undefined ? {} : { code }),
    };
    if (status >= 500) access.error(line, 'request');
    else if (status >= 400) access.warn(line, 'request');
    else access.info(line, 'request');
  });

  const authenticate = async (c: Context<AppEnv>, next: () => Promise<void>): Promise<void> => {
    const token = parseBearer(c.req.header('authorization'));
    // Missing, malformed and unknown keys answer alike: no oracle for which keys exist.
    if (token === undefined)
      throw new MemwardenError('AUTH_REQUIRED', 'a valid bearer API key is required');
    const keyPrincipal = await auth.authenticate(token);
    if (keyPrincipal === undefined)
      throw new MemwardenError('AUTH_REQUIRED', 'a valid bearer API key is required');
    // A platform key may act for an end user named in a header (its own principal, ADR 0058).
    const who = actForHeaders((h) => c.req.header(h));
    c.set('principal', keyPrincipal);
    if (who !== undefined) {
      c.set('platform', keyPrincipal);
      c.set('principal', await actingPrincipal(memory, token, keyPrincipal, who));
    }
    c.header('cache-control', 'no-store');
    await next();
  };
  app.use('/v1/*', authenticate);
  const tooLarge = (c: Context<AppEnv>): Response => {
    if (c.req.method === 'POST' && c.req.path === '/v1/memories')
      metrics.recordRejected('oversize');
    const err = new MemwardenError('INPUT_TOO_LARGE', `the body exceeds ${MAX_BODY_BYTES} bytes`);
    return errorResponse(c, err, logger);
  };
  const streamedBodyLimit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => tooLarge(c as Context<AppEnv>),
  });
  app.use('/v1/*', (c, next) => bodySizeGuard(c, next, tooLarge, streamedBodyLimit));

  const health = opts.health;
  app.get('/healthz', (c) => c.json({ ...(health === undefined ? {} : health()), status: 'ok' }));
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
  const forget = (auth as { forget?: () => void }).forget;
  registerAdminRoutes(app, memory, forget === undefined ? {} : { onKeysChanged: () => forget() });
  registerConsole(app, {
    ...(opts.console?.dir === undefined ? {} : { dir: opts.console.dir }),
    reports,
  });

  app.notFound((c) => errorResponse(c, new EdgeError('ROUTE_NOT_FOUND', 'no such route'), logger));
  app.onError((err, c) => errorResponse(c, err, logger));
  return app;
}
