/**
 * The reference MCP memory server's knowledge-graph resource cases, re-expressed against
 * `memwarden mcp` as a real stdio child process (the built binary; `npm test` builds first) —
 * the transport the reference runs on, and a session that can carry notifications.
 *
 * SOURCE (cases re-expressed, not copied): modelcontextprotocol/servers,
 * src/memory/__tests__/resource.test.ts @ 18e1918a038097ec2d02d88a771b056c40b822e7 (5 cases:
 * name/URI/MIME type, the handler's JSON contents, the resources.subscribe capability, the
 * subscribe/unsubscribe handlers, their empty acknowledgement), and the notify-only-subscribers
 * rule of src/memory/index.ts at the same commit. MIT licence.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = resolve('dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'mw-compat-resource-'));
const URI = 'memory://knowledge-graph';

const env = (): Record<string, string> => {
  const e: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('MEMWARDEN_')) e[k] = v;
  return { ...e, MEMWARDEN_EMBEDDER: 'deterministic' };
};

let client: Client;
const updates: string[] = [];

beforeAll(async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--data', dir],
    env: env(),
    stderr: 'pipe',
  });
  client = new Client({ name: 'compat-resource', version: '0.0.0' });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  await client.connect(transport);
}, 120_000);
afterAll(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Wait until `pred` holds or `ms` pass (notifications are asynchronous). */
async function until(pred: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return pred();
}

describe('reference resource.test.ts, through `memwarden mcp` over stdio', () => {
  it('lists the resource by its kebab-case name, URI, title and JSON MIME type', async () => {
    const { resources } = await client.listResources();
    expect(resources).toContainEqual(
      expect.objectContaining({
        name: 'knowledge-graph',
        uri: URI,
        title: 'Knowledge Graph',
        mimeType: 'application/json',
      }),
    );
  });

  it('reads the graph as one JSON content item', async () => {
    await client.callTool({
      name: 'create_entities',
      arguments: {
        entities: [{ name: 'Alice', entityType: 'person', observations: ['engineer'] }],
      },
    });
    const r = await client.readResource({ uri: URI });
    expect(r.contents).toHaveLength(1);
    expect(r.contents[0]!.uri).toBe(URI);
    expect(r.contents[0]!.mimeType).toBe('application/json');
    expect(JSON.parse((r.contents[0] as { text: string }).text)).toEqual({
      entities: [{ name: 'Alice', entityType: 'person', observations: ['engineer'] }],
      relations: [],
    });
  }, 60_000);

  it('declares resources.subscribe', () => {
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
  });

  it('acknowledges subscribe and unsubscribe with an empty result', async () => {
    await expect(client.subscribeResource({ uri: URI })).resolves.toEqual({});
    await expect(client.unsubscribeResource({ uri: URI })).resolves.toEqual({});
  });

  it('notifies a subscriber after a graph write, and no one after unsubscribing', async () => {
    updates.length = 0;
    await client.callTool({
      name: 'add_observations',
      arguments: { observations: [{ entityName: 'Alice', contents: ['before subscribing'] }] },
    });
    expect(await until(() => updates.length > 0, 500)).toBe(false);

    await client.subscribeResource({ uri: URI });
    await client.callTool({
      name: 'add_observations',
      arguments: { observations: [{ entityName: 'Alice', contents: ['subscribed'] }] },
    });
    expect(await until(() => updates.includes(URI))).toBe(true);

    await client.unsubscribeResource({ uri: URI });
    updates.length = 0;
    await client.callTool({
      name: 'delete_observations',
      arguments: { deletions: [{ entityName: 'Alice', observations: ['subscribed'] }] },
    });
    expect(await until(() => updates.length > 0, 500)).toBe(false);
  }, 60_000);

  it('an unknown resource URI is an InvalidParams error, not a crash', async () => {
    await expect(client.readResource({ uri: 'memory://nothing' })).rejects.toMatchObject({
      code: -32602,
    });
  });
});
