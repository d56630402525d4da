/**
 * Conformance of the PGlite backend: the whole shared suite in memory (one PGlite instance for
 * the file, tables reset between cases, because booting PGlite costs ~1 s), on a durable
 * data folder with close and reopen, and with PGlite in a worker thread (ADR 0025) on a
 * durable data folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import type { PgliteDb } from '../../src/adapters/pglite/db.js';
import { PgliteWorker } from '../../src/adapters/pglite/worker.js';
import { storageConformanceCases } from '../../src/testing/storage-conformance.js';
import { resetPglite } from './helpers-pglite.js';

describe('PGlite backend conformance (in memory, shared instance)', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create({ extensions: { vector } });
  });
  afterAll(async () => {
    await db.close();
  });
  const open = async (): Promise<PgliteBackend> => {
    const b = await PgliteBackend.open({ instance: db });
    await resetPglite(db);
    return b;
  };
  for (const c of storageConformanceCases) {
    it(c.name, () => c.run({ open }));
  }
  it('loads pgvector and adds the vector(384) column', async () => {
    const b = await open();
    expect(b.hasVector).toBe(true);
    const { rows } = await db.query<{ t: string }>(
      "SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = 'entries'::regclass AND attname = 'embedding_vec'",
    );
    expect(rows[0]?.t).toBe('vector(384)');
  });
  it('migrations are recorded once and re-opening is a no-op', async () => {
    await open();
    const { rows } = await db.query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    expect(rows.map((r) => r.version)).toEqual([1, 2, 3, 10, 20, 50, 60, 61]);
  });
});

// The durable suite twice: PGlite in process, and every statement executed by a PGlite in a
// worker thread — the proxy must be indistinguishable (errors, transactions, COPY from a blob,
// binary scans). One durable instance per run; `reopen` really closes it (flushing to the
// folder) and boots a new PGlite from the folder, so the reopen case reads what was on disk.
for (const worker of [false, true]) {
  const where = worker ? 'worker thread, ' : '';
  describe(`PGlite backend conformance (${where}durable data folder, reopen)`, () => {
    const create = (dir: string): Promise<PgliteDb> =>
      worker
        ? PgliteWorker.create({ dataDir: dir })
        : PGlite.create({ dataDir: dir, extensions: { vector } });
    const dataDir = mkdtempSync(join(tmpdir(), worker ? 'mw-pglite-worker-' : 'mw-pglite-'));
    let db: PgliteDb;
    beforeAll(async () => {
      db = await create(dataDir);
    });
    afterAll(async () => {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const open = async (): Promise<PgliteBackend> => {
      const b = await PgliteBackend.open({ instance: db });
      await resetPglite(db);
      return b;
    };
    const reopen = async (): Promise<PgliteBackend> => {
      await db.close();
      db = await create(dataDir);
      return PgliteBackend.open({ instance: db });
    };
    for (const c of storageConformanceCases) {
      it(c.name, () => c.run({ open, reopen }));
    }
    it(`an owned ${worker ? 'worker-hosted ' : ''}data folder is closed by close() and reopened by open()`, async () => {
      const own = mkdtempSync(join(tmpdir(), worker ? 'mw-pglite-own-worker-' : 'mw-pglite-own-'));
      const at = 2n ** 62n + (worker ? 3n : 1n);
      try {
        const b = await PgliteBackend.open({ dataDir: own, worker });
        expect(b.hasVector).toBe(true);
        await b.putCheckpoint({
          size: 0,
          root: new Uint8Array(32),
          note: 'empty',
          createdAtNs: at,
        });
        await b.close();
        // Reopened in process: with the worker, the same folder written by the worker's PGlite.
        const r = await PgliteBackend.open({ dataDir: own });
        expect((await r.latestCheckpoint())?.createdAtNs).toBe(at);
        await r.close();
      } finally {
        rmSync(own, { recursive: true, force: true });
      }
    });
  });
}
