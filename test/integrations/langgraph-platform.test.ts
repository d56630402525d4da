/**
 * One deployed LangGraph graph, many users (issue 24): MemwardenPlatformStore takes the user
 * from the first namespace label, and each user is its own principal under the platform — the
 * same one HTTP and MCP give for that user_id — isolated from the others. Before, the store
 * took one fixed principal, so a graph served every user from one memory (or needed a
 * registered principal per user).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemwardenPlatformStore } from '../../src/integrations/langgraph/index.js';
import { Memory } from '../../src/open.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-lg-platform-'));
let memory: Memory;
let platform = '';
beforeAll(async () => {
  memory = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  platform = (await memory.createPrincipal('agent', 'graph-app', { scope: 'platform' })).id;
}, 60_000);
afterAll(async () => {
  await memory.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('MemwardenPlatformStore', () => {
  it("keeps each user's items in that user's principal, in one mixed batch", async () => {
    const store = new MemwardenPlatformStore({ memory, platform });
    await store.batch([
      { namespace: ['alice', 'facts'], key: 'seat', value: { text: 'alice prefers window seats' } },
      { namespace: ['bob', 'facts'], key: 'seat', value: { text: 'bob prefers aisle seats' } },
    ]);
    const alice = await memory.actFor(platform, { userId: 'alice' });
    const bob = await memory.actFor(platform, { userId: 'bob' });
    expect((await store.get(['alice', 'facts'], 'seat'))?.value).toEqual({ text: 'alice prefers window seats' });
    const hits = await store.search(['bob'], { query: 'seat preference', limit: 5 });
    expect(hits.map((h) => h.value)).toEqual([{ text: 'bob prefers aisle seats' }]);
    // stored as the users' own principals, not the platform's
    expect((await memory.getAll({ principal: alice })).map((m) => m.writer)).toEqual([alice]);
    expect((await memory.getAll({ principal: bob })).map((m) => m.writer)).toEqual([bob]);
    expect(await memory.getAll({ principal: platform })).toEqual([]);
    // bob's store cannot address alice's namespace: it is bob's own (empty) space
    expect(await (await store.storeFor('bob')).get(['alice', 'facts'], 'seat')).toBeNull();
  });

  it('refuses an operation that names no user, and runs nothing of its batch', async () => {
    const store = new MemwardenPlatformStore({ memory, platform });
    await expect(store.listNamespaces({})).rejects.toThrow(/names the user/);
    await expect(
      store.batch([
        { namespace: ['carol', 'facts'], key: 'k', value: { v: 1 } },
        { namespace: [], key: 'k', value: { v: 2 } },
      ]),
    ).rejects.toThrow(/names the user/);
    expect(await memory.getAll({ principal: await memory.actFor(platform, { userId: 'carol' }) })).toEqual([]);
    expect((await store.listNamespaces({ prefix: ['alice'] })).length).toBe(1);
  });
});
