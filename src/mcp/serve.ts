/**
 * @module mcp/serve
 * Running the MCP server: stdio (one configured principal) and Streamable HTTP (stateless; a
 * bearer API key per request, resolved with `memory.authenticate`; a server per request bound
 * to that key's principal). Nothing but protocol goes to stdout; diagnostics go to stderr.
 */
import {
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
  createServer,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { MemwardenError, isMemwardenError } from '../core/errors.js';
import { actForHeaders, actingPrincipal } from '../memory/identity/principals.js';
import { jsonTextDepthExceeds } from '../memory/write/limits.js';
import { type McpBackend, type McpMemory, createMcpServer } from './server.js';

/**
 * The principal a stdio server acts as: `explicit` (flag or MEMWARDEN_PRINCIPAL) when it
 * exists; else the only user/agent principal of the store; else a new agent principal named
 * `mcp` (reported through `onCreated`). Several candidates and none named: `INPUT_INVALID`.
 */
export async function resolveStdioPrincipal(
  memory: McpMemory & { createPrincipal(kind: 'agent', name: string): Promise<{ id: string }> },
  explicit: string | undefined,
  onCreated: (id: string) => void = () => undefined,
): Promise<string> {
  const all = await memory.listPrincipals();
  if (explicit !== undefined && explicit !== '') {
    if (!all.some((p) => p.id === explicit))
      throw new MemwardenError('PRINCIPAL_UNKNOWN', `unknown principal ${explicit}`);
    return explicit;
  }
  const candidates = all.filter((p) => p.kind === 'user' || p.kind === 'agent');
  if (candidates.length === 1) return candidates[0]!.id;
  if (candidates.length > 1)
    throw new MemwardenError(
      'INPUT_INVALID',
      `the store has ${candidates.length} user/agent principals; pick one with --principal ID or MEMWARDEN_PRINCIPAL`,
    );
  const p = await memory.createPrincipal('agent', 'mcp');
  onCreated(p.id);
  return p.id;
}

/** Serve MCP over stdin/stdout until the client closes stdin. Resolves when closed. */
export async function serveStdio(b: McpBackend, principal: string): Promise<void> {
  const server = createMcpServer(b, principal);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    const prev = server.onclose;
    server.onclose = () => {
      prev?.();
      resolve();
    };
    process.stdin.once('end', () => void server.close());
    process.stdin.once('close', () => void server.close());
  });
  await server.connect(transport);
  await closed;
}

export interface HttpOptions {
  readonly port: number;
  readonly host?: string;
  /** URL path of the MCP endpoint (default `/mcp`). */
  readonly path?: string;
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) return;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="memwarden"';
  res
    .writeHead(status, headers)
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** Largest JSON-RPC request body accepted over HTTP (the SDK transport sets no limit). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Deepest nesting of a JSON-RPC request body (objects and arrays). */
export const MAX_BODY_DEPTH = 64;

/** The request body as UTF-8, or undefined once it exceeds `max` bytes. */
async function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > max) return undefined;
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const BEARER_RE = /^Bearer +([\x21-\x7e]{8,512}) *$/i;

/** The MCP endpoint's request handler (exported for embedding in another HTTP server). */
export function mcpHttpHandler(b: McpBackend, path = '/mcp') {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname !== path) return jsonRpcError(res, 404, -32601, 'not found');
      const token = BEARER_RE.exec(req.headers.authorization ?? '')?.[1];
      let principal: string | undefined;
      try {
        principal = token === undefined ? undefined : await b.memory.authenticate(token);
        // A platform key may act for an end user per request (ADR 0058): the same headers as
        // the HTTP API; any other key naming one is refused.
        const who = actForHeaders((h) => {
          const v = req.headers[h];
          return Array.isArray(v) ? v.join(',') : v;
        });
        if (principal !== undefined && token !== undefined)
          principal = await actingPrincipal(b.memory, token, principal, who);
      } catch (e) {
        if (!isMemwardenError(e)) throw e;
        const status = e.code === 'AUTH_FORBIDDEN' ? 403 : e.code === 'INPUT_INVALID' ? 400 : 401;
        return jsonRpcError(res, status, -32001, `error ${e.code}: ${e.message}`);
      }
      if (principal === undefined)
        return jsonRpcError(
          res,
          401,
          -32001,
          'error AUTH_REQUIRED: a valid bearer API key is required',
        );
      // Stateless Streamable HTTP without a standalone SSE stream: GET (the stream) and DELETE
      // (session end) are 405 with Allow, as the spec lets such a server answer (a GET used
      // to be held open for ever; issue 17).
      if (req.method !== 'POST') {
        if (res.headersSent) return;
        res
          .writeHead(405, { 'content-type': 'application/json', allow: 'POST' })
          .end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: {
                code: -32000,
                message: 'error INPUT_INVALID: method not allowed; POST JSON-RPC to this endpoint',
              },
              id: null,
            }),
          );
        return;
      }
      // Stateless: no later message can reach this client, so no subscriptions are offered.
      const server = createMcpServer(b, principal, { subscriptions: false });
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true }); // no sessionIdGenerator: stateless;
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      let body: unknown;
      if (req.method === 'POST') {
        const raw = await readBody(req, MAX_BODY_BYTES);
        if (raw === undefined)
          return jsonRpcError(res, 413, -32600, 'error INPUT_INVALID: request body too large');
        // Nesting decided on the text, before the SDK's recursive validation (a valid document
        // nested ~1,500 deep was an internal error; issue 17).
        if (jsonTextDepthExceeds(raw, MAX_BODY_DEPTH))
          return jsonRpcError(
            res,
            400,
            -32600,
            `error INPUT_INVALID: the body nests deeper than ${MAX_BODY_DEPTH} levels`,
          );
        try {
          body = JSON.parse(raw) as unknown;
        } catch {
          return jsonRpcError(res, 400, -32700, 'error INPUT_INVALID: body is not JSON');
        }
      }
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (e) {
      process.stderr.write(`memwarden mcp http: ${e instanceof Error ? e.message : String(e)}\n`);
      jsonRpcError(res, 500, -32603, 'error INTERNAL: unexpected failure');
    }
  };
}

/** Serve MCP over Streamable HTTP at `http://host:port/mcp`. */
export async function serveHttp(
  b: McpBackend,
  o: HttpOptions,
): Promise<{ server: HttpServer; url: string }> {
  const handler = mcpHttpHandler(b, o.path ?? '/mcp');
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '127.0.0.1', () => resolve());
  });
  const a = server.address() as AddressInfo;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return { server, url: `http://${host}:${a.port}${o.path ?? '/mcp'}` };
}
