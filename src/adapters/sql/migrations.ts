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
import { LEXICAL_ROLE, LEX_USE_VECTOR_SQL } from './schema-v60.js';

/** Runs `fn` in one transaction as the connecting role (no scope). Provided by each driver. */
export type OwnerTx = <T>(fn: (q: Queryable) => Promise<T>) => Promise<T>;

/** Arbitrary but fixed advisory-lock key ("memw"), shared by every memwarden process. */
const MIGRATION_LOCK = 0x6d656d77;

/**
 * Whether this database gives the backend pgvector, and why (reported at open: a log line and
 * `/healthz`, so an operator never has to guess which vector path runs).
 * - `installed`: the extension already exists in this database (a DBA created it: the managed
 *   service recipe) and the `vector(384)` column is in place;
 * - `created`: this role created it now (a superuser, PGlite, or a trusted extension);
 * - `not-available`: the server has no pgvector (`pg_available_extensions` lacks it);
 * - `not-permitted`: the server has it but this role may not create it (not a superuser and the
 *   extension is not trusted, or no CREATE on the database) — a superuser runs
 *   `CREATE EXTENSION vector` in this database once, and the next open uses it;
 * - `failed`: it exists or was creatable, but adding the column failed (`detail`);
 * - `disabled`: the caller asked for no vector column.
 */
export interface VectorStatus {
  readonly vector: boolean;
  readonly reason:
    'installed' | 'created' | 'not-available' | 'not-permitted' | 'failed' | 'disabled';
  /** The extension's version in this database, when installed. */
  readonly version?: string;
  readonly detail?: string;
}

/** What `migrate` did. */
export interface MigrationReport {
  readonly applied: readonly number[];
  /** True when the `vector` extension is installed and `entries.embedding_vec` exists. */
  readonly vector: boolean;
  /** {@link vector}, and why. */
  readonly vectorStatus: VectorStatus;
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
  const vectorStatus: VectorStatus =
    opts.wantVector === false ? { vector: false, reason: 'disabled' } : await ensureVector(ownerTx);
  return { applied, vector: vectorStatus.vector, vectorStatus };
}

/**
 * Refuse to run if a role we switch into could bypass row-level security (a pre-existing,
 * misconfigured role of the same name would otherwise silently void isolation).
 */
async function verifyRoles(ownerTx: OwnerTx): Promise<void> {
  const bad = await ownerTx(async (q) => {
    const { rows } = await q.query(
      'SELECT rolname FROM pg_roles WHERE rolname = ANY($1) AND (rolsuper OR rolbypassrls)',
      [[APP_ROLE, SYSTEM_ROLE, LEXICAL_ROLE]],
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
 * Use the `vector` extension when this database has it, create it when the server offers it and
 * this role may, and add the `vector(384)` twin of `entries.embedding`. Idempotent and
 * deliberately unversioned: a database that gains pgvector later (a DBA runs
 * `CREATE EXTENSION vector`) gets the column on its next open. Otherwise vectors stay in the
 * `real[]` column, ranked in-process — and the status says why, so that is never silent.
 * Creation is attempted only when it can succeed (superuser, or a trusted extension and CREATE
 * on the database): a refused attempt would leave an ERROR in the server log at every open.
 */
export async function ensureVector(ownerTx: OwnerTx): Promise<VectorStatus> {
  const state = await ownerTx(async (q) => {
    const { rows } = await q.query(
      `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS installed,
              EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') AS available,
              COALESCE((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false) AS superuser,
              COALESCE((SELECT bool_or(trusted) FROM pg_available_extension_versions WHERE name = 'vector'), false) AS trusted,
              has_database_privilege(current_database(), 'CREATE') AS can_create`,
    );
    return rows[0] as {
      installed: string | null;
      available: boolean;
      superuser: boolean;
      trusted: boolean;
      can_create: boolean;
    };
  });
  const installed = state.installed ?? undefined;
  if (installed === undefined) {
    if (!state.available) return { vector: false, reason: 'not-available' };
    if (!state.superuser && !(state.trusted && state.can_create)) {
      return {
        vector: false,
        reason: 'not-permitted',
        detail:
          'pgvector is available on the server but this role may not create the extension; ' +
          'a superuser runs CREATE EXTENSION vector in this database once',
      };
    }
  }
  try {
    const version = await ownerTx(async (q) => {
      await q.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      if (installed === undefined) await q.exec('CREATE EXTENSION IF NOT EXISTS vector');
      await q.exec('ALTER TABLE entries ADD COLUMN IF NOT EXISTS embedding_vec vector(384)');
      await q.exec(`GRANT UPDATE (embedding_vec) ON entries TO ${SYSTEM_ROLE}`);
      // BM25 counters count rows by the embedding column search reads (migration 60).
      await q.exec(LEX_USE_VECTOR_SQL);
      const { rows } = await q.query(
        "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
      );
      return rows[0] === undefined ? undefined : String(rows[0].extversion);
    });
    return {
      vector: true,
      reason: installed === undefined ? 'created' : 'installed',
      ...(version === undefined ? {} : { version }),
    };
  } catch (e) {
    return {
      vector: false,
      reason: 'failed',
      detail: e instanceof Error ? e.message : String(e),
    };
  }
}
