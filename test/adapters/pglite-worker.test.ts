/**
 * The worker-thread PGlite proxy (ADR 0025) against an in-process PGlite: the same statements
 * give the same results and the same errors (every field the SQL error mapping reads), PGlite's
 * transaction semantics hold across the thread boundary, raw protocol calls run under the
 * worker's query lock, and a worker that dies or a folder that cannot boot never leaves a call
 * hanging. (The whole storage conformance suite also runs on the worker:
 * pglite-backend.test.ts.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemwardenError } from '../../src/core/errors.js';
import type { PgliteDb } from '../../src/adapters/pglite/db.js';
import { runBinaryQuery } from '../../src/adapters/pglite/binary-rows.js';
import { PgliteWorker } from '../../src/adapters/pglite/worker.js';
import { normaliseDbError } from '../../src/adapters/sql/errors.js';

const SETUP = `
  CREATE EXTENSION IF NOT EXISTS vector;
  CREATE TABLE t (id int PRIMARY KEY, b bytea, n int8 NOT NULL DEFAULT 0, v vector(3),
                  CONSTRAINT n_positive CHECK (n >= 0));
  CREATE TABLE child (id int REFERENCES t(id));
`;

/** Every field of a PGlite error the error mapping or a caller reads. */
const FIELDS = [
  'message',
  'code',
  'severity',
  'detail',
  'hint',
  'constraint',
  'table',
  'schema',
  'column',
  'routine',
  'position',
  'query',
] as const;

/** A simple-protocol Query message ('Q', length, the SQL text, NUL). */
function simpleQuery(sql: string): Uint8Array {
  const text = new TextEncoder().encode(sql);
  const out = new Uint8Array(1 + 4 + text.length + 1);
  out[0] = 0x51;
  new DataView(out.buffer).setInt32(1, 4 + text.length + 1);
  out.set(text, 5);
  return out;
}

