/**
 * Issue 17 finding 2: one caller's bad row never fails another caller's write. A row that
 * slips past validation — here a `source` URI of 2,000 CJK characters (6,000 UTF-8 bytes):
 * within the record's code-point limit, over the database index's byte limit on `uri` — is
 * written straight through the ledger while 48 other principals write concurrently, so they
 * all share its group commit. Before: the whole commit failed and every other write with it
 * (48/48 on PostgreSQL). Now the failed commit is retried in halves and only the bad write
 * fails. Also: `purge` with sources that cannot be stored (an audit subject over the index
 * limit, a tombstone reason over its limit) answers without failing after tombstoning.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { systemClock, systemRandom } from '../../src/adapters/system/index.js';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { mulberry32 } from '../../src/core/prng.js';
import { committerOf } from '../../src/memory/log/commit.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { auditStore } from '../../src/memory/log/store-audit.js';
import { Memory } from '../../src/memory/memory.js';
import type { RootStorage, StorageBackend, StoredEntry } from '../../src/ports/storage.js';
import { MemoryKeySource } from '../../src/testing/doubles.js';
import { recordHostile } from '../helpers/hostile-report.js';

const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => undefined);
});

/** 2,000 varied CJK characters (varied: a repeated one compresses to fit the index). */
const next = mulberry32(17);
const CJK = Array.from({ length: 2000 }, () =>
  String.fromCodePoint(0x4e00 + Math.floor(next() * 0x5000)),
).join('');
const url = process.env.MEMWARDEN_TEST_DATABASE_URL;

interface Backend {
  readonly name: string;
  open(): Promise<RootStorage>;
  /** The bad row: a URI the store refuses at commit (or a poisoned one the double refuses). */
  readonly badUri: string;
}

/** The in-memory store has no index limit: a double refuses the poisoned row at commit. */
function poisoned(s: RootStorage): RootStorage {
  const refuse = (es: readonly StoredEntry[]) => {
    if (es.some((e) => e.uri?.startsWith('poison:') === true))
      throw new Error('index row size exceeds btree maximum (double)');
  };
  const wrapTx = (tx: StorageBackend): StorageBackend =>
    Object.assign(Object.create(tx) as StorageBackend, {
      putEntries: async (es: readonly StoredEntry[]) => {
        refuse(es);
        return tx.putEntries!(es);
      },
      putEntry: async (e: StoredEntry) => {
        refuse([e]);
        return tx.putEntry(e);
      },
    });
  return Object.assign(Object.create(s) as RootStorage, {
    transaction: <T>(fn: (tx: StorageBackend) => Promise<T>) =>
      s.transaction((tx) => fn(wrapTx(tx))),
  });
}

const backends: Backend[] = [
  { name: 'memory', open: async () => poisoned(await MemoryBackend.open()), badUri: 'poison:x' },
  {
    name: 'pglite',
    open: async () => {
      const s = await PgliteBackend.open({});
      closers.push(() => s.close());
      return s;
    },
    badUri: `https://example.com/${CJK}`,
  },
  {
    name: 'pglite-worker',
    open: async () => {
      const s = await PgliteBackend.open({ worker: true });
      closers.push(() => s.close());
      return s;
    },
    badUri: `https://example.com/${CJK}`,
  },
  ...(url === undefined
    ? []
    : [
        {
          name: 'postgres',
          open: async () => {
            const schema = `mw_iso_${process.pid}_${Date.now().toString(36)}`;
            const s = await PgBackend.open({ connectionString: url, schema });
            closers.push(async () => {
              await s.close();
              const c = new pg.Client({ connectionString: url });
              await c.connect();
              await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
              await c.end();
            });
            return s;
          },
          badUri: `https://example.com/${CJK}`,
        },
      ]),
];

