/**
 * A store for tampering tests: the real backend (PGlite, or a fresh schema on the PostgreSQL
 * server) plus raw SQL access that bypasses memwarden — PGlite's superuser, or the server's
 * table owner with row-level security lifted for the one statement — as someone with access
 * to the database at rest would have.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import type { RootStorage } from '../../src/ports/storage.js';

export interface RawStore {
  readonly name: 'pglite' | 'postgres';
  /** A root storage on the store (call again for a second pool: another process). */
  open(): Promise<RootStorage>;
  /** One data-changing or reading statement, bypassing memwarden and row-level security. */
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export async function pgliteRaw(): Promise<RawStore> {
  const db = await PGlite.create({ extensions: { vector } });
  const opened: RootStorage[] = [];
  return {
    name: 'pglite',
    open: async () => {
      // One embedded store: every "process" shares the one instance.
      const s = await PgliteBackend.open({ instance: db });
      opened.push(s);
      return s;
    },
    sql: async (text, params) => (await db.query<Record<string, unknown>>(text, params)).rows,
    close: async () => {
      for (const s of opened) await s.close().catch(() => undefined);
      await db.close();
    },
  };
}

export async function postgresRaw(url: string, tag: string): Promise<RawStore> {
  const schema = `mw_${tag}_${process.pid}_${Date.now().toString(36)}`;
  const opened: RootStorage[] = [];
  const client = new pg.Client({
    connectionString: url,
    options: `-c search_path=${schema},public`,
  });
  await client.connect();
  return {
    name: 'postgres',
    open: async () => {
      const s = await PgBackend.open({ connectionString: url, schema });
      opened.push(s);
      return s;
    },
    sql: async (text, params) => {
      await client.query('BEGIN');
      try {
        const forced = (
          await client.query(
            `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND c.relforcerowsecurity`,
            [schema],
          )
        ).rows.map((r) => r.relname as string);
        for (const t of forced) await client.query(`ALTER TABLE ${t} NO FORCE ROW LEVEL SECURITY`);
        const rows = (await client.query(text, params)).rows as Record<string, unknown>[];
        for (const t of forced) await client.query(`ALTER TABLE ${t} FORCE ROW LEVEL SECURITY`);
        await client.query('COMMIT');
        return rows;
      } catch (e) {
        await client.query('ROLLBACK');
        throw e;
      }
    },
    close: async () => {
      for (const s of opened) await s.close().catch(() => undefined);
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await client.end();
    },
  };
}

/** The backends a tampering test runs on: PGlite always, the server when configured. */
export function rawStores(tag: string): { name: string; make: () => Promise<RawStore> }[] {
  const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
  return [
    { name: 'pglite', make: pgliteRaw },
    ...(url === undefined ? [] : [{ name: 'postgres', make: () => postgresRaw(url, tag) }]),
  ];
}
