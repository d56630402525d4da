/**
 * Issue 17 finding 8 at the edges: valid JSON nested ~1,500 deep was HTTP 500 (must be a coded
 * 400, on the MCP HTTP transport too); MCP-over-HTTP `tools/call` without `params` was an
 * internal error −32603 (must be invalid params −32602); `GET /mcp` was held open for ever
 * (405, as the Streamable HTTP spec allows a server without a standalone SSE stream).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpBackend, serveHttp } from '../../src/mcp/index.js';
import { Memory } from '../../src/open.js';
import { createApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';
import { recordHostile } from '../helpers/hostile-report.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-bodies-'));
let mem: Memory;
let app: ReturnType<typeof createApp>;
let key = '';
let http: HttpServer;
let url = '';

beforeAll(async () => {
  mem = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  key = (await mem.createPrincipal('user', 'alice')).apiKey;
  const metrics = new Metrics();
  app = createApp({
    memory: mem,
    auth: { authenticate: (t) => mem.authenticate(t) },
    metrics,
    logger: createLogger({ level: 'silent' }),
  });
  ({ server: http, url } = await serveHttp(await McpBackend.open(mem), { port: 0 }));
}, 60_000);
afterAll(async () => {
  await new Promise<void>((r) => http.close(() => r()));
  await mem.close();
  rmSync(dir, { recursive: true, force: true });
});

const nested = (depth: number, inner = '1'): string => '['.repeat(depth) + inner + ']'.repeat(depth);
const nestedObj = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('deeply nested valid JSON', () => {
  for (const [route, body] of [
    ['/v1/memories', `{"content":"x","extra":${nested(1500)}}`],
    ['/v1/memories', nestedObj(1500)],
    ['/v1/actions/check', `{"call":{"tool":"t","arguments":{"a":${nested(1500)}}},"context":"","seal":"s"}`],
    ['/v1/memories/search', `{"query":"q","filters":${nestedObj(3000)}}`],
  ] as const) {
    it(`HTTP ${route}: ${body.length} bytes nested ≥ 1,500 deep → 400 INPUT_INVALID`, async () => {
      const res = await app.request(route, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
      const j = (await res.json()) as { error: { code: string } };
      expect([res.status, j.error.code]).toEqual([400, 'INPUT_INVALID']);
      recordHostile({ suite: 'hostile-bodies', family: 'deeply nested JSON', case: `POST ${route}, ${body.length} bytes`, channel: 'http', held: res.status === 400, outcome: `${res.status} ${j.error.code}` });
    });
  }

  it('MCP over HTTP: a body nested 1,500 deep → 400 with a JSON-RPC error, nothing written', async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_memory","arguments":{"content":"x","deep":${nested(1500)}}}}`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body,
    });
    const j = (await res.json()) as { error?: { code: number; message: string } };
    expect(res.status).toBe(400);
    expect(j.error?.message).toMatch(/INPUT_INVALID/);
    recordHostile({ suite: 'hostile-bodies', family: 'deeply nested JSON', case: 'MCP tools/call nested 1,500 deep', channel: 'mcp-http', held: res.status === 400, outcome: `${res.status} ${j.error?.code}` });
  });
});

describe('MCP Streamable HTTP protocol edges', () => {
  it('tools/call without params is invalid params (−32602), not an internal error', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call' }),
    });
    const j = (await res.json()) as { error?: { code: number } };
    expect(j.error?.code).toBe(-32602);
    recordHostile({ suite: 'hostile-bodies', family: 'protocol misuse', case: 'MCP tools/call without params', channel: 'mcp-http', held: j.error?.code === -32602, outcome: String(j.error?.code) });
  });

  it('GET /mcp is answered at once with 405 and Allow: POST (no standalone SSE stream)', async () => {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), 5_000);
    const res = await fetch(url, {
      method: 'GET',
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
      signal: ctl.signal,
    });
    clearTimeout(timer);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    await res.text();
    recordHostile({ suite: 'hostile-bodies', family: 'protocol misuse', case: 'GET /mcp (standalone SSE stream)', channel: 'mcp-http', held: res.status === 405, outcome: String(res.status) });
  });
});
