/**
 * The read model on a PostgreSQL server several processes share (issue 21, ADR 0037): each
 * process keeps its in-process read model and follows the log — the server's change feed
 * (LISTEN/NOTIFY) wakes it, the entries of the leaf indices other processes committed are read
 * from the store. Two `Memory.open` instances on one schema stand for two processes (separate
 * pools, separate feed connections); test/faults/pg-follow-kill.test.ts runs real ones.
 *
 * Needs MEMWARDEN_TEST_DATABASE_URL; skipped locally without it, FAILS under CI without it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Memory } from '../../src/open.js';
import { followerOf, readModelOf } from '../../src/memory/read/read-model.js';
import { ManualClock } from '../../src/testing/index.js';

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

describe('pg follow: test database configured', () => {
  it.runIf(url === undefined && ci)('MEMWARDEN_TEST_DATABASE_URL is set under CI', () => {
    throw new Error('CI must run the PostgreSQL follow test: set MEMWARDEN_TEST_DATABASE_URL');
  });
});

const DAY_MS = 86_400_000;

/** Poll `fn` until it returns true (or `ms` pass); how long it took, or -1. */
async function within(ms: number, fn: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await fn()) return Date.now() - t0;
    if (Date.now() - t0 > ms) return -1;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(url === undefined)(
  'two processes on one PostgreSQL: the read model follows the log',
  () => {
    const schema = `mwfo_${process.pid}_${Date.now().toString(36)}`;
    const dbUrl = `${url}${url?.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
    const data = mkdtempSync(join(tmpdir(), 'mw-follow-'));
    const clock = new ManualClock(1_700_000_000_000_000_000n);
    let admin: pg.Client;
    let a: Memory;
    let b: Memory;
    let alice = '';
    let ops = '';
    let cat = '';
    const open = (): Promise<Memory> =>
      Memory.open({
        dataDir: data,
        postgres: dbUrl,
        embedder: 'deterministic',
        clock,
        // Searches renew nothing here: an expiry moves only when a test says so.
        retention: { renewOnUse: false },
      });
    const ids = async (m: Memory, q: string, principal = alice): Promise<string[]> =>
      (await m.search(q, { principal, limit: 5 })).results.map((r) => r.memory.id);

    beforeAll(async () => {
      admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      a = await open();
      b = await open();
      alice = (await a.createPrincipal('user', 'alice')).id;
      ops = (await a.createPrincipal('operator', 'ops')).id;
    }, 120_000);
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin?.end();
      rmSync(data, { recursive: true, force: true });
    });

    it('is on for the server, follows the log and serves from the model', async () => {
      for (const m of [a, b]) {
        expect(readModelOf(m.storageBackend)).toBeDefined();
        expect(m.describeStorage().readModel).toMatchObject({
          on: true,
          follower: { synced: true },
        });
      }
      // B loads alice's partition (an empty one) before A writes.
      expect(await ids(b, 'the orange cat sleeps on the piano')).toEqual([]);
      expect(readModelOf(b.storageBackend)!.isLoaded(alice)).toBe(true);
      const applied0 = followerOf(b.storageBackend)!.status.applied;
      const r = await a.add('the orange cat sleeps on the piano', { principal: alice });
      expect(r.status).toBe('stored');
      const id = r.status === 'stored' ? r.memory.id : '';
      cat = id;
      const ms = await within(2_000, async () =>
        (await ids(b, 'the orange cat sleeps on the piano')).includes(id),
      );
      expect(ms).toBeGreaterThanOrEqual(0);
      // Read from the other process's commit by the follower, not by a fallback to the database.
      expect(followerOf(b.storageBackend)!.status.applied).toBeGreaterThan(applied0);
      expect(readModelOf(b.storageBackend)!.isLoaded(alice)).toBe(true);
      // An OPERATOR entry reaches the shared partition, seen by every principal.
      const o = await a.add('the office closes at six on fridays', {
        principal: ops,
        tier: 'OPERATOR',
      });
      const oid = o.status === 'stored' ? o.memory.id : '';
      expect(
        await within(2_000, async () =>
          (await ids(b, 'the office closes at six on fridays')).includes(oid),
        ),
      ).toBeGreaterThanOrEqual(0);
    });

    it('deletes and new versions made by the other process reach the model', async () => {
      const r = await a.add('the train to Porto leaves at nine', { principal: alice });
      const id = r.status === 'stored' ? r.memory.id : '';
      expect(
        await within(2_000, async () =>
          (await ids(b, 'the train to Porto leaves at nine')).includes(id),
        ),
      ).toBeGreaterThanOrEqual(0);
      await a.delete(id, { principal: alice, reason: 'test' });
      expect(
        await within(
          2_000,
          async () => !(await ids(b, 'the train to Porto leaves at nine')).includes(id),
        ),
      ).toBeGreaterThanOrEqual(0);

      const v1 = await a.add('my dentist is doctor Silva', { principal: alice });
      const id1 = v1.status === 'stored' ? v1.memory.id : '';
      expect(
        await within(2_000, async () => (await ids(b, 'my dentist is doctor Silva')).includes(id1)),
      ).toBeGreaterThanOrEqual(0);
      const version1 = v1.status === 'stored' ? v1.memory.versionId : '';
      const v2 = await a.update(id1, 'my dentist is doctor Costa', { principal: alice });
      // The memory id is stable across versions (ADR 0049): the versions tell them apart.
      expect(
        await within(2_000, async () => {
          const got = (
            await b.search('my dentist is doctor Costa', { principal: alice, limit: 5 })
          ).results.map((x) => x.memory.versionId);
          return got.includes(v2.versionId) && !got.includes(version1);
        }),
      ).toBeGreaterThanOrEqual(0);
      // B's writes reach A the same way.
      const w = await b.add('the plants need water on sundays', { principal: alice });
      const wid = w.status === 'stored' ? w.memory.id : '';
      expect(
        await within(2_000, async () =>
          (await ids(a, 'the plants need water on sundays')).includes(wid),
        ),
      ).toBeGreaterThanOrEqual(0);
    });

    it('an expiry renewed by the other process is the one the model filters on', async () => {
      const r = await a.add('the parking permit is in the glovebox', {
        principal: alice,
        ttlMs: 60_000,
      });
      const id = r.status === 'stored' ? r.memory.id : '';
      expect(
        await within(2_000, async () =>
          (await ids(b, 'the parking permit is in the glovebox')).includes(id),
        ),
      ).toBeGreaterThanOrEqual(0);
      clock.advance(50_000_000_000n);
      await a.renew(id, { principal: alice, ttlMs: DAY_MS });
      const applied0 = followerOf(b.storageBackend)!.status;
      await new Promise((r) => setTimeout(r, 300)); // the note of the renewal reaches B
      clock.advance(20_000_000_000n); // past the first expiry, well before the renewed one
      expect(await ids(b, 'the parking permit is in the glovebox')).toContain(id);
      expect(followerOf(b.storageBackend)!.status.synced).toBe(applied0.synced);
    });

    it('a lost feed connection: the database answers meanwhile, the model resyncs and misses nothing', async () => {
      const f = followerOf(b.storageBackend)!;
      const resets0 = f.status.resets;
      // The feed's LISTEN connection of B (and A): terminated as a network cut or failover would.
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'memwarden-feed'`,
      );
      expect(killed.rowCount).toBeGreaterThan(0);
      const r = await a.add('the spare key is under the blue pot', { principal: alice });
      const id = r.status === 'stored' ? r.memory.id : '';
      // Visible on B whether the model or the database answers.
      expect(
        await within(5_000, async () =>
          (await ids(b, 'the spare key is under the blue pot')).includes(id),
        ),
      ).toBeGreaterThanOrEqual(0);
      expect(
        await within(10_000, async () => f.status.synced && f.status.resets > resets0),
      ).toBeGreaterThanOrEqual(0);
      expect(await ids(b, 'the spare key is under the blue pot')).toContain(id);
      expect(readModelOf(b.storageBackend)!.isLoaded(alice)).toBe(true); // reloaded after the reset
    }, 30_000);

    it('a restarted process rebuilds from the store', async () => {
      await b.close();
      const r = await a.add('the boiler was serviced in May', { principal: alice });
      const id = r.status === 'stored' ? r.memory.id : '';
      b = await open();
      expect(await ids(b, 'the boiler was serviced in May')).toContain(id);
      expect((await ids(b, 'the orange cat sleeps on the piano'))[0]).toBe(cat);
      expect(readModelOf(b.storageBackend)!.isLoaded(alice)).toBe(true);
    });
  },
);
