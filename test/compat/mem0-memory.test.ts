/**
 * Mem0's own OSS `Memory` test cases, re-expressed against `memwarden/mem0` — the one import a
 * Mem0 user changes — over a real memwarden Memory (embedded PGlite, deterministic embedder).
 *
 * SOURCE (cases re-expressed, not copied; Apache-2.0):
 * - mem0ai/mem0, mem0-ts/src/oss/tests/memory.crud.test.ts
 *   @ cde8c54b67d4faf76152c4af3f51b54e7f436056 — 22 cases (get, update, delete, deleteAll,
 *   getAll, search, history). The peer mocks its LLM and embedder; memwarden needs neither
 *   (without an extraction model it stores what it is given, Mem0's `infer: false`).
 * - Mem0's documented usage (mem0-ts/src/oss/README.md, the OSS quickstart): messages with
 *   metadata, top-level userId on reads (the 1.x spelling), metadata filters, agent / run
 *   scopes, search's default of 20 results.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Memory, type Mem0MemoryItem } from '../../src/integrations/mem0/index.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

let dir = '';
let memory: Memory;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'mw-compat-mem0-'));
  // Mem0's constructor is synchronous; memwarden opens on first use.
  memory = new Memory({ open: { dataDir: dir, ephemeral: true, embedder: 'deterministic' } });
});
afterAll(async () => {
  await memory?.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
const user = (what: string): string => `${what}_${++n}`;

describe('memory.crud.test.ts › get()', () => {
  const userId = user('get');
  it('returns the memory whose id add() gave', async () => {
    const added = await memory.add('I love AI', { userId });
    const id = added.results[0]!.id;
    const item = await memory.get(id);
    expect(item?.id).toBe(id);
  });
  it('the memory field is a string', async () => {
    const added = await memory.add('Testing get', { userId });
    expect(typeof (await memory.get(added.results[0]!.id))!.memory).toBe('string');
  });
  it('an unknown id is null', async () => {
    expect(await memory.get('nonexistent-uuid-12345')).toBeNull();
  });
  it('a stored memory has a hash and a valid createdAt', async () => {
    const added = await memory.add('Hash test', { userId });
    const item = (await memory.get(added.results[0]!.id))!;
    expect(typeof item.hash).toBe('string');
    expect(Number.isNaN(new Date(item.createdAt).getTime())).toBe(false);
  });
});

describe('memory.crud.test.ts › update()', () => {
  const userId = user('update');
  it('answers Mem0’s success message', async () => {
    const id = (await memory.add('Original', { userId, infer: false })).results[0]!.id;
    expect((await memory.update(id, 'Updated')).message).toBe('Memory updated successfully!');
  });
  it('the new text is what get() returns, under the same id', async () => {
    const id = (await memory.add('Before update', { userId, infer: false })).results[0]!.id;
    await memory.update(id, 'After update');
    expect((await memory.get(id))!.memory).toBe('After update');
  });
  it('createdAt stays; updatedAt is set', async () => {
    const id = (await memory.add('Timestamp test', { userId, infer: false })).results[0]!.id;
    const before = (await memory.get(id))!;
    await memory.update(id, 'New text');
    const after = (await memory.get(id))!;
    expect(after.createdAt).toBe(before.createdAt);
    expect(after.updatedAt).toBeDefined();
  });
  it('the hash changes with the text', async () => {
    const id = (await memory.add('Hash change', { userId, infer: false })).results[0]!.id;
    const before = (await memory.get(id))!;
    await memory.update(id, 'Completely different text');
    expect((await memory.get(id))!.hash).not.toBe(before.hash);
  });
});

describe('memory.crud.test.ts › delete()', () => {
  const userId = user('delete');
  it('answers Mem0’s success message', async () => {
    const id = (await memory.add('Delete me', { userId, infer: false })).results[0]!.id;
    expect((await memory.delete(id)).message).toBe('Memory deleted successfully!');
  });
  it('get() is null after a delete', async () => {
    const id = (await memory.add('Temporary', { userId, infer: false })).results[0]!.id;
    await memory.delete(id);
    expect(await memory.get(id)).toBeNull();
  });
});

describe('memory.crud.test.ts › deleteAll()', () => {
  const userId = user('deleteall');
  it('removes every memory of the user', async () => {
    await memory.add('Fact A', { userId });
    await memory.add('Fact B', { userId });
    expect((await memory.deleteAll({ userId })).message).toBe('Memories deleted successfully!');
    expect((await memory.getAll({ filters: { user_id: userId } })).results).toHaveLength(0);
  });
  it('refuses without a filter', async () => {
    await expect(memory.deleteAll({})).rejects.toThrow(
      'At least one filter is required to delete all memories',
    );
  });
});

describe('memory.crud.test.ts › getAll()', () => {
  const userId = user('getall');
  it('returns the user’s memories', async () => {
    await memory.add('First', { userId });
    await memory.add('Second', { userId });
    const r = await memory.getAll({ filters: { user_id: userId } });
    expect(r.results.length).toBeGreaterThanOrEqual(2);
  });
  it('each result has an id and a memory string', async () => {
    const r = await memory.getAll({ filters: { user_id: userId } });
    for (const item of r.results) {
      expect(item.id).toBeDefined();
      expect(typeof item.memory).toBe('string');
    }
  });
  it('a user with no memories gets none', async () => {
    expect((await memory.getAll({ filters: { user_id: 'no_such_user' } })).results).toHaveLength(0);
  });
});

describe('memory.crud.test.ts › search()', () => {
  const userId = user('search');
  beforeAll(async () => {
    await memory.add('I love TypeScript', { userId });
  });
  it('answers { results: [] }-shaped', async () => {
    const r = await memory.search('TypeScript', { filters: { user_id: userId } });
    expect(Array.isArray(r.results)).toBe(true);
  });
  it('hits carry a numeric score', async () => {
    const r = await memory.search('TypeScript', { filters: { user_id: userId } });
    expect(r.results.length).toBeGreaterThan(0);
    expect(typeof r.results[0]!.score).toBe('number');
  });
  it('refuses a search naming no user, agent or run', async () => {
    await expect(memory.search('query', {})).rejects.toThrow(
      'filters must contain at least one of: user_id, agent_id, run_id',
    );
  });
  it('a user with no memories finds nothing', async () => {
    expect(
      (await memory.search('query', { filters: { user_id: 'empty_user' } })).results,
    ).toHaveLength(0);
  });
});

describe('memory.crud.test.ts › history()', () => {
  const userId = user('history');
  it('an add is recorded', async () => {
    const id = (await memory.add('New fact', { userId })).results[0]!.id;
    const h = await memory.history(id);
    expect(h.length).toBeGreaterThan(0);
    expect(h[0]).toMatchObject({
      memoryId: id,
      action: 'ADD',
      previousValue: null,
      newValue: 'New fact',
    });
  });
  it('an update adds a row', async () => {
    const id = (await memory.add('Before', { userId })).results[0]!.id;
    await memory.update(id, 'After');
    const h = await memory.history(id);
    expect(h.length).toBeGreaterThanOrEqual(2);
    expect(h.at(-1)).toMatchObject({
      action: 'UPDATE',
      previousValue: 'Before',
      newValue: 'After',
    });
  });
  it('an unknown id has no history', async () => {
    expect(await memory.history('nonexistent-id')).toHaveLength(0);
  });
});

describe('Mem0’s documented usage', () => {
  it('add(messages, { userId, metadata }) then getAll({ userId }) and a metadata filter', async () => {
    const alice = user('alice');
    const added = await memory.add(
      [
        { role: 'user', content: "I'm planning to watch a movie tonight. Any recommendations?" },
        { role: 'assistant', content: 'How about thriller movies? They can be quite engaging.' },
        { role: 'user', content: "I'm not a big fan of thriller movies but I love sci-fi movies." },
      ],
      { userId: alice, metadata: { category: 'movie_recommendations' } },
    );
    expect(added.results.length).toBeGreaterThan(0);
    expect(added.results.every((r) => r.event === 'ADD')).toBe(true);
    const all = await memory.getAll({ userId: alice });
    expect(all.results.some((r) => r.memory.includes('sci-fi'))).toBe(true);
    expect(all.results.every((r) => r.metadata?.category === 'movie_recommendations')).toBe(true);
    const hits = await memory.search('sci-fi movies', {
      userId: alice,
      filters: { category: 'movie_recommendations' },
    });
    expect(hits.results.length).toBeGreaterThan(0);
    const none = await memory.search('sci-fi movies', {
      userId: alice,
      filters: { category: 'food' },
    });
    expect(none.results).toHaveLength(0);
  });

  it('users do not see each other; agent and run scopes narrow a user’s memories', async () => {
    const a = user('scoped-a');
    const b = user('scoped-b');
    await memory.add('a likes green tea', { userId: a, agentId: 'concierge', runId: 'r1' });
    await memory.add('a takes the early train', { userId: a, runId: 'r2' });
    expect((await memory.getAll({ userId: b })).results).toHaveLength(0);
    const r1 = await memory.getAll({ filters: { user_id: a, run_id: 'r1' } });
    expect(r1.results.map((r: Mem0MemoryItem) => r.memory)).toEqual(['a likes green tea']);
    expect(r1.results[0]).toMatchObject({ userId: a, agentId: 'concierge', runId: 'r1' });
    const byAgent = await memory.search('tea', { userId: a, agentId: 'concierge' });
    expect(byAgent.results.map((r) => r.memory)).toEqual(['a likes green tea']);
  });

  it('search returns up to 20 results by default (Mem0’s topK)', async () => {
    const u = user('many');
    const words = ['apple', 'river', 'piano', 'garden', 'rocket', 'violin', 'canyon', 'harbour'];
    for (let i = 0; i < 24; i++)
      await memory.add(`note ${i}: ${words[i % 8]} ${words[(i * 3 + 1) % 8]} ${i * 7}`, {
        userId: u,
      });
    expect((await memory.search('note', { userId: u })).results.length).toBe(20);
  });

  it('an add the same memory already holds is NONE, and the id is the existing one', async () => {
    const u = user('noop');
    const first = await memory.add('my passport expires in 2031', { userId: u });
    const again = await memory.add('my passport expires in 2031', { userId: u });
    expect(again.results[0]).toMatchObject({ id: first.results[0]!.id, event: 'NONE' });
  });
});
