/**
 * @module adapters/sql/migrations
 * Versioned, idempotent migrations. Each pending migration runs once in its own transaction
 * under a transaction-scoped advisory lock, so several processes opening the same database at
 * once apply it exactly once; re-opening an up-to-date database is a no-op. Migrations run as
 * the connecting (owner) role, never under an agent scope.
 */
import { MemwardenError } from '../../core/errors.js';
import type { Queryable } from './queryable.js';
import { APP_ROLE, SYSTEM_ROLE } from './queryable.js';
import { MIGRATIONS, type Migration } from './schema.js';

/** Runs `fn` in one transaction as the connecting role (no scope). Provided by each driver. */
export type OwnerTx = <T>(fn: (q: Queryable) => Promise<T>) => Promise<T>;

/** Arbitrary but fixed advisory-lock key ("memw"), shared by every memwarden process. */
const MIGRATION_LOCK = 0x6d656d77;

/** What `migrate` did. */
export interface MigrationReport {
  readonly applied: readonly number[];
  /** True when the `vector` extension is installed and `entries.embedding_vec` exists. */
  readonly vector: boolean;
}

/**
 * Create `schema` if absent, under the migration lock: `CREATE SCHEMA IF NOT EXISTS` is not
 * safe against a concurrent creator (it can fail with a unique violation on the catalog).
 * `schema` must already be validated as a plain identifier.
 */
export async function ensureSchema(ownerTx: OwnerTx, schema: string): Promise<void> {
  await ownerTx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await q.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  });
}

/** Apply every pending migration in order; then make sure of the optional vector column. */
export async function migrate(
  ownerTx: OwnerTx,
  opts: { migrations?: readonly Migration[]; wantVector?: boolean } = {},
): Promise<MigrationReport> {
  const migrations = opts.migrations ?? MIGRATIONS;
  await ownerTx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await q.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    int PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
  });
  const applied: number[] = [];
  for (const m of migrations) {
    const ran = await ownerTx(async (q) => {
      await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const { rows } = await q.query('SELECT 1 FROM schema_migrations WHERE version = $1', [
        m.version,
      ]);
      if (rows.length > 0) return false;
      await q.exec(m.sql);
      await q.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
      return true;
    });
    if (ran) applied.push(m.version);
  }
  await verifyRoles(ownerTx);
  const vector = opts.wantVector === false ? false : await ensureVector(ownerTx);
  return { applied, vector };
}

/**
 * Refuse to run if a role we switch into could bypass row-level security (a pre-existing,
 * misconfigured role of the same name would otherwise silently void isolation).
 */
async function verifyRoles(ownerTx: OwnerTx): Promise<void> {
  const bad = await ownerTx(async (q) => {
    const { rows } = await q.query(
      'SELECT rolname FROM pg_roles WHERE rolname = ANY($1) AND (rolsuper OR rolbypassrls)',
      [[APP_ROLE, SYSTEM_ROLE]],
    );
    return rows.map((r) => String(r.rolname));
  });
  if (bad.length > 0) {
    throw new MemwardenError(
      'STORAGE_FAILED',
      `roles ${bad.join(', ')} can bypass row-level security`,
    );
  }
}

/**
 * Create the `vector` extension when the server offers it, and the `vector(384)` twin of
 * `entries.embedding`. Idempotent and deliberately unversioned: a server that gains pgvector
 * later gets the column on its next open. Without the extension (Debian's PostgreSQL 15) this
 * returns false and vectors stay in the `real[]` column, ranked in-process.
 */
export async function ensureVector(ownerTx: OwnerTx): Promise<boolean> {
  const state = await ownerTx(async (q) => {
    const { rows } = await q.query(
      `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AS installed,
              EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available`,
    );
    return rows[0] as { installed: boolean; available: boolean };
  });
  if (!state.available) return false;
  try {
    await ownerTx(async (q) => {
      await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      if (!state.installed) await q.exec('CREATE EXTENSION IF NOT EXISTS vector');
      await q.exec('ALTER TABLE entries ADD COLUMN IF NOT EXISTS embedding_vec vector(384)');
      await q.exec(`GRANT UPDATE (embedding_vec) ON entries TO ${SYSTEM_ROLE}`);
    });
    return true;
  } catch {
    // Available but not creatable by this role (not trusted, no privilege): run without it.
    return false;
  }
}
