/**
 * Issue 20, conversation ingestion and time in the library (in-memory backend, deterministic
 * embedder): each role gets the tier and lineage its channel earns — `user` the caller's tier,
 * `assistant` derived from the user turns before it, `tool` EXTERNAL_TOOL, `system` not a
 * memory — and recency-aware ranking weighs the memory's event time, not its write time.
 */
import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { outcome } from '../helpers/outcome.js';
import { testMemory } from './helpers-memory.js';

async function setup() {
  const { mem, clock } = await testMemory(await MemoryBackend.open(), 'conversation');
  const alice = (await mem.createPrincipal('user', 'alice')).id;
  return { mem, clock, alice };
}

describe('add(messages): roles, tiers and lineage', () => {
  it('user → caller tier, assistant → derived from the user turns, tool → EXTERNAL_TOOL, system skipped', async () => {
    const { mem, alice } = await setup();
    const r = await mem.add(
      [
        { role: 'system', content: 'You are a helpful assistant' },
        { role: 'user', name: 'Alice', content: 'I moved to Lisbon last spring' },
        { role: 'assistant', content: 'Noted: Alice lives in Lisbon since last spring' },
        { role: 'tool', content: 'weather(Lisbon) = 21C sunny' },
      ],
      { principal: alice, infer: false, eventAt: '2026-05-01T10:00:00Z' },
    );
    expect(r.held).toEqual([]);
    const byMsg = new Map(r.results.map((x) => [x.message, x.memory]));
    expect(byMsg.has(0)).toBe(false); // the system message is not a memory
    const user = byMsg.get(1);
    const assistant = byMsg.get(2);
    const tool = byMsg.get(3);
    expect([user?.tier, user?.label, user?.parents]).toEqual(['USER_OBSERVED', 'TRUSTED', []]);
    expect(user?.content).toBe('Alice: I moved to Lisbon last spring');
    expect(user?.eventAt).toBe('2026-05-01T10:00:00.000Z');
    expect(assistant?.parents).toEqual([user?.versionId]);
    expect(assistant?.label).toBe('DERIVED_TRUSTED');
    expect(tool?.tier).toBe('EXTERNAL_TOOL');
    expect(tool?.label).toBe('EXTERNAL');
    // Every stored turn verifies and is listed; nothing else was written.
    const all = await mem.getAll({ principal: alice });
    expect(all.map((m) => m.id).sort()).toEqual(r.results.map((x) => x.memory.id).sort());
  });

  it('bad messages are INPUT_INVALID and write nothing', async () => {
    const { mem, alice } = await setup();
    const size = mem.ledger.size;
    expect(await outcome(mem.add([], { principal: alice }))).toBe('INPUT_INVALID');
    expect(
      await outcome(mem.add([{ role: 'wizard', content: 'x' }] as never, { principal: alice })),
    ).toBe('INPUT_INVALID');
    expect(mem.ledger.size).toBe(size);
  });
});

describe('recency-aware ranking', () => {
  it('with a half-life a recent, less relevant memory outranks an old, more relevant one', async () => {
    const { mem, alice } = await setup();
    const at = (content: string, eventAt: string) =>
      mem.add(content, { principal: alice, eventAt, verbatim: true });
    await at('Alice went hiking in the Alps', '2019-06-01T00:00:00Z');
    await at('Alice went hiking in the Pyrenees', '2023-11-01T00:00:00Z');
    await at('Bob baked sourdough bread', '2019-06-02T00:00:00Z');
    const order = async (extra = {}): Promise<string[]> =>
      (
        await mem.search('Alice went hiking in the Alps', { principal: alice, ...extra })
      ).results.map((h) => h.memory.content);
    // Relevance alone: the Alps (the query's own words) first.
    expect((await order())[0]).toBe('Alice went hiking in the Alps');
    // A 30-day half-life: the trip of this month first; the old, unrelated memory last.
    const recent = await order({ recency: { halfLifeMs: 30 * 24 * 3600 * 1000 } });
    expect(recent[0]).toBe('Alice went hiking in the Pyrenees');
    expect(recent.at(-1)).toBe('Bob baked sourdough bread');
    // A half-life of a century: recency no longer reorders.
    expect((await order({ recency: { halfLifeMs: 100 * 365 * 24 * 3600 * 1000 } }))[0]).toBe(
      'Alice went hiking in the Alps',
    );
    expect(await outcome(mem.search('x', { principal: alice, recency: { halfLifeMs: -1 } }))).toBe(
      'INPUT_INVALID',
    );
  });
});
