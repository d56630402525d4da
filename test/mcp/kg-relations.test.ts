/**
 * Issue 19: "The reference MCP memory server's current behaviour for relations in
 * `search_nodes` / `open_nodes` … is matched exactly." The reference server
 * (@modelcontextprotocol/server-memory, `KnowledgeGraphManager.searchNodes` / `openNodes`)
 * returns every relation with at least one endpoint among the matched entities — a node's
 * connections to entities outside the set included; memwarden returned only relations with
 * both endpoints inside.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpBackend, createMcpServer } from '../../src/mcp/index.js';
import { Memory } from '../../src/open.js';

let dir = '';
let memory: Memory;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mw-mcp-kgrel-'));
  memory = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  const { id } = await memory.createPrincipal('user', 'alice');
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await createMcpServer(await McpBackend.open(memory), id).connect(st);
  client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(ct);
  const call = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: args });
  await call('create_entities', {
    entities: [
      { name: 'Ada', entityType: 'person', observations: ['writes programs'] },
      { name: 'Babbage', entityType: 'person', observations: [] },
      { name: 'Engine', entityType: 'machine', observations: [] },
    ],
  });
  await call('create_relations', {
    relations: [
      { from: 'Ada', to: 'Babbage', relationType: 'works_with' },
      { from: 'Babbage', to: 'Engine', relationType: 'designed' },
      { from: 'Engine', to: 'Ada', relationType: 'inspired' },
    ],
  });
}, 60_000);
afterAll(async () => {
  await client?.close();
  await memory?.close();
  rmSync(dir, { recursive: true, force: true });
});

const rels = async (name: string, args: Record<string, unknown>) => {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const g = r.structuredContent as {
    relations: { from: string; to: string; relationType: string }[];
  };
  return g.relations.map((x) => `${x.from} ${x.relationType} ${x.to}`).sort();
};

describe('search_nodes / open_nodes relations as the reference server returns them', () => {
  it('open_nodes returns every relation touching a named entity', async () => {
    expect(await rels('open_nodes', { names: ['Ada'] })).toEqual([
      'Ada works_with Babbage',
      'Engine inspired Ada',
    ]);
  });
  it('search_nodes returns every relation touching a matched entity', async () => {
    expect(await rels('search_nodes', { query: 'machine' })).toEqual([
      'Babbage designed Engine',
      'Engine inspired Ada',
    ]);
  });
});