describe.each(backends)('group-commit failure isolation on $name', (b) => {
  it(
    'a row the store refuses at commit fails only its own write',
    { timeout: 180_000 },
    async () => {
      const storage = await b.open();
      const ledger = await Ledger.open({
        storage,
        keys: new MemoryKeySource(),
        clock: systemClock,
        random: systemRandom,
      });
      const ps = [];
      for (let i = 0; i < 49; i++) ps.push((await ledger.registerPrincipal('user', `p${i}`)).id);
      // Writers resolved first, so all 49 writes queue together and share one commit.
      await Promise.all(
        ps.map((p) =>
          committerOf(ledger).write({ writer: p, content: 'warm', tier: 'USER_OBSERVED' }),
        ),
      );
      const [bad, ...good] = await Promise.allSettled([
        committerOf(ledger).write({
          writer: ps[0]!,
          content: 'bad row',
          tier: 'USER_OBSERVED',
          uri: b.badUri,
        }),
        ...ps.slice(1).map((p, i) =>
          committerOf(ledger).write({
            writer: p,
            content: `fact ${i}`,
            tier: 'USER_OBSERVED',
            uri: `chat:${i}`,
          }),
        ),
      ]);
      const ok = good.filter((r) => r.status === 'fulfilled').length;
      recordHostile({
        suite: 'commit-isolation',
        family: 'one bad row in a group commit',
        case: `source URI of 2,000 CJK characters beside 48 other principals' writes`,
        channel: b.name,
        held: bad!.status === 'rejected' && ok === 48,
        outcome: `${ok}/48 other writes committed; the bad one ${bad!.status}`,
      });
      expect(ok, 'the other principals’ writes all commit').toBe(48);
      expect(bad!.status).toBe('rejected');
      const reason = (bad as PromiseRejectedResult).reason;
      // The database's own refusal, coded (the double throws a plain error).
      if (b.name !== 'memory')
        expect(isMemwardenError(reason) ? reason.code : 'RAW').not.toBe('RAW');
      for (const r of good) {
        const v = await ledger.verifyEntry(
          (r as PromiseFulfilledResult<{ entry: { id: string } }>).value.entry.id,
        );
        expect(v.ok).toBe(true);
      }
      await ledger.checkpoint();
      expect((await auditStore(ledger)).findings).toEqual([]);
      await ledger.drain();
    },
  );

  it(
    'purge with a source no entry can carry, or one longer than a tombstone reason, answers without failing after tombstoning',
    { timeout: 180_000 },
    async () => {
      const storage = await b.open();
      const ledger = await Ledger.open({
        storage,
        keys: new MemoryKeySource(),
        clock: systemClock,
        random: systemRandom,
      });
      const mem = new Memory({
        ledger,
        storage,
        embedder: new DeterministicEmbedder(),
        clock: systemClock,
        random: systemRandom,
      });
      const p = (await mem.createPrincipal('user', 'u')).id;
      const longSource = `https://example.com/${'a'.repeat(1500)}`;
      const r = await mem.add('the page said the sky is green', {
        principal: p,
        source: longSource,
        verbatim: true,
      });
      expect(r.status).toBe('stored');
      let outcome: string;
      try {
        outcome = String(await mem.purge({ principal: p, source: longSource }));
      } catch (e) {
        outcome = isMemwardenError(e) ? e.code : 'RAW';
      }
      let cjk: string;
      try {
        cjk = String(await mem.purge({ principal: p, source: `https://example.com/${CJK}` }));
      } catch (e) {
        cjk = isMemwardenError(e) ? e.code : 'RAW';
      }
      recordHostile({
        suite: 'commit-isolation',
        family: 'purge with oversize sources',
        case: '1,520-char source (longer than a tombstone reason); 2,000 CJK characters (over the audit index)',
        channel: b.name,
        held: outcome === '1' && cjk === '0',
        outcome: `purged ${outcome}; CJK purge ${cjk}`,
      });
      expect(outcome).toBe('1');
      expect(cjk).toBe('0');
      expect(
        await mem.get(r.status === 'stored' ? r.memory.id : '', { principal: p }),
      ).toBeUndefined();
      await ledger.drain();
    },
  );
});
