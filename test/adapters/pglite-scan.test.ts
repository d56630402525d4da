/**
 * PGlite's `scanEntries` reads binary result rows through the raw protocol
 * (`src/adapters/pglite/binary-rows.ts`). Beyond the shared conformance cases: it equals the
 * shared SQL scan (`vector_send` as bytea through `PGlite.query`), a response arriving in many
 * chunks decodes whole, a server error inside it is a coded error that leaves the database
 * usable, and a malformed response is refused rather than half-read.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemwardenError } from '../../src/core/errors.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import {
  binaryQueryMessage,
  forEachDataRow,
  runBinaryQuery,
} from '../../src/adapters/pglite/binary-rows.js';
import { SCAN_SQL, decodeScanRows } from '../../src/adapters/pglite/scan.js';
import * as entries from '../../src/adapters/sql/entries.js';
import { normalised } from '../../src/adapters/sql/errors.js';
import { enterScope, principalScope } from '../../src/adapters/sql/queryable.js';
import type { StoredEntry } from '../../src/ports/storage.js';
import { meta, vec } from '../../src/testing/conformance/memory-api.js';
import { resetPglite } from './helpers-pglite.js';


describe('PGlite scanEntries (binary result rows)', () => {
  let db: PGlite;
  let b: PgliteBackend;
  beforeAll(async () => {
    db = await PGlite.create({ extensions: { vector } });
    b = await PgliteBackend.open({ instance: db, vectorIndex: { auto: false } });
    await resetPglite(db);
    const rows: StoredEntry[] = Array.from({ length: 900 }, (_, i) =>
      meta(`e${i}`, i, {
        owner: i % 5 === 4 ? 'user:b' : 'user:a',
        writer: i % 5 === 4 ? 'user:b' : 'user:a',
        content: `entry ${i} ${'ü'.repeat(i % 7)}`, // multi-byte text survives
        embedding: vec(i, 0.0001 * (i % 89)),
      }),
    );
    await b.putEntries(rows);
    await b.markDeleted('e3');
  }, 120_000);
  afterAll(async () => {
    await b.close();
    await db.close();
  });

  /** The shared SQL scan (`vector_send` bytea through PGlite's text protocol), as user:a. */
  const sharedScan = (after: number, limit: number): Promise<StoredEntry[]> =>
    normalised(
      db.transaction(async (tx) => {
        const q = {
          query: async (sql: string, params?: readonly unknown[]) => ({
            rows: (await tx.query(sql, params === undefined ? undefined : [...params]))
              .rows as Record<string, unknown>[],
          }),
          exec: async (sql: string) => {
            await tx.exec(sql);
          },
        };
        await enterScope(q, principalScope('user:a'));
        return entries.scanEntries(q, { vector: true }, { afterLeafIndex: after, limit });
      }),
    );

  it('equals the shared SQL scan, page by page', async () => {
    const view = b.asPrincipal('user:a');
    let after = -1;
    let n = 0;
    for (;;) {
      const got = await view.scanEntries!({ afterLeafIndex: after, limit: 250 });
      expect(got).toEqual(await sharedScan(after, 250));
      n += got.length;
      if (got.length < 250) break;
      after = got[got.length - 1]!.leafIndex;
    }
    expect(n).toBe(900 - 180 - 1); // user:b's rows and the deleted one left out
  });

  it('decodes a response that arrived in many chunks', async () => {
    let chunks = 0;
    const original = db.execProtocolRawStream.bind(db);
    db.execProtocolRawStream = (m, o) =>
      original(m, {
        ...o,
        onRawData: (c) => {
          chunks++;
          o.onRawData(c);
        },
      });
    try {
      const got = await b.asPrincipal('user:a').scanEntries!({ limit: 10_000 });
      expect(got.length).toBe(719);
    } finally {
      db.execProtocolRawStream = original;
    }
    expect(chunks).toBeGreaterThan(1);
  });

  it('a server error is a coded error, and the database stays usable', async () => {
    const bad = normalised(
      db.transaction(async (tx) => {
        await tx.query(`SELECT set_config('role', 'memwarden_app', true)`);
        const raw = await runBinaryQuery(db, 'SELECT id FROM no_such_table', []);
        return decodeScanRows(raw);
      }),
    );
    await expect(bad).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof MemwardenError &&
        e.code === 'STORAGE_FAILED' &&
        e.details?.sqlstate === '42P01',
    );
    // A refused role (RLS / grants) surfaces the same way: memwarden_app may not read `schema_migrations`.
    const denied = normalised(
      db.transaction(async (tx) => {
        await tx.query(`SELECT set_config('role', 'memwarden_app', true)`);
        const raw = await runBinaryQuery(db, 'SELECT version FROM schema_migrations', []);
        forEachDataRow(raw, 1, () => undefined);
      }),
    );
    await expect(denied).rejects.toSatisfy(
      (e: unknown) => e instanceof MemwardenError && e.details?.reason === 'denied',
    );
    // PGlite's own query path is intact afterwards (the raw stream callback does not linger).
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM entries');
    expect(rows[0]?.n).toBe(900);
    expect((await b.asPrincipal('user:b').scanEntries!({ limit: 10 })).length).toBe(10);
  });

  it('runs under the scope: the raw statement sees exactly what RLS lets the role see', async () => {
    const owners = await normalised(
      db.transaction(async (tx) => {
        await tx.query(
          `SELECT set_config('role', 'memwarden_app', true), set_config('app.principal', 'user:b', true)`,
        );
        return decodeScanRows(await runBinaryQuery(db, SCAN_SQL, ['-1', '10000']));
      }),
    );
    expect(new Set(owners.map((e) => e.owner))).toEqual(new Set(['user:b']));
    expect(owners.length).toBe(180);
  });

  it('refuses a malformed or truncated response', async () => {
    const raw = await normalised(
      db.transaction(async (tx) => {
        await tx.query(
          `SELECT set_config('role', 'memwarden_app', true), set_config('app.principal', 'user:a', true)`,
        );
        return runBinaryQuery(db, SCAN_SQL, ['-1', '3']);
      }),
    );
    expect(decodeScanRows(raw).map((e) => e.id)).toEqual(['e0', 'e1', 'e2']);
    const refused = (r: Uint8Array): void => {
      expect(() => decodeScanRows(r)).toThrow(MemwardenError);
    };
    refused(raw.subarray(0, raw.length - 1)); // truncated
    refused(raw.subarray(0, raw.length - 6)); // no ReadyForQuery
    const wrongCount = raw.slice();
    // The first DataRow follows ParseComplete (5 bytes) and BindComplete (5 bytes).
    expect(String.fromCharCode(wrongCount[10]!)).toBe('D');
    wrongCount[16] = 3; // field count 17 → 3
    refused(wrongCount);
    const badDim = raw.slice();
    // Find the first vector field (int32 length 1540, then int16 dim 384) and break its dim.
    const dv = new DataView(badDim.buffer);
    let at = -1;
    for (let i = 0; i + 6 < badDim.length; i++)
      if (dv.getInt32(i) === 1540 && dv.getInt16(i + 4) === 384) {
        at = i + 4;
        break;
      }
    expect(at).toBeGreaterThan(0);
    dv.setInt16(at, 383);
    refused(badDim);
  });

  it('builds one Parse/Bind/Execute/Sync with binary results', () => {
    const m = binaryQueryMessage('SELECT $1', ['x', null]);
    expect(String.fromCharCode(m[0]!)).toBe('P');
    expect(String.fromCharCode(m[m.length - 5]!)).toBe('S');
    expect(Array.from(m.subarray(m.length - 5))).toEqual([0x53, 0, 0, 0, 4]);
  });
});
