/**
 * MCP over Streamable HTTP with a platform key (issue 24): the end user is named per request
 * (X-Memwarden-User-Id, as on the HTTP API), each user its own principal — the same principal
 * the HTTP API and the library give — and isolated; a non-platform key naming a user is 403.
 * On main the headers were ignored: every request acted as the platform principal itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpBackend, serveHttp } from '../../src/mcp/index.js';
import { Memory } from '../../src/open.js';

let dir = '';
let memory: Memory;
let http: HttpServer;
let url = '';
let platform = '';
let platformKey = '';
let plainKey = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mw-mcp-platform-'));
  memory = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  ({ id: platform, apiKey: platformKey } = await memory.createPrincipal('agent', 'acme', { scope: 'platform' }));
  plainKey = (await memory.createPrincipal('agent', 'plain')).apiKey;
  ({ server: http, url } = await serveHttp(await McpBackend.open(memory), { port: 0 }));
}, 60_000);
afterAll(async () => {
  await new Promise<void>((r) => http.close(() => r()));
  await memory.close();
  rmSync(dir, { recursive: true, force: true });
});

async function client(key: string, userId?: string): Promise<Client> {
  const c = new Client({ name: 'platform-test', version: '0.0.0' });
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (userId !== undefined) headers['x-memwarden-user-id'] = userId;
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return c;
}
const call = async (c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await c.callTool({ name, arguments: args })) as CallToolResult;

describe('MCP over HTTP: a platform key acting for user ids', () => {
  it('writes as the user named per request, and each user sees only its own memories', async () => {
    const alice = await client(platformKey, 'alice');
    const add = await call(alice, 'add_memory', { content: 'alice prefers window seats' });
    const writer = (add.structuredContent as { memory: { writer: string } }).memory.writer;
    expect(writer).toBe(await memory.actFor(platform, { userId: 'alice' }));
    expect(writer).not.toBe(platform);
    await alice.close();

    const bob = await client(platformKey, 'bob');
    await call(bob, 'add_memory', { content: 'bob prefers aisle seats' });
    const s = await call(bob, 'search_memory', { query: 'seats' });
    const hits = (s.structuredContent as { results: { memory: { content: string } }[] }).results;
    expect(hits.map((h) => h.memory.content)).toEqual(['bob prefers aisle seats']);
    await bob.close();

    const own = await client(platformKey);
    const s2 = await call(own, 'search_memory', { query: 'seats' });
    expect((s2.structuredContent as { results: unknown[] }).results).toEqual([]);
    await own.close();
  });

  it('refuses a non-platform key that names a user (403), and a malformed name (400)', async () => {
    const post = (key: string, headers: Record<string, string>) =>
      fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    expect((await post(plainKey, { 'x-memwarden-user-id': 'alice' })).status).toBe(403);
    expect((await post(platformKey, { 'x-memwarden-user-id': 'a', 'x-memwarden-agent-id': 'b' })).status).toBe(400);
  });
});
