/**
 * Issue 24 (left open by stop 25): what the console shows about a principal and an entry's
 * status comes from signed records, never from the cached columns an edit at rest can change.
 * Each case edits the store at rest, then a freshly opened Memory (a restarted process) answers:
 * - `whoami` (the console's "signed in as … (kind)") and the gate decisions' scope (an
 *   operator sees everyone's) take the kind from the signed registry: `principals.kind` raised
 *   to operator shows `user`, and the user still sees only its own gate decisions;
 * - the investigation listing (the console's Entries screen) and the lineage view take an
 *   entry's status from the log (tombstones, signed versions, the signed expiry): a tombstoned
 *   entry whose `deleted` column was cleared lists as deleted and failing (`state`), never
 *   live; a live entry marked deleted without a tombstone lists as live and failing.
 */
import { describe, expect, it } from 'vitest';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/index.js';
import { systemClock, systemRandom } from '../../src/adapters/system/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { Memory } from '../../src/memory/memory.js';
import type { RootStorage } from '../../src/ports/storage.js';
import { MemoryKeySource } from '../../src/testing/doubles.js';
import { keepLedger, ledgerOf } from '../helpers/ledger-of.js';
import { type RawStore, rawStores } from '../helpers/raw-store.js';

async function memoryOn(
  storage: RootStorage,
  keys: MemoryKeySource,
  anchor: MemoryKeySource,
): Promise<Memory> {
  const ledger = await Ledger.open({
    storage,
    keys,
    anchor,
    clock: systemClock,
    random: systemRandom,
  });
  return keepLedger(
    new Memory({
      ledger,
      storage,
      embedder: new DeterministicEmbedder(),
      clock: systemClock,
      random: systemRandom,
    }),
    ledger,
  );
}

async function world(make: () => Promise<RawStore>) {
  const raw = await make();
  const keys = new MemoryKeySource();
  const anchor = new MemoryKeySource();
  const fresh = async (): Promise<Memory> => memoryOn(await raw.open(), keys, anchor);
  const mem = await fresh();
  const alice = (await mem.createPrincipal('user', 'alice')).id;
  const bob = (await mem.createPrincipal('user', 'bob')).id;
  const ops = (await mem.createPrincipal('operator', 'ops')).id;
  return { raw, fresh, mem, alice, bob, ops };
}

describe.each(rawStores('status'))('console status from signed records on $name', ({ make }) => {
  it(
    'whoami and the gate decisions scope read the signed kind, not principals.kind',
    { timeout: 300_000 },
    async () => {
      const w = await world(make);
      try {
        const at = systemClock.nowNs();
        for (const [actor, tool] of [
          [w.alice, 'send_email'],
          [w.bob, 'wire_money'],
        ] as const) {
          await ledgerOf(w.mem).storage.appendAudit({
            id: crypto.randomUUID(),
            atNs: at,
            actor,
            action: 'gate.hold',
            subject: tool,
            details: { tool, reason: 'test', sensitive: true },
          });
        }
        await w.raw.sql("UPDATE principals SET kind = 'operator' WHERE id = $1", [w.alice]);
        const mem = await w.fresh();
        expect((await mem.whoami(w.alice)).kind).toBe('user');
        const seen = await mem.gateDecisions({ principal: w.alice, limit: 50 });
        expect(seen.map((d) => d.principal)).toEqual([w.alice]);
        // The real operator still sees both.
        const all = await mem.gateDecisions({ principal: w.ops, limit: 50 });
        expect(new Set(all.map((d) => d.principal))).toEqual(new Set([w.alice, w.bob]));
        // The admin list shows the signed kind too.
        const listed = await mem.adminListPrincipals({ by: w.ops });
        expect(listed.find((p) => p.id === w.alice)?.kind).toBe('user');
      } finally {
        await w.raw.close();
      }
    },
  );

  it(
    'the investigation listing and lineage take the status from the log, and flag the edited row',
    { timeout: 300_000 },
    async () => {
      const w = await world(make);
      try {
        const add = async (content: string): Promise<string> => {
          const r = await w.mem.add(content, {
            principal: w.alice,
            tier: 'USER_VERIFIED',
            verbatim: true,
          });
          if (r.status !== 'stored') throw new Error('not stored');
          return r.memory.id;
        };
        const gone = await add('alice used to live in Porto');
        await w.mem.delete(gone, { principal: w.alice, reason: 'moved' });
        const kept = await add('alice has a cat called Miso');
        await w.raw.sql('UPDATE entries SET deleted = false WHERE id = $1', [gone]);
        await w.raw.sql('UPDATE entries SET deleted = true WHERE id = $1', [kept]);
        const mem = await w.fresh();
        const page = await mem.investigate({ principal: w.ops, owner: w.alice, limit: 50 });
        const row = (id: string) => page.rows.find((r) => r.id === id);
        expect(row(gone)).toMatchObject({
          status: 'deleted',
          verified: false,
          failure: { code: 'ENTRY_INVALID', stage: 'state' },
        });
        expect(row(kept)).toMatchObject({
          status: 'live',
          verified: false,
          failure: { code: 'ENTRY_INVALID', stage: 'state' },
        });
        // A status filter matched only through the cleared column: the row is listed as the
        // failure it is, with its signed status — never as a live result.
        const live = await mem.investigate({
          principal: w.ops,
          owner: w.alice,
          statuses: ['live'],
          limit: 50,
        });
        expect(live.rows.find((r) => r.id === gone)).toMatchObject({
          status: 'deleted',
          verified: false,
          failure: { stage: 'state' },
        });
        expect(live.rows.filter((r) => r.verified && r.status !== 'live')).toEqual([]);
        // The entry screen and the lineage view agree.
        const opened = await mem.investigateEntry(gone, { principal: w.ops });
        expect(opened.row.status).toBe('deleted');
        expect(opened.row.verified).toBe(false);
        const g = await mem.ancestors(kept, { principal: w.alice });
        expect(g.nodes[0]).toMatchObject({ id: kept, state: 'unverified', code: 'ENTRY_INVALID' });
      } finally {
        await w.raw.close();
      }
    },
  );
});
