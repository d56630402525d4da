/**
 * Issue 20 through the edges: consolidation events, conversations, metadata, event time,
 * scopes and filters over HTTP and MCP, on the embedded store and (with
 * MEMWARDEN_TEST_DATABASE_URL) on the PostgreSQL server — the same real Memory behind both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { McpBackend, createMcpServer } from '../../src/mcp/index.js';
import { Memory } from '../../src/open.js';
import { createApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const schemas: string[] = [];
afterAll(async () => {
  if (url === undefined || schemas.length === 0) return;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await c.end();
});

const stores: [string, boolean][] = [
  ['PGlite', true],
  ['PostgreSQL server', url !== undefined],
];

for (const [name, enabled] of stores) {
  describe.runIf(enabled)(`issue 20 over HTTP and MCP (${name})`, () => {
    async function open() {
      const dir = mkdtempSync(join(tmpdir(), 'mw-v2-'));
      let postgres: string | undefined;
      if (name !== 'PGlite') {
        const schema = `mw_v2_${process.pid}_${schemas.length}_${Date.now().toString(36)}`;
        schemas.push(schema);
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(`CREATE SCHEMA ${schema}`);
        await c.end();
        postgres = `${url}${url?.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
      }
      const mem = await Memory.open({
        dataDir: dir,
        ephemeral: true,
        embedder: 'deterministic',
        ...(postgres === undefined ? {} : { postgres, readModel: false as const }),
      });
      const { id: alice, apiKey } = await mem.createPrincipal('user', 'alice');
      const metrics = new Metrics();
      const app = createApp({
        memory: mem,
        auth: { authenticate: (t) => mem.authenticate(t) },
        metrics,
        logger: createLogger({ level: 'silent' }),
      });
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await app.request(path, {
          method,
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await res.text();
        return {
          status: res.status,
          json: (text.startsWith('{') ? JSON.parse(text) : {}) as Record<string, any>,
        };
      };
      const close = async () => {
        await mem.close();
        rmSync(dir, { recursive: true, force: true });
      };
      return { mem, alice, call, close };
    }

    it('HTTP: ADD, NOOP (200, nothing written), UPDATE of the same id; history shows the previous value', async () => {
      const { call, close } = await open();
      try {
        const a = await call('POST', '/v1/memories', {
          content: 'Alice lives in Berlin',
          metadata: { topic: 'home' },
        });
        expect([a.status, a.json.event]).toEqual([201, 'ADD']);
        const again = await call('POST', '/v1/memories', {
          content: 'Alice lives in Berlin',
          metadata: { topic: 'home' },
        });
        expect([again.status, again.json.event, again.json.versionId]).toEqual([
          200,
          'NOOP',
          a.json.versionId,
        ]);
        const b = await call('POST', '/v1/memories', {
          content: 'Alice lives in Paris',
          metadata: { topic: 'home' },
        });
        expect([b.status, b.json.event, b.json.id, b.json.previous?.content]).toEqual([
          201,
          'UPDATE',
          a.json.id,
          'Alice lives in Berlin',
        ]);
        const got = await call('GET', `/v1/memories/${a.json.id}`);
        expect(got.json.content).toBe('Alice lives in Paris');
        const h = await call('GET', `/v1/memories/${a.json.id}/history`);
        const events = (h.json.events ?? h.json.history ?? []) as {
          action: string;
          previous?: string;
        }[];
        expect(events.map((e) => e.action)).toEqual(['add', 'update']);
        expect(events[1]?.previous).toBe('Alice lives in Berlin');
        const put = await call('PUT', `/v1/memories/${a.json.id}`, {
          content: 'Alice lives in Rome',
          metadata: { topic: 'home', moved: true },
        });
        expect([put.status, put.json.id, put.json.metadata]).toEqual([
          200,
          a.json.id,
          { topic: 'home', moved: true },
        ]);
      } finally {
        await close();
      }
    });

    it('HTTP: a conversation, its session dates as event times, and filters in search and listing', async () => {
      const { call, close } = await open();
      try {
        const r = await call('POST', '/v1/memories', {
          messages: [
            {
              role: 'user',
              name: 'Caroline',
              content: 'I went to a support group yesterday',
              eventAt: '2023-05-08T13:56:00Z',
            },
            { role: 'system', content: 'You are a helpful assistant' },
            {
              role: 'user',
              name: 'Melanie',
              content: 'I painted a sunrise last year',
              eventAt: '2023-05-08T13:57:00Z',
            },
            {
              role: 'user',
              name: 'Caroline',
              content: 'I am planning a trip to Sweden',
              eventAt: '2023-06-09T10:00:00Z',
            },
          ],
          runId: 'conv-1',
          metadata: { conversation: 'conv-1' },
        });
        expect(r.status).toBe(201);
        expect(r.json.results.map((x: any) => [x.event, x.message, x.memory.content])).toEqual([
          ['ADD', 0, 'Caroline: I went to a support group yesterday'],
          ['ADD', 2, 'Melanie: I painted a sunrise last year'],
          ['ADD', 3, 'Caroline: I am planning a trip to Sweden'],
        ]);
        expect(r.json.results[0].memory.metadata).toEqual({
          conversation: 'conv-1',
          role: 'user',
          name: 'Caroline',
        });
        expect(r.json.results[0].memory.eventAt).toBe('2023-05-08T13:56:00.000Z');
        const s = await call('POST', '/v1/memories/search', {
          query: 'what did Caroline do',
          filters: { name: 'Caroline', eventAt: { lt: '2023-06-01' } },
          runId: 'conv-1',
        });
        expect(s.json.results.map((h: any) => h.memory.content)).toEqual([
          'Caroline: I went to a support group yesterday',
        ]);
        const listed = await call(
          'GET',
          `/v1/memories?filters=${encodeURIComponent(JSON.stringify({ name: { in: ['Melanie'] } }))}`,
        );
        expect(listed.json.memories.map((m: any) => m.content)).toEqual([
          'Melanie: I painted a sunrise last year',
        ]);
        const bad = await call('POST', '/v1/memories/search', {
          query: 'x',
          filters: { n: { gt: [1] } },
        });
        expect([bad.status, bad.json.error?.code]).toEqual([400, 'INPUT_INVALID']);
        const both = await call('POST', '/v1/memories', {
          content: 'x',
          messages: [{ role: 'user', content: 'y' }],
        });
        expect(both.status).toBe(400);
      } finally {
        await close();
      }
    });

    it('MCP: add_memory with messages and metadata, search_memory with filters', async () => {
      const { mem, alice, close } = await open();
      const backend = await McpBackend.open(mem);
      const [ct, st] = InMemoryTransport.createLinkedPair();
      await createMcpServer(backend, alice).connect(st);
      const c = new Client({ name: 'test', version: '0.0.0' });
      await c.connect(ct);
      const tool = async (name: string, args: Record<string, unknown>) =>
        (await c.callTool({ name, arguments: args })) as CallToolResult;
      try {
        const a = await tool('add_memory', {
          content: 'The standup is at 9am',
          metadata: { team: 'core' },
        });
        expect((a.structuredContent as any).event).toBe('ADD');
        const u = await tool('add_memory', {
          content: 'The standup is at 10am',
          metadata: { team: 'core' },
        });
        expect((u.structuredContent as any).event).toBe('UPDATE');
        expect((u.structuredContent as any).memory.id).toBe((a.structuredContent as any).memory.id);
        const conv = await tool('add_memory', {
          messages: [
            { role: 'user', content: 'My favourite colour is green' },
            { role: 'assistant', content: 'Noted, green it is' },
          ],
          runId: 'chat-7',
        });
        const results = (conv.structuredContent as any).results as {
          event: string;
          memory: { runId: string; parents: string[] };
        }[];
        expect(results.map((x) => x.event)).toEqual(['ADD', 'ADD']);
        // The assistant turn is derived from the user turn before it (lineage).
        expect(results[1]?.memory.parents).toHaveLength(1);
        const s = await tool('search_memory', { query: 'standup time', filters: { team: 'core' } });
        expect(
          ((s.structuredContent as any).results as any[]).map((h) => h.memory.content),
        ).toEqual(['The standup is at 10am']);
        const r = await tool('search_memory', { query: 'colour', runId: 'chat-7', limit: 5 });
        expect(
          ((r.structuredContent as any).results as any[]).every((h) => h.memory.runId === 'chat-7'),
        ).toBe(true);
      } finally {
        await c.close();
        await close();
      }
    });
  });
}
