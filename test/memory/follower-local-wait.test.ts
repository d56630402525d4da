import { describe, expect, it } from 'vitest';
import { LogFollower } from '../../src/memory/read/follower.js';
import { type EntryChange, LocalCommits } from '../../src/memory/read/observed-storage.js';
import type { RootStorage, StoreEvent, StoredEntry } from '../../src/ports/storage.js';

/**
 * ADR 0074: a follower catching up to a log size waits only for this process's transactions
 * that took the log head below that size (they may hold a leaf it is about to read) — not for
 * one that took it at or after that size, whose leaves all come later. Before, every catch-up
 * waited a whole local group commit under a write load (the cross-process visibility tail).
 */
describe('log follower: which local commits a catch-up waits for', () => {
  function harness() {
    let sink: ((e: StoreEvent) => void) | undefined;
    const rows = (from: number, to: number): StoredEntry[] =>
      Array.from(
        { length: to - from },
        (_, i) => ({ id: `e${from + i}`, leafIndex: from + i }) as unknown as StoredEntry,
      );
    const feed = {
      follow: (s: (e: StoreEvent) => void) => ((sink = s), () => undefined),
      scanEntries: async (o: { afterLeafIndex?: number; limit: number }) => {
        const a = (o.afterLeafIndex ?? -1) + 1;
        return rows(a, a + o.limit);
      },
    };
    const applied: string[] = [];
    const model = {
      apply: (cs: readonly EntryChange[]) => {
        for (const c of cs) if (c.op === 'put') applied.push(c.entry.id);
      },
      applyRemote: () => undefined,
      setServing: () => undefined,
      reset: () => undefined,
    };
    const local = new LocalCommits();
    const f = new LogFollower({} as RootStorage, feed, model, local);
    f.start();
    const emit = (e: StoreEvent): void => sink?.(e);
    return { f, local, applied, emit };
  }
  const ticks = async (n = 20): Promise<void> => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };

  it('does not wait for a local commit that took the head at or after the announced size', async () => {
    const { f, local, applied, emit } = harness();
    emit({ kind: 'sync', size: 10 });
    await ticks();
    // This process holds the head at 12 (another process committed up to 12 first): its own
    // leaves are ≥ 12; leaves 10 and 11 are the other process's.
    let end!: () => void;
    const open = new Promise<void>((r) => (end = r));
    local.heldHead(open, 12);
    emit({ kind: 'log', size: 12 });
    await ticks();
    expect(applied).toEqual(['e10', 'e11']);
    expect(f.status.seen).toBe(12);
    end();
  });

  it('waits for a local commit that took the head below it, then skips its reported leaves', async () => {
    const { f, local, applied, emit } = harness();
    emit({ kind: 'sync', size: 10 });
    await ticks();
    let end!: () => void;
    const open = new Promise<void>((r) => (end = r));
    local.heldHead(open, 10); // this process appends leaf 10; another then commits 11
    emit({ kind: 'log', size: 12 });
    await ticks();
    expect(applied).toEqual([]); // leaf 10 may be this process's, not reported yet
    f.noteLocal([{ op: 'put', entry: { id: 'e10', leafIndex: 10 } as unknown as StoredEntry }]);
    end();
    await ticks();
    expect(applied).toEqual(['e11']);
    expect(f.status.seen).toBe(12);
  });
});
