/**
 * Issue 19 over MCP: "the MCP `search_memory` tool never smooth[s] and return[s] no
 * certificate". With `smoothing`, search_memory returns the ablated sealed contexts and the
 * certificate (structured and in the text the model reads); vote_smoothed gives the certified
 * outcome of the caller's verdicts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSegments } from '../../src/core/render/sentinel.js';
import { certificate } from '../../src/core/smsr/index.js';
import { McpBackend, createMcpServer, toolErrorCode } from '../../src/mcp/index.js';
import { Memory } from '../../src/open.js';

let dir = '';
let memory: Memory;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mw-mcp-smsr-'));
  memory = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  const { id } = await memory.createPrincipal('user', 'alice');
  for (let i = 0; i < 12; i++) {
    const r = await memory.add(
      `Team ${i} meets on ${['Monday', 'Tuesday', 'Friday'][i % 3]} in room ${100 + i}`,
      {
        principal: id,
      },
    );
    if (r.status !== 'stored') throw new Error('fixture held');
  }
  const backend = await McpBackend.open(memory);
  const [ct, st] = InMemoryTransport.createLinkedPair();
  await createMcpServer(backend, id).connect(st);
  client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(ct);
}, 60_000);
afterAll(async () => {
  await client?.close();
  await memory?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

describe('MCP search_memory with smoothing (issue 19)', () => {
  it('returns ablated sealed contexts and the certificate; vote_smoothed certifies the outcome', async () => {
    const r = await call('search_memory', {
      query: 'when does team 4 meet',
      smoothing: { m: 9, k: 3, runs: 5 },
    });
    expect(r.isError).not.toBe(true);
    const sc = r.structuredContent as Record<string, any>;
    const s = sc.smoothing;
    expect(s.poolSize).toBe(9);
    expect(s.contexts).toHaveLength(5);
    expect(sc.context).toBe('');
    for (const c of s.contexts as { ids: string[]; context: string; seal: string }[]) {
      expect(parseSegments(c.context, c.seal).map((x) => x.id)).toEqual(c.ids);
      expect(text(r)).toContain(c.context); // the model reads every ablated context
    }
    expect(s.certificate.delta).toBe(certificate(1, 9, 3, 5).delta);
    expect(text(r)).toContain('vote_smoothed');

    const v = await call('vote_smoothed', {
      t: s.t,
      poolSize: s.poolSize,
      k: s.k,
      runs: s.runs,
      verdicts: ['malicious', 'malicious', 'correct', 'malicious', 'neither'],
    });
    expect(v.isError).not.toBe(true);
    expect(v.structuredContent).toMatchObject({ verdict: 'malicious', safe: false });
    expect((v.structuredContent as { certificate: { delta: number } }).certificate.delta).toBe(
      certificate(1, 9, 3, 5).delta,
    );
    const ok = await call('vote_smoothed', {
      t: 1,
      poolSize: 9,
      k: 3,
      runs: 3,
      verdicts: ['correct', 'correct', 'malicious'],
    });
    expect(ok.structuredContent).toMatchObject({ verdict: 'correct', safe: true });
  });

  it('bad smoothing or verdicts are coded tool errors', async () => {
    for (const smoothing of [
      { m: 0 },
      { m: 4, k: 5 },
      { delta: 0.1 },
      { m: 5, delta: 0.1, t: 1 },
      { m: 5, x: 1 },
      'm=5',
    ]) {
      const r = await call('search_memory', { query: 'team', smoothing });
      expect(r.isError, JSON.stringify(smoothing)).toBe(true);
      // Plain text, the stable code in _meta (issue 23: as the reference server's errors).
      expect(toolErrorCode(r)).toBe('INPUT_INVALID');
      expect(text(r)).not.toMatch(/^error /);
    }
    const r = await call('vote_smoothed', {
      t: 1,
      poolSize: 9,
      k: 3,
      runs: 5,
      verdicts: ['correct'],
    });
    expect(r.isError).toBe(true);
    // Plain text, the stable code in _meta (issue 23: as the reference server's errors).
    expect(toolErrorCode(r)).toBe('INPUT_INVALID');
    expect(text(r)).not.toMatch(/^error /);
  });
});