async function caught(p: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (e) {
    return e as Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}

describe('PgliteWorker against an in-process PGlite', () => {
  let local: PGlite;
  let remote: PgliteWorker;
  beforeAll(async () => {
    [local, remote] = await Promise.all([
      PGlite.create({ extensions: { vector } }),
      PgliteWorker.create(),
    ]);
    await local.exec(SETUP);
    await remote.exec(SETUP);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([local.close(), remote.close()]);
  });
  const both = async <T>(fn: (db: PgliteDb) => Promise<T>): Promise<[T, T]> => [
    await fn(local),
    await fn(remote),
  ];

  it('returns the same rows: bigints, byte arrays, NULLs, vectors', async () => {
    const [a, b] = await both(async (db) => {
      await db.query('DELETE FROM t');
      await db.query(
        'INSERT INTO t (id, b, n, v) VALUES ($1, $2, $3, $4), (2, NULL, 9007199254740993, NULL)',
        [1, new Uint8Array([0, 255, 7]), 2n ** 40n, '[1,2,3]'],
      );
      return db.query('SELECT id, b, n, n::text AS nt, v FROM t ORDER BY id');
    });
    expect(b.rows).toEqual(a.rows);
    expect(b.fields).toEqual(a.fields);
    expect(b.rows[1]).toMatchObject({ nt: '9007199254740993', b: null });
    expect((b.rows[0] as { b: Uint8Array }).b).toEqual(new Uint8Array([0, 255, 7]));
  });

  it('exec returns every statement result', async () => {
    const [a, b] = await both((db) => db.exec('SELECT 1 AS one; SELECT 2 AS two'));
    expect(b).toEqual(a);
    expect(b).toHaveLength(2);
  });

  it('rethrows errors with every field, mapped to the same coded errors', async () => {
    const statements: [string, unknown[]][] = [
      ['INSERT INTO t (id) VALUES (1)', []], // 23505 unique_violation
      ['INSERT INTO t (id, n) VALUES (50, -1)', []], // 23514 check_violation
      ['INSERT INTO child VALUES (404)', []], // 23503 foreign_key_violation
      ['SELECT nope FROM t', []], // 42703 syntax/undefined column, with a position
      ['SELECT $1::int', ['not a number']], // 22P02
    ];
    await both((db) => db.query('INSERT INTO t (id) VALUES (1) ON CONFLICT DO NOTHING'));
    for (const [sql, params] of statements) {
      const [a, b] = await both((db) => caught(db.query(sql, params)));
      expect(b.constructor.name).toBe(a.constructor.name); // PGlite's DatabaseError
      for (const f of FIELDS) expect([sql, f, b[f]]).toEqual([sql, f, a[f]]);
      expect(b.code).toMatch(/^[0-9A-Z]{5}$/);
      const [na, nb] = [normaliseDbError(a), normaliseDbError(b)] as MemwardenError[];
      expect(nb).toBeInstanceOf(MemwardenError);
      expect([nb!.code, nb!.message, nb!.details]).toEqual([na!.code, na!.message, na!.details]);
    }
    const dup = normaliseDbError(await caught(remote.query('INSERT INTO t (id) VALUES (1)')));
    expect((dup as MemwardenError).code).toBe('STORAGE_CONFLICT');
  });

  it('commits a transaction, rolls it back when the callback throws (its error wins)', async () => {
    for (const db of [local, remote] as PgliteDb[]) {
      await db.query('DELETE FROM t');
      const r = await db.transaction(async (tx) => {
        await tx.query('INSERT INTO t (id) VALUES (10)');
        return (await tx.query<{ c: number }>('SELECT count(*)::int AS c FROM t')).rows[0]!.c;
      });
      expect(r).toBe(1);
      const boom = new Error('boom');
      await expect(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO t (id) VALUES (11)');
          throw boom;
        }),
      ).rejects.toBe(boom);
      // A failed statement inside: the caller's catch decides; here it rethrows → rollback.
      const e = await caught(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO t (id) VALUES (12)');
          await tx.query('INSERT INTO t (id) VALUES (10)');
        }),
      );
      expect(e.code).toBe('23505');
      expect((await db.query<{ id: number }>('SELECT id FROM t ORDER BY id')).rows).toEqual([
        { id: 10 },
      ]);
    }
  });

  it('tx.rollback() ends the transaction: later statements fail as in PGlite, nothing commits', async () => {
    const [a, b] = await both(async (db) => {
      await db.query('DELETE FROM t');
      let after: unknown;
      await db.transaction(async (tx) => {
        await tx.query('INSERT INTO t (id) VALUES (20)');
        await tx.rollback();
        after = await caught(tx.query('SELECT 1'));
        expect(tx.closed).toBe(true);
      });
      return [(after as Error).message, (await db.query('SELECT count(*)::int AS c FROM t')).rows];
    });
    expect(b).toEqual(a);
    expect(b).toEqual(['Transaction is closed', [{ c: 0 }]]);
  });

  it('serialises transactions as PGlite does: a concurrent one never sees half of another', async () => {
    await remote.query('DELETE FROM t');
    const seen: number[] = [];
    const slow = remote.transaction(async (tx) => {
      await tx.query('INSERT INTO t (id) VALUES (30)');
      await new Promise((r) => setTimeout(r, 100)); // this thread busy elsewhere, tx held open
      await tx.query('INSERT INTO t (id) VALUES (31)');
    });
    const reader = remote.transaction(async (tx) => {
      seen.push((await tx.query<{ c: number }>('SELECT count(*)::int AS c FROM t')).rows[0]!.c);
    });
    const plain = remote.query<{ c: number }>('SELECT count(*)::int AS c FROM t');
    await Promise.all([slow, reader]);
    seen.push((await plain).rows[0]!.c);
    expect(seen).toEqual([2, 2]);
  });

  it('runs a transaction callback only once its transaction has begun: its raw protocol calls never land in another', async () => {
    for (const db of [local, remote] as PgliteDb[]) {
      const seen: string[] = [];
      const first = db.transaction(async (tx) => {
        await tx.query("SELECT set_config('app.who', 'first', true)");
        await new Promise((r) => setTimeout(r, 150)); // held open while the second is asked for
        seen.push(
          (await tx.query<{ w: string }>("SELECT current_setting('app.who') AS w")).rows[0]!.w,
        );
      });
      await new Promise((r) => setTimeout(r, 30));
      const second = db.transaction(async () => {
        // The way the backend enters a scope: a raw protocol message under runExclusive.
        await db.runExclusive(() =>
          db.execProtocolRaw(simpleQuery("SELECT set_config('app.who', 'second', true)")),
        );
      });
      await Promise.all([first, second]);
      expect(seen).toEqual(['first']);
    }
  });

  it('feeds COPY … FROM /dev/blob from a Blob', async () => {
    const [a, b] = await both(async (db) => {
      await db.query('DELETE FROM t');
      await db.transaction(async (tx) => {
        await tx.query(`COPY t (id, n) FROM '/dev/blob' WITH (FORMAT csv)`, [], {
          blob: new Blob(['40,1\n41,2\n']),
        });
      });
      return (await db.query('SELECT id, n FROM t ORDER BY id')).rows;
    });
    expect(b).toEqual(a);
    expect(b).toEqual([
      { id: 40, n: 1 },
      { id: 41, n: 2 },
    ]);
  });

  it('runs raw binary-protocol queries under the query lock, inside a transaction', async () => {
    const [a, b] = await both(async (db) => {
      await db.query('DELETE FROM t');
      await db.query("INSERT INTO t (id, b, n, v) VALUES (1, '\\x0102', 5, '[1,2,3]')");
      return db.transaction(async () =>
        runBinaryQuery(db, 'SELECT id, b, n, v FROM t WHERE id >= $1', ['1']),
      );
    });
    expect(b).toEqual(a);
    expect(b.length).toBeGreaterThan(20);
    // execProtocolRaw (not streamed) too, and an error inside the raw response stays in it.
    const bad = new Uint8Array([0x51, 0, 0, 0, 8, 0x78, 0x78, 0x78, 0]); // Query 'xxx'
    const [ra, rb] = await both((db) => db.runExclusive(() => db.execProtocolRaw(bad)));
    expect(rb).toEqual(ra);
    expect(String.fromCharCode(rb[0]!)).toBe('E'); // ErrorResponse
  });

  it('rejects values that cannot cross the thread boundary instead of hanging', async () => {
    const e = await caught(remote.query('SELECT $1::text', [() => 1]));
    expect(String(e.name)).toBe('DataCloneError');
    expect((await remote.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });
});

