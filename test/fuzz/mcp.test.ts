/**
 * Hostile MCP tool calls through the SDK's in-memory transport against the real memory
 * (ephemeral PGlite): every memory and knowledge-graph tool with schema-shaped arguments bent
 * out of shape (wrong types, missing / extra fields, unicode edges, huge arrays, other
 * principals' ids), unknown tool names, and non-object arguments.
 *
 * Properties, per call: the call resolves (a JSON-RPC error only for arguments the protocol
 * itself refuses, `InvalidParams`), within 5 s; a tool error carries, in `_meta["memwarden/error"]`, a client
 * code (4xx in the one table — never INTERNAL or a server fault); a failed call wrote nothing
 * (log size, live entries per tier, review queue); no result for one principal carries another
 * principal's memory (operator memory excepted: readable by all).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpBackend, createMcpServer, toolErrorCode } from '../../src/mcp/index.js';
import { Memory } from '../../src/open.js';
import { HTTP_STATUS_BY_CODE } from '../../src/server/errors.js';
import { SCALE, hostileString, jsonValue } from './arbitraries.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-fuzz-mcp-'));
let mem: Memory;
let backend: McpBackend;
interface Who {
  id: string;
  marker: string;
  ids: string[];
  client?: Client;
}
const who: Record<'alice' | 'bob', Who> = {
  alice: { id: '', marker: 'ALICEMARK', ids: [] },
  bob: { id: '', marker: 'BOBMARK', ids: [] },
};

beforeAll(async () => {
  mem = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  backend = await McpBackend.open(mem);
  for (const [name, kind] of [
    ['alice', 'user'],
    ['bob', 'agent'],
  ] as const) {
    const w = who[name];
    w.id = (await mem.createPrincipal(kind, name)).id;
    for (let i = 0; i < 2; i++) {
      const r = await mem.add(`${w.marker} remembers fact ${i}`, { principal: w.id });
      if (r.status === 'stored') w.ids.push(r.memory.id);
    }
    const [ct, st] = InMemoryTransport.createLinkedPair();
    await createMcpServer(backend, w.id).connect(st);
    w.client = new Client({ name: 'fuzz', version: '0.0.0' });
    await w.client.connect(ct);
  }
  // A graph entity per principal, named with the marker.
  await backend.graphCall('create_entities', { entities: [{ name: `${who.alice.marker}-entity`, entityType: 'person', observations: [`${who.alice.marker} obs`] }] }, { principal: who.alice.id, tier: 'USER_OBSERVED' });
  await backend.graphCall('create_entities', { entities: [{ name: `${who.bob.marker}-entity`, entityType: 'person', observations: [`${who.bob.marker} obs`] }] }, { principal: who.bob.id, tier: 'USER_OBSERVED' });
}, 120_000);

afterAll(async () => {
  for (const w of Object.values(who)) await w.client?.close();
  await mem?.close();
  rmSync(dir, { recursive: true, force: true });
});

const idArb = fc.oneof(fc.constant('ALICE_ID'), fc.constant('BOB_ID'), hostileString, fc.integer(), fc.constant(null));
const names = fc.oneof(fc.constant('ALICEMARK-entity'), fc.constant('BOBMARK-entity'), hostileString);
const strs = fc.oneof(fc.array(hostileString, { maxLength: 3 }), fc.array(jsonValue, { maxLength: 2 }), hostileString);
const entity = fc.record({ name: names, entityType: hostileString, observations: strs, extra: jsonValue }, { requiredKeys: [] });
const relation = fc.record({ from: names, to: names, relationType: hostileString }, { requiredKeys: [] });
const anyish = fc.oneof(jsonValue, hostileString, fc.integer(), fc.double(), fc.boolean());

const call = fc.oneof(
  fc.record({ name: fc.constant('add_memory'), arguments: fc.record({ content: hostileString, kind: hostileString, source: hostileString, threadId: hostileString, parents: fc.array(idArb, { maxLength: 3 }), derived: anyish, tier: fc.constant('OPERATOR') }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constant('search_memory'), arguments: fc.record({ query: hostileString, limit: anyish, threshold: anyish, mode: fc.constantFrom('normal', 'research', 'x'), ranking: fc.constantFrom('vector', 'lexical', 'hybrid', 'x'), kind: hostileString, source: hostileString, threadId: hostileString }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constantFrom('get_memory', 'memory_history', 'delete_memory'), arguments: fc.record({ id: idArb, reason: hostileString }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constant('update_memory'), arguments: fc.record({ id: idArb, content: hostileString, reason: hostileString }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constant('create_entities'), arguments: fc.record({ entities: fc.oneof(fc.array(entity, { maxLength: 3 }), anyish) }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constantFrom('create_relations', 'delete_relations'), arguments: fc.record({ relations: fc.oneof(fc.array(relation, { maxLength: 3 }), anyish) }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constant('add_observations'), arguments: fc.record({ observations: fc.oneof(fc.array(fc.record({ entityName: names, contents: strs }, { requiredKeys: [] }), { maxLength: 3 }), anyish) }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constant('delete_entities'), arguments: fc.record({ entityNames: fc.oneof(fc.array(names, { maxLength: 3 }), anyish) }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constant('delete_observations'), arguments: fc.record({ deletions: fc.oneof(fc.array(fc.record({ entityName: names, observations: strs }, { requiredKeys: [] }), { maxLength: 3 }), anyish) }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constant('read_graph'), arguments: fc.record({ cursor: hostileString, limit: anyish }, { requiredKeys: [] }) }),
  fc.record({ name: fc.constantFrom('search_nodes', 'open_nodes'), arguments: fc.record({ query: hostileString, names: fc.oneof(fc.array(names, { maxLength: 3 }), anyish) }, { requiredKeys: [] }) }),
  fc.record({ name: fc.oneof(hostileString, fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty')), arguments: fc.dictionary(fc.string({ maxLength: 5 }), anyish, { maxKeys: 3 }) }),
  fc.record({ name: fc.constantFrom('add_memory', 'create_entities', 'read_graph'), arguments: fc.oneof(fc.constant(null), fc.array(anyish, { maxLength: 2 }), hostileString, fc.integer()) }),
);

function resolveIds(v: unknown): unknown {
  if (v === 'ALICE_ID') return who.alice.ids[0];
  if (v === 'BOB_ID') return who.bob.ids[0];
  if (Array.isArray(v)) return v.map(resolveIds);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveIds(x)]));
  return v;
}

const KG = new Set(['create_entities', 'create_relations', 'add_observations', 'delete_entities', 'delete_observations', 'delete_relations', 'read_graph', 'search_nodes', 'open_nodes']);

/** Every `writer` field anywhere in a result. */
function writers(x: unknown, out: string[] = []): string[] {
  if (Array.isArray(x)) for (const v of x) writers(v, out);
  else if (x !== null && typeof x === 'object')
    for (const [k, v] of Object.entries(x)) {
      if (k === 'writer' && typeof v === 'string') out.push(v);
      else writers(v, out);
    }
  return out;
}

