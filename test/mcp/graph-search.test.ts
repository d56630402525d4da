/**
 * Issue 19 over MCP: "No … MCP tool runs PPR, community selection or AuthSelect; MCP
 * `search_nodes` is a substring match". The `graph_search` tool, beside the reference-compatible
 * ones: a selection over the caller's graph, AuthSelect with the gate's verdict for an action.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpBackend, createMcpServer, toolErrorCode } from '../../src/mcp/index.js';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import type { Ledger } from '../../src/memory/log/ledger.js';
import type { Memory } from '../../src/memory/memory.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import { testMemory } from '../memory/helpers-memory.js';
import { PAYEE_QUESTION, graphWriter, payeeAttack, payeeGraph } from '../helpers/graph-attack.js';

let dir = '';
let memory: Memory;
let ledger: Ledger;
let client: Client;
let alice = '';
let agent = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mw-mcp-graph-'));
  ({ mem: memory, ledger } = await testMemory(
    withReadModel(await MemoryBackend.open()),
    'graph-search-edge',
  ));
  alice = (await memory.createPrincipal('user', 'alice')).id;
  agent = (await memory.createPrincipal('agent', 'peer')).id;
  await payeeGraph(graphWriter(ledger, alice), alice);
  const backend = await McpBackend.open(memory);
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await createMcpServer(backend, alice).connect(st);
  client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(ct);
}, 60_000);
afterAll(async () => {
  await client?.close();
  await memory?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = async (args: Record<string, unknown>) =>
  (await client.callTool({ name: 'graph_search', arguments: args })) as CallToolResult;
const text = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

describe('MCP graph_search (issue 19)', () => {
  it('is listed read-only with an output schema', async () => {
    const { tools } = await client.listTools();
    const t = tools.find((x) => x.name === 'graph_search');
    expect(t?.annotations?.readOnlyHint).toBe(true);
    expect(t?.outputSchema).toBeDefined();
  });

  it('clean selection allowed; after a peer agent attack the gate does not allow and the text gives the authenticated selection', async () => {
    const clean = await call({ query: PAYEE_QUESTION, k: 3, action: 'send_money' });
    expect(clean.isError).not.toBe(true);
    expect(clean.structuredContent).toMatchObject({
      authSelect: { diverged: false },
      verdict: { kind: 'allow' },
    });
    expect(text(clean)).toContain('GoodIBAN');

    await payeeAttack(graphWriter(ledger, alice), agent, 'USER_OBSERVED', 'DERIVED_UNTRUSTED');
    const r = await call({ query: PAYEE_QUESTION, k: 3, action: 'send_money' });
    const sc = r.structuredContent as Record<string, any>;
    expect(sc.authSelect.diverged).toBe(true);
    expect(sc.verdict.kind).not.toBe('allow');
    expect(text(r)).toContain('DIVERGED');
    const auth = text(r).slice(text(r).indexOf('Authenticated selection'));
    expect(auth).toContain('GoodIBAN');
    expect(auth).not.toContain('EvilIBAN');
  });

  it('bad arguments are coded tool errors', async () => {
    for (const args of [
      {},
      { query: 'x', k: 0 },
      { query: 'x', selector: 'bfs' },
      { query: 'Nobody here' },
    ]) {
      const r = await call(args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      // Plain text, the stable code in _meta (issue 23: as the reference server's errors).
      expect(toolErrorCode(r)).toBe('INPUT_INVALID');
      expect(text(r)).not.toMatch(/^error /);
    }
  });
});
