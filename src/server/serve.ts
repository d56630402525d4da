/**
 * @module server/serve
 * Listen on a port with `@hono/node-server`; resolve once listening, close gracefully.
 */
import type { AddressInfo } from 'node:net';
import {
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
  createServer,
} from 'node:http';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AppEnv } from './routes.js';

export interface StartServerOptions {
  readonly app: Hono<AppEnv>;
  /** 0 picks a free port. */
  readonly port: number;
  /** Default `127.0.0.1`: exposing the service is an explicit choice. */
  readonly host?: string;
  /**
   * Another handler served on the same port under `path` (exactly, or `path` + `?…`): `serve`
   * mounts the MCP endpoint at `/mcp`, so one process and one key serve HTTP and MCP.
   */
  readonly mount?: {
    readonly path: string;
    readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  };
}

export interface RunningServer {
  /** `http://host:port` as actually bound. */
  readonly url: string;
  /** Stop accepting, end idle keep-alive connections, resolve when closed. */
  close(): Promise<void>;
}

/** How long an idle keep-alive connection is kept (ms): above common balancers' 60 s. */
const KEEP_ALIVE_MS = 65_000;

/** Start serving `app`. Rejects if the port cannot be bound. */
export function startServer(opts: StartServerOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const mount = opts.mount;
    const server = serve({
      fetch: opts.app.fetch,
      port: opts.port,
      hostname: host,
      ...(mount === undefined
        ? {}
        : {
            createServer: ((o: object, hono: RequestListener) =>
              createServer(o, (req, res) => {
                const u = req.url ?? '/';
                if (u === mount.path || u.startsWith(`${mount.path}?`)) mount.handler(req, res);
                else hono(req, res);
              })) as unknown as typeof createServer,
          }),
    }) as Server;
    // An idle keep-alive connection stays open longer than a load balancer's (or a client
    // pool's) idle timeout: with Node's default 5 s, the server closes connections the balancer
    // (AWS ALB: 60 s) or a client still holds, and the next request sent on one fails ("other
    // side closed", a 502 at the balancer). The headers timeout must stay above it.
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    server.headersTimeout = KEEP_ALIVE_MS + 1_000;
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      const addr = server.address() as AddressInfo;
      const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve({
        url: `http://${h}:${addr.port}`,
        close: () =>
          new Promise<void>((res, rej) => {
            server.close((err) => (err === undefined ? res() : rej(err)));
            server.closeIdleConnections();
          }),
      });
    });
  });
}
