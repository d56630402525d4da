/**
 * The PostgreSQL group commit sent ahead of its answers (ADR 0038): once a transaction holds the
 * log head, its append and entry inserts go out without waiting and are checked with the
 * COMMIT. Whatever fails there fails the whole transaction — no leaf without its entry, no
 * leaves without their head move — and the error is the statement's own (coded as before).
 * Needs MEMWARDEN_TEST_DATABASE_URL (fails under CI without).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { MOVE_HEAD_OR_FAIL_SQL } from '../../src/adapters/sql/log.js';
import type { LeafRecord, StoredEntry } from '../../src/ports/storage.js';

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

describe('pg commit pipeline: test database configured', () => {
  it.runIf(url === undefined && ci)('MEMWARDEN_TEST_DATABASE_URL is set under CI', () => {
    throw new Error('CI must run the server backend: set MEMWARDEN_TEST_DATABASE_URL');
  });
});

const leaf = (i: number, id: string): LeafRecord => ({
  index: i,
  data: new Uint8Array([i & 0xff, 1]),
  hash: new Uint8Array(32).fill(i & 0xff),
  entryId: id,
  kind: 'entry',
});
const entry = (id: string, leafIndex: number, content = `entry ${id}`): StoredEntry => ({
  id,
  owner: 'user:a',
  tier: 'USER_OBSERVED',
  bytes: new Uint8Array([leafIndex & 0xff]),
  leafIndex,
  macKid: 'm',
  mac: new Uint8Array(32),
  writer: 'user:a',
  content,
});

describe.skipIf(url === undefined)('PostgreSQL group commit sent ahead of its answers', () => {
  const schema = `mwcp_${process.pid}_${Date.now().toString(36)}`;
  let b: PgBackend;
  let admin: pg.Client;
  beforeAll(async () => {
    b = await PgBackend.open({ connectionString: url!, schema, feed: false });
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => {
    await b?.close();
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.end();
  });

  it('a commit holding the head writes leaves, head and entries together', async () => {
    const n = await b.transaction(async (tx) => {
      const size = await tx.lockLogHead!();
      await tx.appendLeaves(size, [leaf(size, 'p0'), leaf(size + 1, 'p1')], []);
      await tx.putEntries!([entry('p0', size), entry('p1', size + 1)]);
      return size;
    });
    expect(n).toBe(0);
    expect(await b.logSize()).toBe(2);
    expect((await b.getLeaves(0, 2)).map((l) => l.entryId)).toEqual(['p0', 'p1']);
    expect((await b.getEntry('p1'))?.leafIndex).toBe(1);
  });

  it('an insert failing behind the append fails the commit: no leaf, no head move, its code', async () => {
    const before = await b.logSize();
    const err = await b
      .transaction(async (tx) => {
        const size = await tx.lockLogHead!();
        await tx.appendLeaves(size, [leaf(size, 'dup')], []);
        // 'p0' exists: a unique violation, seen only at the COMMIT.
        await tx.putEntries!([entry('p0', size)]);
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORAGE_CONFLICT' });
    expect(await b.logSize()).toBe(before);
    expect(await b.getLeaf(before)).toBeUndefined();
  });

  it('bad text behind the append (a NUL) fails the commit as INPUT_INVALID and changes nothing', async () => {
    const before = await b.logSize();
    const err = await b
      .transaction(async (tx) => {
        const size = await tx.lockLogHead!();
        await tx.appendLeaves(size, [leaf(size, 'nul')], []);
        await tx.putEntries!([entry('nul', size, 'a\u0000b')]);
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INPUT_INVALID' });
    expect(await b.logSize()).toBe(before);
    expect(await b.getEntry('nul')).toBeUndefined();
  });

  it('the pipelined head move fails (never commits) when the head is elsewhere', async () => {
    await admin.query(`SET search_path = ${schema}, public`);
    await admin.query('BEGIN');
    try {
      const size = Number((await admin.query('SELECT size FROM log_head')).rows[0].size);
      const e = await admin.query(MOVE_HEAD_OR_FAIL_SQL, [1, size + 5]).catch((x: unknown) => x);
      expect((e as { code?: string }).code).toBe('23514');
    } finally {
      await admin.query('ROLLBACK');
    }
    const ok = await admin.query(MOVE_HEAD_OR_FAIL_SQL, [0, await b.logSize()]);
    expect(ok.rowCount).toBe(1);
  });

  it('a stale append without the head lock is still the step-by-step conflict', async () => {
    const err = await b
      .transaction(async (tx) => {
        await tx.appendLeaves(0, [leaf(0, 'stale')], []);
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORAGE_CONFLICT' });
  });
});