async function snapshot(): Promise<string> {
  const st = mem.storageBackend;
  return JSON.stringify([mem.ledger.size, await st.logSize(), await st.countEntries(), (await st.listReviews({ limit: 10_000 })).length]);
}

describe('MCP tools under hostile arguments', () => {
  it('resolve within bounds, client-coded tool errors, a failed call writes nothing, no cross-principal data', async () => {
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.constantFrom<keyof typeof who>('alice', 'bob'), call, async (p, c) => {
        const me = who[p];
        const other = p === 'alice' ? who.bob : who.alice;
        const args = resolveIds(c.arguments);
        const before = await snapshot();
        const t0 = performance.now();
        let res: CallToolResult | undefined;
        try {
          res = (await me.client!.callTool({ name: c.name, arguments: args as Record<string, unknown> })) as CallToolResult;
        } catch (e) {
          // Only the protocol's own refusals: non-object arguments, an unknown tool name (−32602).
          expect(e, String(e)).toBeInstanceOf(McpError);
          expect((e as McpError).code, String(e)).toBe(ErrorCode.InvalidParams);
          stats['jsonrpc-invalid-params'] = (stats['jsonrpc-invalid-params'] ?? 0) + 1;
        }
        const ms = performance.now() - t0;
        const ctx = `${p} ${c.name} ${JSON.stringify(args)?.slice(0, 300)} -> ${JSON.stringify(res)?.slice(0, 400)}`;
        expect(ms, ctx).toBeLessThan(5000);
        if (res === undefined) {
          expect(await snapshot(), ctx).toBe(before);
          return;
        }
        const text = res.content.map((x) => (x.type === 'text' ? x.text : '')).join('\n');
        if (res.isError === true) {
          const code = toolErrorCode(res);
          expect(code, ctx).toBeDefined();
          const status = HTTP_STATUS_BY_CODE[code as keyof typeof HTTP_STATUS_BY_CODE];
          expect(status, ctx).toBeDefined();
          expect(status, ctx).toBeLessThan(500);
          stats[code!] = (stats[code!] ?? 0) + 1;
          expect(await snapshot(), ctx).toBe(before);
        } else stats[`ok:${c.name}`] = (stats[`ok:${c.name}`] ?? 0) + 1;
        // (An id or name the caller itself sent may be echoed back in an error: that tells it nothing.)
        const all = (text + JSON.stringify(res.structuredContent ?? {})).split(JSON.stringify(args) ?? '').join('');
        const sent = JSON.stringify(args) ?? '';
        // Graph objects carry their writer: every one returned must be the caller's. (A marker in
        // a graph result may be the caller's own entity of that name, so graphs are checked by
        // provenance; memory tools by content marker.)
        for (const w of writers([res.structuredContent, res._meta])) expect(w, `${ctx}: another principal's graph object`).toBe(me.id);
        if (!sent.includes(other.marker) && !KG.has(c.name)) expect(all.includes(other.marker), ctx).toBe(false);
        for (const id of other.ids) if (!sent.includes(id)) expect(all.includes(id), ctx).toBe(false);
      }),
      { numRuns: 80 * SCALE, endOnFailure: true },
    );
    console.log('mcp fuzz outcomes', JSON.stringify(stats));
    expect(Object.keys(stats).filter((k) => k.startsWith('ok:')).length).toBeGreaterThan(2);
    expect(Object.keys(stats).filter((k) => /^[A-Z]/.test(k)).length).toBeGreaterThan(1);
  }, 600_000);
});
