/**
 * The storage backends a finding's test runs on: PGlite (always) and the PostgreSQL server when
 * MEMWARDEN_TEST_DATABASE_URL is set (each `open()` gets a schema of its own, dropped by
 * `cleanup()`). Under CI the server is required.
 */
import pg from 'pg';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import type { RootStorage } from '../../src/ports/storage.js';

export const pgUrl = process.env.MEMWARDEN_TEST_DATABASE_URL;
export const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

export interface TestBackend {
  readonly name: 'pglite' | 'postgres';
  open(): Promise<RootStorage>;
  /** Drop what `open` created (schemas). */
  cleanup(): Promise<void>;
}

let seq = 0;

/** PGlite (with the read model, as `Memory.open` wires it), and PostgreSQL when configured. */
export function testBackends(): TestBackend[] {
  const out: TestBackend[] = [
    {
      name: 'pglite',
      open: async () => withReadModel(await PgliteBackend.open({})),
      cleanup: async () => undefined,
    },
  ];
  if (pgUrl !== undefined) {
    const schemas: string[] = [];
    out.push({
      name: 'postgres',
      open: async () => {
        const schema = `mww_${process.pid}_${Date.now().toString(36)}_${seq++}`;
        schemas.push(schema);
        return PgBackend.open({ connectionString: pgUrl, schema });
      },
      cleanup: async () => {
        const c = new pg.Client({ connectionString: pgUrl });
        await c.connect();
        try {
          for (const s of schemas.splice(0)) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
        } finally {
          await c.end();
        }
      },
    });
  }
  return out;
}
