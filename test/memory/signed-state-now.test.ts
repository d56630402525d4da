/**
 * Issue 21 (read-path CPU): `Ledger.signedStateNow` / `liveStateNow` answer a hit's signed state
 * without a promise when nothing has to be loaded or refreshed. Whenever they answer, the answer
 * must be `signedState`'s / `liveState`'s, for every combination of the state columns a row can
 * carry (deleted, superseded, stored expiry cleared / moved back / renewed, never expiring) and
 * of the time it is judged at; and they must defer (null) when the answer needs the log: a row
 * marked deleted that no known tombstone deletes, a row claimed superseded, supersession claims
 * not loaded yet, and — on a shared store — a registry not caught up within its time to live.
 */
import { describe, expect, it } from 'vitest';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/index.js';
import { systemRandom } from '../../src/adapters/system/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { Memory } from '../../src/memory/memory.js';
import type { StoredEntry } from '../../src/ports/storage.js';
import { ManualClock, MemoryKeySource } from '../../src/testing/doubles.js';
import { rawStores } from '../helpers/raw-store.js';

const DAY_NS = 86_400_000_000_000n;

describe.each(rawStores('statenow'))('signedStateNow on $name', ({ make }) => {
  it('answers as signedState whenever it answers, and defers what needs the log', { timeout: 300_000 }, async () => {
    const raw = await make();
    try {
      const clock = new ManualClock(1_700_000_000_000_000_000n, 0n);
      const storage = await raw.open();
      const ledger = await Ledger.open({
        storage,
        keys: new MemoryKeySource(),
        anchor: new MemoryKeySource(),
        clock,
        random: systemRandom,
      });
      const mem = new Memory({
        ledger,
        storage,
        embedder: new DeterministicEmbedder(),
        clock,
        random: systemRandom,
      });
      const alice = (await mem.createPrincipal('user', 'alice')).id;
      const add = async (content: string, tier?: 'USER_VERIFIED') => {
        const r = await mem.add(content, { principal: alice, verbatim: true, ...(tier ? { tier } : {}) });
        if (r.status !== 'stored') throw new Error('not stored');
        return r.memory.id;
      };
      const live = await add('alice drinks green tea');
      const forever = await add('alice was born in Porto', 'USER_VERIFIED');
      const gone = await add('alice used to live in Lyon');
      await mem.delete(gone, { principal: alice, reason: 'moved' });
      const old = await add('alice works on billing');
      await mem.update(old, 'alice leads billing', { principal: alice });

      const rows: StoredEntry[] = [];
      for (const id of [live, forever, gone, old]) {
        const s = await storage.getEntry(id);
        if (s === undefined) throw new Error(`no row ${id}`);
        rows.push(s);
      }
      const verify = async (s: StoredEntry) => {
        const v = await ledger.verifyStored(s);
        if (!v.ok) throw new Error(`${s.id} does not verify`);
        return v.entry;
      };
      // Before anything loaded the supersession claims: deferred.
      const first = rows[0] as StoredEntry;
      expect(ledger.signedStateNow(first, await verify(first), clock.nowNs())).toBeNull();
      await ledger.signedState(first, await verify(first), clock.nowNs());

      const now = clock.nowNs();
      let answered = 0;
      let deferred = 0;
      for (const s of rows) {
        const entry = await verify(s);
        const exp = entry.exp;
        const expiries: (bigint | undefined)[] = [undefined, s.expiresAtNs, now + 40n * DAY_NS];
        if (exp !== undefined) expiries.push(exp - 1n, exp + 1n);
        for (const deleted of [false, true])
          for (const supersededBy of [undefined, s.supersededBy, 'mem_not_a_version'])
            for (const expiresAtNs of expiries)
              for (const at of [now, now + 31n * DAY_NS, now + 400n * DAY_NS]) {
                const row = {
                  ...s,
                  deleted,
                  supersededBy,
                  expiresAtNs,
                } as StoredEntry;
                const fast = ledger.signedStateNow(row, entry, at);
                const slow = await ledger.signedState(row, entry, at);
                const fastLive = ledger.liveStateNow(row, entry, at);
                const slowLive = await ledger.liveState(row, entry, at);
                if (fast === null) {
                  deferred++;
                  expect(fastLive).toBeNull();
                  // Deferred only for what needs the log (or, shared, a registry judged stale).
                  const tombstoned = s.id === gone;
                  expect(
                    (deleted && !tombstoned) ||
                      supersededBy !== undefined ||
                      s.id === old ||
                      (storage.exclusive !== true && at !== now),
                  ).toBe(true);
                } else {
                  answered++;
                  expect(fast).toEqual(slow);
                  expect(fastLive).toEqual(slowLive);
                }
              }
      }
      // The fast path is taken for the common rows, not skipped as a whole.
      expect(answered).toBeGreaterThan(40);
      expect(deferred).toBeGreaterThan(20);

      // A shared store defers once its registry is older than its time to live.
      if (storage.exclusive !== true) {
        const s = rows[0] as StoredEntry;
        const entry = await verify(s);
        expect(ledger.signedStateNow(s, entry, clock.nowNs())).not.toBeNull();
        clock.advance(3_600_000_000_000n);
        expect(ledger.signedStateNow(s, entry, clock.nowNs())).toBeNull();
        await ledger.signedState(s, entry, clock.nowNs()); // refreshes the registry
        expect(ledger.signedStateNow(s, entry, clock.nowNs())).toEqual(
          await ledger.signedState(s, entry, clock.nowNs()),
        );
      }
      await mem.close();
    } finally {
      await raw.close();
    }
  });
});
