/**
 * The MCP server through the SDK's in-memory transport, against the real Memory (ephemeral
 * PGlite, deterministic embedder), plus the Streamable HTTP transport with bearer keys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { type CallToolResult, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSegments } from '../../src/core/render/sentinel.js';
import {
  MCP_PROVENANCE_META_KEY,
  McpBackend,
  createMcpServer,
  resolveStdioPrincipal,
  serveHttp,
  toolErrorCode,
} from '../../src/mcp/index.js';
import { Memory } from '../../src/open.js';

const KG_NAMES = [
  'create_entities',
  'create_relations',
  'add_observations',
  'delete_entities',
  'delete_observations',
  'delete_relations',
  'read_graph',
  'search_nodes',
  'open_nodes',
];

let dir = '';
let memory: Memory;
let backend: McpBackend;
let alice = '';
let aliceKey = '';
let bob = '';
let bobKey = '';
let client: Client;

async function connect(principal: string): Promise<Client> {
  const [ct, st] = InMemoryTransport.createLinkedPair();
  const server = createMcpServer(backend, principal);
  await server.connect(st);
  const c = new Client({ name: 'test', version: '0.0.0' });
  await c.connect(ct);
  return c;
}

async function call(
  c: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult;
}
const text = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mw-mcp-'));
  memory = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  ({ id: alice, apiKey: aliceKey } = await memory.createPrincipal('user', 'alice'));
  ({ id: bob, apiKey: bobKey } = await memory.createPrincipal('agent', 'bob'));
  backend = await McpBackend.open(memory);
  client = await connect(alice);
}, 60_000);
afterAll(async () => {
  await client?.close();
  await memory?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('memwarden MCP server (in-memory transport)', () => {
  it('lists the memory tools with annotations and output schemas, and the reference KG tools', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual([
      'add_memory',
      'search_memory',
      'vote_smoothed',
      'get_memory',
      'update_memory',
      'delete_memory',
      'memory_history',
      'graph_search',
      ...KG_NAMES,
    ]);
    const by = new Map(tools.map((t) => [t.name, t]));
    expect(by.get('search_memory')?.annotations?.readOnlyHint).toBe(true);
    expect(by.get('delete_memory')?.annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(by.get('add_memory')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
    });
    expect(by.get('read_graph')?.annotations?.readOnlyHint).toBe(true);
    expect(by.get('delete_entities')?.annotations?.destructiveHint).toBe(true);
    for (const n of [
      'add_memory',
      'search_memory',
      'get_memory',
      'update_memory',
      'delete_memory',
      'memory_history',
    ])
      expect(by.get(n)?.outputSchema?.type).toBe('object');
    // The reference server's input shapes.
    expect(by.get('create_entities')?.inputSchema.required).toEqual(['entities']);
    expect(by.get('create_relations')?.inputSchema.required).toEqual(['relations']);
    expect(by.get('open_nodes')?.inputSchema.required).toEqual(['names']);
  });

  it('adds and searches: the search result is the sealed sentinel context', async () => {
    const add = await call(client, 'add_memory', {
      content: 'Alice prefers dark mode',
      source: 'chat:s1:t1',
    });
    expect(add.isError).toBeFalsy();
    const sc = add.structuredContent as {
      status: string;
      memory: { id: string; writer: string; tier: string };
    };
    expect(sc.status).toBe('stored');
    expect(sc.memory.writer).toBe(alice);
    expect(sc.memory.tier).toBe('USER_OBSERVED');
    expect(text(add)).toMatch(/^\[BEGIN MEMORY entry_id=/);

    const s = await call(client, 'search_memory', { query: 'dark mode', limit: 5 });
    expect(s.isError).toBeFalsy();
    const r = s.structuredContent as {
      context: string;
      seal: string;
      results: { memory: { id: string } }[];
    };
    expect(r.results.map((h) => h.memory.id)).toContain(sc.memory.id);
    expect(text(s)).toBe(r.context);
    const segs = parseSegments(text(s), r.seal);
    expect(segs.find((x) => x.id === sc.memory.id)?.content).toBe('Alice prefers dark mode');

    // get / update / history / delete round out the set.
    const g = await call(client, 'get_memory', { id: sc.memory.id });
    expect((g.structuredContent as { memory: { content: string } }).memory.content).toBe(
      'Alice prefers dark mode',
    );
    const u = await call(client, 'update_memory', {
      id: sc.memory.id,
      content: 'Alice prefers light mode',
    });
    expect(u.isError).toBeFalsy();
    const newId = (u.structuredContent as { memory: { id: string } }).memory.id;
    const h = await call(client, 'memory_history', { id: newId });
    expect(h.isError).toBeFalsy();
    expect(
      (h.structuredContent as { events: { action: string }[] }).events.map((e) => e.action),
    ).toContain('update');
    const d = await call(client, 'delete_memory', { id: newId, reason: 'test' });
    expect(d.structuredContent).toEqual({ id: newId, deleted: true });
  });

  it('does not cross principals', async () => {
    const a = await call(client, 'add_memory', { content: 'alice secret token colour is teal' });
    const id = (a.structuredContent as { memory: { id: string } }).memory.id;
    const bc = await connect(bob);
    const g = await call(bc, 'get_memory', { id });
    expect(g.isError).toBe(true);
    const s = await call(bc, 'search_memory', { query: 'secret token colour' });
    const hits = (s.structuredContent as { results: { memory: { writer: string } }[] }).results;
    expect(hits.every((h) => h.memory.writer === bob)).toBe(true);
    await bc.close();
  });

  it('runs the reference knowledge-graph tools with their input shapes and provenance', async () => {
    const ce = await call(client, 'create_entities', {
      entities: [
        { name: 'John_Smith', entityType: 'person', observations: ['Speaks fluent Spanish'] },
        { name: 'Anthropic', entityType: 'organization', observations: [] },
      ],
    });
    expect(ce.isError).toBeFalsy();
    const created = JSON.parse(text(ce)) as { name: string }[];
    expect(created.map((e) => e.name)).toEqual(['John_Smith', 'Anthropic']);
    // Provenance rides in _meta (the reference's output schema forbids extra fields).
    const prov = ce._meta?.[MCP_PROVENANCE_META_KEY] as {
      entities: Record<string, { writer: string }>;
      relations: { provenance: { writer: string } }[];
    };
    expect(Object.values(prov.entities).every((p) => p.writer === alice)).toBe(true);
    expect(created.every((e) => !('provenance' in e))).toBe(true);

    const cr = await call(client, 'create_relations', {
      relations: [{ from: 'John_Smith', to: 'Anthropic', relationType: 'works_at' }],
    });
    expect(cr.isError).toBeFalsy();
    expect(
      (cr._meta?.[MCP_PROVENANCE_META_KEY] as { relations: { provenance: { writer: string } }[] })
        .relations[0]?.provenance.writer,
    ).toBe(alice);

    const ao = await call(client, 'add_observations', {
      observations: [{ entityName: 'Anthropic', contents: ['Makes Claude'] }],
    });
    expect(JSON.parse(text(ao))).toEqual([
      { entityName: 'Anthropic', addedObservations: ['Makes Claude'] },
    ]);

    // Graph reads answer with sealed context in the text (provenance-marked segments, ADR 0029)
    // and the graph itself as structured content.
    const rg = await call(client, 'read_graph', {});
    // A graph read's text is the sealed rendering; its JSON is the structured content.
    expect(text(rg)).toContain('[BEGIN MEMORY');
    const g = rg.structuredContent as {
      entities: { name: string; observations: string[] }[];
      relations: unknown[];
    };
    expect(g.entities.map((e) => e.name).sort()).toEqual(['Anthropic', 'John_Smith']);
    expect(g.entities.find((e) => e.name === 'Anthropic')?.observations).toEqual(['Makes Claude']);
    expect(g.relations).toMatchObject([
      { from: 'John_Smith', to: 'Anthropic', relationType: 'works_at' },
    ]);
    expect(rg.structuredContent).toMatchObject({
      entities: expect.any(Array),
      relations: expect.any(Array),
    });

    const sn = await call(client, 'search_nodes', { query: 'spanish' });
    expect(
      (sn.structuredContent as { entities: { name: string }[] }).entities.map((e) => e.name),
    ).toEqual(['John_Smith']);
    const on = await call(client, 'open_nodes', { names: ['John_Smith', 'Anthropic'] });
    expect((on.structuredContent as { relations: unknown[] }).relations).toHaveLength(1);

    const dr = await call(client, 'delete_relations', {
      relations: [{ from: 'John_Smith', to: 'Anthropic', relationType: 'works_at' }],
    });
    expect(dr.isError).toBeFalsy();
    const de = await call(client, 'delete_entities', { entityNames: ['John_Smith'] });
    expect(de.isError).toBeFalsy();
    const after = (await call(client, 'read_graph', {})).structuredContent as {
      entities: { name: string }[];
    };
    expect(after.entities.map((e) => e.name)).toEqual(['Anthropic']);
  });

  it('turns failures into coded MCP tool errors, never a crash', async () => {
    const bad = await call(client, 'create_entities', {
      entities: [{ name: '', entityType: 'x', observations: [] }],
    });
    expect(bad.isError).toBe(true);
    expect(toolErrorCode(bad)).toBe('INPUT_INVALID');
    expect(text(bad)).not.toMatch(/^error /); // plain text, as the reference's errors
    const missing = await call(client, 'add_observations', {
      observations: [{ entityName: 'Nobody', contents: ['x'] }],
    });
    expect(toolErrorCode(missing)).toBe('STORAGE_NOT_FOUND');
    expect(text(missing)).toBe('Entity with name Nobody not found');
    const noContent = await call(client, 'add_memory', {});
    expect(toolErrorCode(noContent)).toBe('INPUT_INVALID');
    expect(text(noContent)).toMatch(/^content/);
    const notFound = await call(client, 'get_memory', {
      id: '00000000-0000-4000-8000-000000000000',
    });
    expect(notFound.isError).toBe(true);
    expect(toolErrorCode(notFound)).toMatch(/^[A-Z_]+$/);
    // An unknown tool is a protocol error (JSON-RPC −32602), not a tool result (MCP spec).
    await expect(call(client, 'no_such_tool', {})).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
      data: { code: 'INPUT_INVALID' },
    });
    // The server still answers.
    expect((await client.listTools()).tools.length).toBe(17);
  });

  it('resolves the stdio principal: explicit, unknown, or ambiguous', async () => {
    expect(await resolveStdioPrincipal(memory, alice)).toBe(alice);
    await expect(resolveStdioPrincipal(memory, 'user:nobody')).rejects.toMatchObject({
      code: 'PRINCIPAL_UNKNOWN',
    });
    await expect(resolveStdioPrincipal(memory, undefined)).rejects.toMatchObject({
      code: 'INPUT_INVALID',
    });
  });
});

describe('memwarden MCP server (Streamable HTTP, bearer keys)', () => {
  let http: HttpServer;
  let url = '';
  beforeAll(async () => {
    ({ server: http, url } = await serveHttp(backend, { port: 0 }));
  });
  afterAll(() => new Promise<void>((r) => http.close(() => r())));

  const httpClient = async (key: string): Promise<Client> => {
    const c = new Client({ name: 'http-test', version: '0.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    return c;
  };

  it('acts as the principal of each request key', async () => {
    const bc = await httpClient(bobKey);
    const add = await call(bc, 'add_memory', { content: 'bob likes green tea' });
    expect((add.structuredContent as { memory: { writer: string } }).memory.writer).toBe(bob);
    await bc.close();
    const ac = await httpClient(aliceKey);
    const s = await call(ac, 'search_memory', { query: 'green tea' });
    const hits = (s.structuredContent as { results: { memory: { writer: string } }[] }).results;
    expect(hits.every((h) => h.memory.writer === alice)).toBe(true);
    await ac.close();
  });

  it('refuses a request without a valid key (401)', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    await expect(httpClient('mwk_not_a_real_key_at_all')).rejects.toThrow();
  });

  it('refuses an oversized body (413) before parsing it', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${aliceKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        pad: 'x'.repeat(5 * 1024 * 1024),
      }),
    });
    expect(res.status).toBe(413);
  });
});
