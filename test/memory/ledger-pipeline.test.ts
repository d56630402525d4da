/**
 * The pipelined group commit (ADR 0011): at most two commit transactions are open, the second
 * takes its batch only once it holds the log head (so everything signed while the first
 * committed goes into one batch, and leaf order is commit order); a failed transaction
 * rejects only its own writes and the next one re-reads the frontier; two ledgers sharing
 * one store (two processes) append to one log.
 */
import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { systemClock, systemRandom } from '../../src/adapters/system/index.js';
import { verifyConsistency, verifyInclusion } from '../../src/core/merkle/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import type { Receipt } from '../../src/memory/log/commit.js';
import type { StorageBackend } from '../../src/ports/storage.js';
import { ManualClock, MemoryKeySource } from '../../src/testing/doubles.js';
import { committerOf } from '../../src/memory/log/commit.js';

const openLedger = (storage: StorageBackend, keys = new MemoryKeySource()) =>
  Ledger.open({ storage, keys, clock: systemClock, random: systemRandom });

/** A gate a test opens by hand. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

/** Writes signed and queued for the next commit (white-box: the ledger's queue). */
const queued = (l: Ledger): number =>
  (l as unknown as { pending: unknown[] }).pending.length;
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await tick();
  expect(cond()).toBe(true);
}

/**
 * Wrap a store: count commit transactions, record each one's batch (the leaves it appended),
 * and let a test hold the append of the n-th transaction (0-based) or make it fail.
 */
function instrumented(storage: StorageBackend) {
  const batches: number[][] = [];
  const hold = new Map<number, Promise<void>>();
  const failAt = new Set<number>();
  let opened = 0;
  let open = 0;
  let maxOpen = 0;
  const wrapped = Object.assign(Object.create(storage) as StorageBackend, {
    transaction: <T>(fn: (tx: StorageBackend) => Promise<T>) => {
      const n = opened++;
      open++;
      maxOpen = Math.max(maxOpen, open);
      return storage
        .transaction((tx) => {
          const view = Object.assign(Object.create(tx) as StorageBackend, {
            appendLeaves: async (...args: Parameters<StorageBackend['appendLeaves']>) => {
              await hold.get(n);
              if (failAt.has(n)) throw new Error(`transaction ${n} fails`);
              batches.push(args[1].map((l) => l.index));
              return tx.appendLeaves(...args);
            },
          });
          return fn(view);
        })
        .finally(() => open--);
    },
  });
  return {
    storage: wrapped,
    batches,
    hold,
    failAt,
    get opened() {
      return opened;
    },
    get maxOpen() {
      return maxOpen;
    },
  };
}

