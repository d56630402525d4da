/**
 * `memwarden mcp --data DIR` as a real stdio child process (the built binary; `npm test`
 * builds first), and the data-folder lock that keeps a second process off the same store.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = resolve('dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'mw-mcp-stdio-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = (): Record<string, string> => {
  const e: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('MEMWARDEN_')) e[k] = v;
  return { ...e, MEMWARDEN_EMBEDDER: 'deterministic' };
};

describe('memwarden mcp over stdio (child process)', () => {
  it('serves add_memory and search_memory, locks the store, and releases it on close', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--data', dir],
      env: env(),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const client = new Client({ name: 'stdio-test', version: '0.0.0' });
    await client.connect(transport); // any non-protocol byte on stdout would break this
    try {
      const add = (await client.callTool({
        name: 'add_memory',
        arguments: { content: 'the deploy window is Tuesday 14:00 UTC' },
      })) as CallToolResult;
      expect(add.isError).toBeFalsy();
      const added = add.structuredContent as {
        status: string;
        memory: { id: string; writer: string };
      };
      expect(added.status).toBe('stored');
      expect(stderr).toContain(`created agent principal ${added.memory.writer}`);

      const s = (await client.callTool({
        name: 'search_memory',
        arguments: { query: 'deploy window' },
      })) as CallToolResult;
      expect(s.isError).toBeFalsy();
      const r = s.structuredContent as { seal: string; results: { memory: { id: string } }[] };
      expect(r.results.map((h) => h.memory.id)).toContain(added.memory.id);
      const text = (s.content[0] as { text: string }).text;
      expect(text).toContain(`[BEGIN MEMORY entry_id=${added.memory.id} `);
      expect(text).toContain(`[END MEMORY seal=${r.seal}]`);

      // A second process on the same PGlite folder gets a coded error, not a corrupt store.
      expect(existsSync(join(dir, 'LOCK'))).toBe(true);
      const second = spawnSync(process.execPath, [BIN, 'mcp', '--data', dir], {
        env: env(),
        input: '',
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(second.status).toBe(2);
      expect(second.stderr).toMatch(
        /error STORAGE_FAILED: data folder .* is in use by process \d+/,
      );
      expect(second.stdout).toBe('');
    } finally {
      await client.close();
    }
    for (let i = 0; i < 50 && existsSync(join(dir, 'LOCK')); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(join(dir, 'LOCK'))).toBe(false);

    // Reopening reuses the principal created on first run (the store's only agent).
    const again = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--data', dir],
      env: env(),
      stderr: 'pipe',
    });
    const c2 = new Client({ name: 'stdio-test-2', version: '0.0.0' });
    await c2.connect(again);
    try {
      const s = (await c2.callTool({
        name: 'search_memory',
        arguments: { query: 'deploy window' },
      })) as CallToolResult;
      expect((s.structuredContent as { results: unknown[] }).results.length).toBeGreaterThan(0);
    } finally {
      await c2.close();
    }
  }, 60_000);
});