describe('PgliteWorker failure and close', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('a worker that dies fails every pending and later call with a coded error', async () => {
    const db = await PgliteWorker.create();
    const pending = db.query('SELECT pg_sleep(3)');
    const inTx = db.transaction((tx) => tx.query('SELECT 1'));
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    // What a crash of the thread looks like from here (an abort in WebAssembly, an OOM kill).
    await (db as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    for (const p of [pending, inTx, db.query('SELECT 1'), db.transaction(async () => 1)]) {
      const e = await caught(p);
      expect(e).toBeInstanceOf(MemwardenError);
      expect(e.code).toBe('STORAGE_FAILED');
      expect((e.details as { reason: string }).reason).toBe('worker_exited');
    }
    expect(Date.now() - started).toBeLessThan(2_500); // did not wait for pg_sleep
    expect(db.closed).toBe(true);
    await db.close(); // nothing left to close: resolves
  });

  it('onExit is told once when the worker dies, never on close()', async () => {
    const lost: MemwardenError[] = [];
    const db = await PgliteWorker.create({ onExit: (e) => lost.push(e) });
    await db.query('SELECT 1');
    await (db as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await new Promise((r) => setTimeout(r, 20));
    expect(lost).toHaveLength(1);
    expect(lost[0]!.code).toBe('STORAGE_FAILED');
    expect((lost[0]!.details as { reason: string }).reason).toBe('worker_exited');
    await db.close();
    expect(lost).toHaveLength(1);

    const closed: MemwardenError[] = [];
    const other = await PgliteWorker.create({ onExit: (e) => closed.push(e) });
    await other.query('SELECT 1');
    await other.close();
    await new Promise((r) => setTimeout(r, 20));
    expect(closed).toEqual([]);
  });

  it('close() flushes the data folder before the thread ends; the folder reopens in process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-pglite-worker-close-'));
    dirs.push(dir);
    const db = await PgliteWorker.create({ dataDir: dir });
    await db.exec('CREATE TABLE kept (x int8)');
    const write = db.query('INSERT INTO kept VALUES ($1)', [2n ** 60n]); // queued before close
    await db.close();
    await write;
    expect(db.closed).toBe(true);
    const threadId = (db as unknown as { worker: { threadId: number } }).worker.threadId;
    expect(threadId).toBe(-1); // the thread has ended
    expect(((await caught(db.query('SELECT 1'))) as unknown as MemwardenError).code).toBe(
      'STORAGE_FAILED',
    );
    const again = await PGlite.create({ dataDir: dir });
    expect((await again.query('SELECT x::text AS x FROM kept')).rows).toEqual([
      { x: String(2n ** 60n) },
    ]);
    await again.close();
  });

  it('a data folder that cannot boot rejects create() (no hang, no thread left)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-pglite-worker-bad-'));
    dirs.push(dir);
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    await expect(PgliteWorker.create({ dataDir: file })).rejects.toThrow();
  });

  it.runIf(existsSync(resolve('dist/adapters/pglite/worker-host.mjs')))(
    'from the build: an idle worker does not keep the process alive',
    () => {
      const mod = resolve('dist/adapters/pglite/worker.js');
      const r = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { PgliteWorker } = await import(${JSON.stringify(mod)});
           const db = await PgliteWorker.create();
           const { rows } = await db.query('SELECT 41 + 1 AS x');
           console.log(rows[0].x);`, // no close(): the process must still end
        ],
        { encoding: 'utf8', timeout: 60_000 },
      );
      expect(r.signal).toBeNull();
      expect(r.stdout.trim()).toBe('42');
      expect(r.status).toBe(0);
    },
  );
});