describe('pipelined group commit', () => {
  it('the next transaction waits for the head and then takes everything signed meanwhile', async () => {
    const base = await MemoryBackend.open();
    const s = instrumented(base);
    const l = await openLedger(s.storage);
    const u = await l.registerPrincipal('user', 'u');
    const before = s.opened;
    const g = gate();
    s.hold.set(before, g.wait);
    const first = committerOf(l).write({ writer: u.id, content: 'first', tier: 'USER_OBSERVED' });
    await until(() => s.opened > before && queued(l) === 0);
    const rest = Array.from({ length: 40 }, (_, i) =>
      committerOf(l).write({ writer: u.id, content: `note ${i}`, tier: 'USER_OBSERVED' }),
    );
    await until(() => queued(l) === 40);
    // One transaction holds the head, exactly one more is queued behind it: never a third.
    expect(s.opened - before).toBe(2);
    g.open();
    const receipts = await Promise.all([first, ...rest]);
    expect(s.opened - before).toBe(2);
    expect(s.maxOpen).toBe(2);
    // Leaf 0 is the registration (ADR 0033). The first batch is the first write; the second
    // took all 40 queued while it waited.
    expect(s.batches).toEqual([[0], [1], Array.from({ length: 40 }, (_, i) => i + 2)]);
    // Leaf order is the order the writes were queued, and each write got its own leaf.
    expect(receipts.map((r) => r.leafIndex)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    await l.log.audit();
    for (const r of receipts) expect((await l.verifyEntry(r.entry.id)).ok).toBe(true);
    await l.close();
  });

  it('writes arriving in separate event-loop callbacks (HTTP requests) share a commit on a single-writer store', async () => {
    const base = await MemoryBackend.open();
    const s = instrumented(base);
    const l = await openLedger(s.storage);
    const u = await l.registerPrincipal('user', 'u');
    await committerOf(l).write({ writer: u.id, content: 'warm', tier: 'USER_OBSERVED' }); // writer cached
    const before = s.batches.length;
    // 32 callbacks of one check phase, each its own macrotask (microtasks drained between):
    // like 32 requests read in one poll. The in-memory store commits entirely in microtasks,
    // so without the ledger's one turn before taking a batch the first write would commit
    // alone, and so on.
    const receipts = await new Promise<Promise<Receipt>[]>((resolve) => {
      const ps: Promise<Receipt>[] = [];
      for (let i = 0; i < 32; i++)
        setImmediate(() => {
          ps.push(
            committerOf(l).write({ writer: u.id, content: `req ${i}`, tier: 'USER_OBSERVED' }),
          );
          if (ps.length === 32) resolve(ps);
        });
    });
    const done = await Promise.all(receipts);
    const batches = s.batches.slice(before);
    expect(batches.flat()).toHaveLength(32);
    expect(batches.length).toBeLessThanOrEqual(2);
    expect(done.map((r) => r.leafIndex)).toEqual(Array.from({ length: 32 }, (_, i) => i + 2));
    await l.close();
  });

  it('a failed transaction rejects only its writes; the queued one re-reads the frontier and commits', async () => {
    const base = await MemoryBackend.open();
    const s = instrumented(base);
    const l = await openLedger(s.storage);
    const u = await l.registerPrincipal('user', 'u');
    // Some committed leaves first, so a wrong frontier would show in the roots.
    const warm = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        committerOf(l).write({ writer: u.id, content: `warm ${i}`, tier: 'USER_OBSERVED' }),
      ),
    );
    const n = s.opened;
    const g = gate();
    s.hold.set(n, g.wait);
    s.failAt.add(n);
    const doomed = committerOf(l).write({ writer: u.id, content: 'doomed', tier: 'USER_OBSERVED' });
    await until(() => s.opened > n && queued(l) === 0);
    const later = Array.from({ length: 10 }, (_, i) =>
      committerOf(l).write({ writer: u.id, content: `later ${i}`, tier: 'USER_OBSERVED' }),
    );
    await until(() => queued(l) === 10);
    g.open();
    await expect(doomed).rejects.toThrow(`transaction ${n} fails`);
    const receipts = await Promise.all(later);
    expect(receipts.map((r) => r.leafIndex)).toEqual(Array.from({ length: 10 }, (_, i) => i + 6));
    expect(await base.logSize()).toBe(16);
    const audit = await l.log.audit();
    expect(audit.size).toBe(16);
    for (const r of [...warm, ...receipts]) expect((await l.verifyEntry(r.entry.id)).ok).toBe(true);
    await l.close();
  });

  it('a store failure before the head is taken fails the waiting writes instead of retrying forever', async () => {
    const base = await MemoryBackend.open();
    let down = false;
    const flaky = Object.assign(Object.create(base) as StorageBackend, {
      transaction: <T>(fn: (tx: StorageBackend) => Promise<T>) =>
        down ? Promise.reject(new Error('connection refused')) : base.transaction(fn),
    });
    const l = await openLedger(flaky);
    const u = await l.registerPrincipal('user', 'u');
    down = true;
    const ws = Array.from({ length: 5 }, (_, i) =>
      committerOf(l).write({ writer: u.id, content: `w ${i}`, tier: 'USER_OBSERVED' }),
    );
    for (const w of ws) await expect(w).rejects.toThrow('connection refused');
    await l.drain();
    down = false;
    const r = await committerOf(l).write({ writer: u.id, content: 'back', tier: 'USER_OBSERVED' });
    expect(r.leafIndex).toBe(1);
    expect((await l.verifyEntry(r.entry.id)).ok).toBe(true);
  });

  it('two ledgers sharing one store (two processes) append to one log and prove each other’s entries', async () => {
    const base = await MemoryBackend.open();
    const keys = new MemoryKeySource();
    const a = await openLedger(base, keys);
    const b = await openLedger(base, keys);
    const ua = await a.registerPrincipal('user', 'ua');
    const ub = await b.registerPrincipal('user', 'ub');
    const checkpoints = [];
    const receipts: Receipt[] = [];
    for (let round = 0; round < 6; round++) {
      const wa = Array.from({ length: 7 }, (_, i) =>
        committerOf(a).write({ writer: ua.id, content: `a ${round}.${i}`, tier: 'USER_OBSERVED' }),
      );
      const wb = Array.from({ length: 5 }, (_, i) =>
        committerOf(b).write({ writer: ub.id, content: `b ${round}.${i}`, tier: 'USER_OBSERVED' }),
      );
      receipts.push(...(await Promise.all([...wa, ...wb])));
      checkpoints.push(await (round % 2 === 0 ? a : b).checkpoint());
    }
    // One log: the two registrations, then every write has its own leaf, 2..73, and the
    // stored log verifies.
    const idx = receipts.map((r) => r.leafIndex).sort((x, y) => x - y);
    expect(idx).toEqual(Array.from({ length: 72 }, (_, i) => i + 2));
    expect((await a.log.audit()).size).toBe(74);
    // Each checkpoint covers everything committed by either ledger when it was signed.
    expect(checkpoints.map((c) => c.size)).toEqual([14, 26, 38, 50, 62, 74]);
    // Either ledger proves and verifies the other's entries.
    for (const r of receipts.filter((_, i) => i % 5 === 0)) {
      for (const l of [a, b]) {
        const p = await l.proveEntry(r.entry.id);
        expect(
          verifyInclusion(p.leafIndex, p.treeSize, p.leafHash, p.hashes, p.checkpoint.root),
        ).toBe(true);
        expect((await l.verifyEntry(r.entry.id)).ok).toBe(true);
      }
    }
    // Consistency between every pair of checkpoints, served by either ledger.
    for (let i = 0; i < checkpoints.length; i++) {
      for (let j = i + 1; j < checkpoints.length; j++) {
        const [c1, c2] = [checkpoints[i]!, checkpoints[j]!];
        const proof = await (j % 2 === 0 ? a : b).log.consistencyProof(c1.size, c2.size);
        expect(verifyConsistency(c1.size, c2.size, proof, c1.root, c2.root)).toBe(true);
      }
    }
    await a.drain();
    await b.drain();
  });

  it('a rotation by another ledger (another process) is applied in the next commit: a write queued under the old key is re-signed, the kind kept, no table read', async () => {
    const storage = await MemoryBackend.open();
    const keys = new MemoryKeySource();
    const clock = new ManualClock();
    const a = await Ledger.open({ storage, keys, clock, random: systemRandom });
    const b = await Ledger.open({ storage, keys, clock, random: systemRandom });
    const u = await a.registerPrincipal('agent', 'u');
    const first = await committerOf(a).write({
      writer: u.id,
      content: 'one',
      tier: 'USER_OBSERVED',
    });
    expect(first.entry.kid).toBe(u.kid);
    const calls = { principal: 0, keys: 0 };
    const getPrincipal = storage.getPrincipal.bind(storage);
    const keysOf = storage.keysOf.bind(storage);
    const getKey = storage.getKey.bind(storage);
    Object.assign(storage, {
      getPrincipal: (id: string) => (calls.principal++, getPrincipal(id)),
      keysOf: (id: string) => (calls.keys++, keysOf(id)),
      getKey: (kid: string) => (calls.keys++, getKey(kid)),
    });
    clock.advance(1_000n);
    const rotated = await b.rotatePrincipalKey(u.id); // another "process": a is not told
    calls.principal = 0;
    calls.keys = 0;
    clock.advance(1_000n);
    // a signs with the key it knows; its commit reads the rotation under the head lock and
    // re-signs the write with the new key: acknowledged only valid at its position.
    const two = await committerOf(a).write({ writer: u.id, content: 'two', tier: 'USER_OBSERVED' });
    expect(two.entry.kid).toBe(rotated);
    expect((await a.verifyEntry(two.entry.id)).ok).toBe(true);
    const three = await committerOf(a).write({ writer: u.id, content: 'three', tier: 'USER_OBSERVED' });
    expect(three.entry.kid).toBe(rotated);
    // The registry's tables were never consulted for the decision.
    expect(calls).toEqual({ principal: 0, keys: 0 });
    // An agent stays an agent: the tier bound still applies after the refresh.
    await expect(
      committerOf(a).write({ writer: u.id, content: 'op', tier: 'OPERATOR' }),
    ).rejects.toMatchObject({
      code: 'ENTRY_INVALID',
    });
    expect((await a.verifyEntry(three.entry.id)).ok).toBe(true);
    await a.drain();
    await b.drain();
  });
});
