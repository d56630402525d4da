/**
 * Bugs the fuzzers found, each pinned by the smallest input that showed it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/core/bytes.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { parseNote, parseVerifierKey } from '../../src/core/merkle/index.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpBackend, createMcpServer, toolErrorCode } from '../../src/mcp/index.js';
import { Memory } from '../../src/open.js';
import { VKEY } from './targets.js';

const codeOf = (f: () => unknown): string => {
  try {
    f();
    return 'OK';
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
};

describe('fuzz findings', () => {
  it('base64 with non-zero pad bits is refused (two spellings of one value); `note` target', () => {
    expect(fromBase64('AA==')).toEqual(Uint8Array.of(0));
    expect(codeOf(() => fromBase64('AB=='))).toBe('INPUT_INVALID');
    expect(codeOf(() => fromBase64('AAB='))).toBe('INPUT_INVALID');
    // The note signature line: the fuzzer's input ended its base64 in `f=` instead of `A=`.
    const sig = `${'A'.repeat(94)}f=`;
    expect(codeOf(() => parseNote(`text\n\n\u2014 k ${sig}\n`))).toBe('LOG_CHECKPOINT_MALFORMED');
    expect(codeOf(() => parseNote(`text\n\n\u2014 k ${'A'.repeat(94)}A=\n`))).toBe('OK');
    // And a verifier key whose key bytes are spelled non-canonically.
    const last = VKEY.at(-2)!;
    const alt = VKEY.slice(0, -2) + String.fromCharCode(last.charCodeAt(0) + 1) + '=';
    expect(codeOf(() => parseVerifierKey(VKEY))).toBe('OK');
    expect(codeOf(() => parseVerifierKey(alt))).toBe('KEY_INVALID');
  });
});

describe('fuzz findings on the real memory (PGlite)', () => {
  let mem: Memory;
  let alice = '';
  beforeAll(async () => {
    mem = await Memory.open({ dataDir: mkdtempSync(join(tmpdir(), 'mw-findings-')), ephemeral: true, embedder: 'deterministic' });
    alice = (await mem.createPrincipal('user', 'alice')).id;
  }, 120_000);
  afterAll(async () => mem?.close());

  const code = async (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => 'OK',
      (e: unknown) => (isMemwardenError(e) ? e.code : `raw ${String(e)}`),
    );

  it('U+0000 in content or source is INPUT_INVALID before anything is written (was STORAGE_FAILED / HTTP 500); `http` target', async () => {
    const size = mem.ledger.size;
    const counts = JSON.stringify(await mem.storageBackend.countEntries());
    expect(await code(mem.add('a\u0000b', { principal: alice }))).toBe('INPUT_INVALID');
    expect(await code(mem.add('fine content', { principal: alice, source: 'chat:\u0000' }))).toBe('INPUT_INVALID');
    expect(mem.ledger.size).toBe(size);
    expect(JSON.stringify(await mem.storageBackend.countEntries())).toBe(counts);
    // A good write next to a bad one is unaffected (no shared group-commit failure).
    const [good, bad] = await Promise.all([
      code(mem.add('a perfectly ordinary fact', { principal: alice })),
      code(mem.add('bad\u0000write', { principal: alice })),
    ]);
    expect([good, bad]).toEqual(['OK', 'INPUT_INVALID']);
  });

  it('an operator updates its own OPERATOR memory (was STORAGE_FAILED after the new version committed); `http` target', async () => {
    const ops = (await mem.createPrincipal('operator', 'ops')).id;
    const r = await mem.add('the deployment allows refunds up to 50 EUR', { principal: ops, tier: 'OPERATOR' });
    if (r.status !== 'stored') throw new Error('held');
    const size = mem.ledger.size;
    const next = await mem.update(r.memory.id, 'the deployment allows refunds up to 20 EUR', { principal: ops });
    expect(mem.ledger.size).toBe(size + 1);
    expect(next.supersedes).toBe(r.memory.versionId);
    // The memory keeps its id (ADR 0049): reading it serves the new version, not the old.
    expect((await mem.get(r.memory.id, { principal: ops }))?.versionId).toBe(next.versionId);
    expect((await mem.get(next.id, { principal: alice }))?.content).toContain('20 EUR'); // readable by all
    expect((await mem.history(next.id, { principal: ops })).map((e) => e.action)).toEqual(['add', 'update']);
    // …and still only by its owner: a user may read it, never change it.
    expect(await code(mem.update(next.id, 'refunds unlimited', { principal: alice }))).toBe('AUTH_FORBIDDEN');
    expect(await code(mem.delete(next.id, { principal: alice, reason: 'x' }))).toBe('AUTH_FORBIDDEN');
    expect(await code(mem.delete(next.id, { principal: ops, reason: 'retired' }))).toBe('OK');
    expect(await mem.get(next.id, { principal: alice })).toBeUndefined();
  });

  it('U+0000 in a search query, filter or purge source is INPUT_INVALID, not STORAGE_FAILED', async () => {
    expect(await code(mem.search('a\u0000b', { principal: alice, ranking: 'lexical' }))).toBe('INPUT_INVALID');
    expect(await code(mem.search('ab', { principal: alice, filters: { source: 'a\u0000' } }))).toBe('INPUT_INVALID');
    expect(await code(mem.purge({ principal: alice, source: 'a\u0000' }))).toBe('INPUT_INVALID');
  });

  describe('MCP', () => {
    let backend: McpBackend;
    const clients: Client[] = [];
    const connect = async (principal: string): Promise<Client> => {
      const [ct, st] = InMemoryTransport.createLinkedPair();
      await createMcpServer(backend, principal).connect(st);
      const c = new Client({ name: 'findings', version: '0' });
      await c.connect(ct);
      clients.push(c);
      return c;
    };
    const tool = async (c: Client, name: string, args: unknown): Promise<CallToolResult> =>
      (await c.callTool({ name, arguments: args as Record<string, unknown> })) as CallToolResult;
    const body = (r: CallToolResult): string => (r.content[0] as { text: string }).text;
    beforeAll(async () => {
      backend = await McpBackend.open(mem);
    });
    afterAll(async () => {
      for (const c of clients) await c.close();
    });

    it('non-object tool arguments are InvalidParams, not InternalError; `mcp` target', async () => {
      const c = await connect(alice);
      for (const args of [5, 'x', [1, 2], null]) {
        const err = await c.callTool({ name: 'add_memory', arguments: args as unknown as Record<string, unknown> }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(McpError);
        expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
      }
    });

    it("the knowledge graph is per principal: no one reads or edits another's entities (was one shared fold); `mcp` target", async () => {
      const bob = (await mem.createPrincipal('agent', 'bob')).id;
      const a = await connect(alice);
      const b = await connect(bob);
      expect((await tool(a, 'create_entities', { entities: [{ name: 'Alice_Secret', entityType: 'note', observations: ['pin 4711'] }] })).isError).toBeUndefined();
      const seen = body(await tool(b, 'read_graph', {})) + body(await tool(b, 'search_nodes', { query: 'Alice_Secret' })) + body(await tool(b, 'open_nodes', { names: ['Alice_Secret'] }));
      expect(seen).not.toContain('Alice_Secret');
      expect(seen).not.toContain('4711');
      // Bob's deletes and observations touch only his own graph.
      await tool(b, 'delete_entities', { entityNames: ['Alice_Secret'] });
      expect(toolErrorCode(await tool(b, 'add_observations', { observations: [{ entityName: 'Alice_Secret', contents: ['hijacked'] }] }))).toBe('STORAGE_NOT_FOUND');
      const mine = body(await tool(a, 'read_graph', {}));
      expect(mine).toContain('Alice_Secret');
      expect(mine).toContain('4711');
      expect(mine).not.toContain('hijacked');
    });
  });
});
