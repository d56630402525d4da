/**
 * @module adapters/sql/schema
 * The versioned migrations of the shared Postgres dialect (PGlite and PostgreSQL run the same
 * text). Each migration runs once, inside one transaction, recorded in `schema_migrations`
 * (see `./migrations.js`). Never edit a shipped migration: add a new version.
 *
 * Type choices:
 * - Bytes are `bytea` and map to `Uint8Array` exactly.
 * - Nanosecond timestamps are `bigint` (signed 64-bit): exact for every instant until
 *   2262-04-11, which `numeric` would also be but at the cost of arithmetic and index speed.
 *   Values travel to the driver as decimal strings and come back as JS `bigint`, so no
 *   timestamp ever passes through a lossy JS `number` (ns values exceed 2^53).
 * - Log indices and sizes are `bigint` but map to JS `number` (the port's type); a log of
 *   2^53 leaves is not a concern.
 *
 * Isolation (article Pattern 4) is migration 2: roles, grants, and row-level security.
 */

import { MIGRATION_10 } from './schema-v10.js';
import { MIGRATION_20 } from './schema-feed.js';
import { MIGRATION_3 } from './schema-v3.js';
import { MIGRATION_50 } from './schema-v50.js';
import { MIGRATION_60 } from './schema-v60.js';
import { MIGRATION_61 } from './schema-v61.js';

/** One migration: a version, a name for humans, and the SQL that performs it. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Tables that hold per-principal rows; each has RLS enabled and forced. */
export const TENANT_TABLES = [
  'entries',
  'log_leaves',
  'lineage_edges',
  'review_queue',
  'audit_events',
  'write_quotas',
] as const;

/** System-only tables (no app-role grant; RLS forced with a system policy). */
export const SYSTEM_TABLES = ['api_keys'] as const;

/** Every data table (for test resets: `TRUNCATE` these and zero `log_head`). */
export const DATA_TABLES = [
  ...TENANT_TABLES,
  ...SYSTEM_TABLES,
  'log_nodes',
  'checkpoints',
  'principals',
  'keys',
  'entry_lex_stats',
] as const;

const TABLES = `
-- The log head: one row whose size is the sequencing point for appends. Appenders lock it
-- (SELECT ... FOR UPDATE) so several processes can never fork the log.
CREATE TABLE log_head (
  id   boolean PRIMARY KEY DEFAULT true CHECK (id),
  size bigint  NOT NULL CHECK (size >= 0)
);
INSERT INTO log_head (id, size) VALUES (true, 0);

-- RFC 6962 leaves. owner: the principal whose write appended the leaf (NULL = system).
CREATE TABLE log_leaves (
  idx      bigint PRIMARY KEY CHECK (idx >= 0),
  data     bytea  NOT NULL,
  hash     bytea  NOT NULL,
  entry_id text   NOT NULL,
  kind     text   NOT NULL CHECK (kind IN ('entry', 'tombstone')),
  owner    text
);
CREATE INDEX log_leaves_entry_idx ON log_leaves (entry_id) WHERE kind = 'entry';

-- Perfect-subtree hashes; written once.
CREATE TABLE log_nodes (
  level int    NOT NULL CHECK (level >= 0),
  idx   bigint NOT NULL CHECK (idx >= 0),
  hash  bytea  NOT NULL,
  PRIMARY KEY (level, idx)
);

CREATE TABLE checkpoints (
  size       bigint PRIMARY KEY CHECK (size >= 0),
  root       bytea  NOT NULL,
  note       text   NOT NULL,
  created_ns bigint NOT NULL
);

CREATE TABLE principals (
  id         text   PRIMARY KEY,
  kind       text   NOT NULL,
  name       text   NOT NULL,
  created_ns bigint NOT NULL
);

-- No foreign key to principals: the registry layer decides what a key may name, and the
-- in-memory reference backend accepts the same inputs.
CREATE TABLE keys (
  kid                 text   PRIMARY KEY,
  principal_id        text   NOT NULL,
  alg                 text   NOT NULL CHECK (alg = 'ed25519'),
  public_key          bytea  NOT NULL,
  valid_from_ns       bigint NOT NULL,
  valid_until_ns      bigint,
  revoked_at_ns       bigint,
  revoked_at_log_size bigint,
  revocation_reason   text
);
CREATE INDEX keys_principal_idx ON keys (principal_id);

-- Entries. The nullable columns are reserved for the next stage (TTL, retrieval, supersession);
-- a vector(384) twin of embedding is added only where the pgvector extension exists.
CREATE TABLE entries (
  id            text    PRIMARY KEY,
  owner         text    NOT NULL,
  tier          text    NOT NULL
                CHECK (tier IN ('OPERATOR', 'USER_VERIFIED', 'USER_OBSERVED', 'EXTERNAL_TOOL', 'EXTERNAL_WEB')),
  bytes         bytea   NOT NULL,
  leaf_index    bigint  NOT NULL,
  mac_kid       text    NOT NULL,
  mac           bytea   NOT NULL,
  created_ns    bigint,
  expires_ns    bigint,
  content       text,
  embedding     real[],
  superseded_by text,
  deleted       boolean NOT NULL DEFAULT false
);
CREATE INDEX entries_leaf_idx ON entries (leaf_index);
CREATE INDEX entries_owner_idx ON entries (owner, leaf_index);

-- Reserved for the next stage (created empty now so policies exist from day one).
CREATE TABLE lineage_edges (
  parent text NOT NULL,
  child  text NOT NULL,
  weight real NOT NULL,
  owner  text NOT NULL,
  PRIMARY KEY (parent, child)
);
CREATE TABLE review_queue (
  id         text   PRIMARY KEY,
  entry_id   text   NOT NULL,
  owner      text   NOT NULL,
  tier       text   NOT NULL,
  reason     text   NOT NULL,
  status     text   NOT NULL DEFAULT 'pending',
  created_ns bigint NOT NULL,
  decided_ns bigint,
  decided_by text
);
CREATE TABLE audit_events (
  seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  owner      text,
  kind       text   NOT NULL,
  entry_id   text,
  detail     text,
  created_ns bigint NOT NULL
);
CREATE TABLE write_quotas (
  principal text NOT NULL,
  tier      text NOT NULL,
  day       int  NOT NULL,
  count     int  NOT NULL DEFAULT 0 CHECK (count >= 0),
  PRIMARY KEY (principal, tier, day)
);
`;

/** Roles are cluster-wide: create them only if absent, tolerating a racing creator. */
const createRole = (role: string): string => `
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN
    CREATE ROLE ${role} NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT;
  END IF;
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;`;

const SECURITY = `
${createRole('memwarden_app')}
${createRole('memwarden_system')}
-- The connecting (owner) role switches into these with SET LOCAL ROLE; membership is needed
-- for that unless it is a superuser (PGlite's postgres).
GRANT memwarden_app, memwarden_system TO CURRENT_USER;
DO $$ BEGIN
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO memwarden_app, memwarden_system', current_schema());
END $$;

-- The principal of the current transaction, NULL when unset or cleared (fail closed: every
-- policy below compares against it, and NULL matches nothing).
CREATE FUNCTION memwarden_principal() RETURNS text LANGUAGE sql STABLE
  AS $fn$ SELECT NULLIF(current_setting('app.principal', true), '') $fn$;

REVOKE ALL ON log_head, log_leaves, log_nodes, checkpoints, principals, keys, entries,
  lineage_edges, review_queue, audit_events, write_quotas FROM PUBLIC;

-- Global, non-tenant tables: privileges alone decide. Agents may append their own leaves and
-- the nodes they complete; checkpoints and the registry are written by the system only.
GRANT SELECT, UPDATE ON log_head TO memwarden_app, memwarden_system;
GRANT SELECT, INSERT ON log_nodes TO memwarden_app, memwarden_system;
GRANT SELECT ON checkpoints, principals, keys TO memwarden_app;
GRANT SELECT, INSERT ON checkpoints, principals, keys TO memwarden_system;
GRANT UPDATE (valid_until_ns, revoked_at_ns, revoked_at_log_size, revocation_reason) ON keys TO memwarden_system;

-- Tenant tables: privileges plus row-level security, forced so even the owner is subject.
GRANT SELECT, INSERT ON log_leaves, lineage_edges, review_queue, audit_events TO memwarden_app, memwarden_system;
GRANT SELECT, INSERT ON entries TO memwarden_app, memwarden_system;
GRANT UPDATE (superseded_by, deleted) ON entries TO memwarden_app;
GRANT UPDATE (created_ns, expires_ns, content, embedding, superseded_by, deleted) ON entries TO memwarden_system;
GRANT UPDATE (status, decided_ns, decided_by) ON review_queue TO memwarden_system;
GRANT SELECT, INSERT, UPDATE ON write_quotas TO memwarden_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON write_quotas TO memwarden_system;
GRANT USAGE ON SEQUENCE audit_events_seq_seq TO memwarden_app, memwarden_system;

ALTER TABLE entries       ENABLE ROW LEVEL SECURITY;
ALTER TABLE entries       FORCE ROW LEVEL SECURITY;
ALTER TABLE log_leaves    ENABLE ROW LEVEL SECURITY;
ALTER TABLE log_leaves    FORCE ROW LEVEL SECURITY;
ALTER TABLE lineage_edges ENABLE ROW LEVEL SECURITY;
ALTER TABLE lineage_edges FORCE ROW LEVEL SECURITY;
ALTER TABLE review_queue  ENABLE ROW LEVEL SECURITY;
ALTER TABLE review_queue  FORCE ROW LEVEL SECURITY;
ALTER TABLE audit_events  ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_events  FORCE ROW LEVEL SECURITY;
ALTER TABLE write_quotas  ENABLE ROW LEVEL SECURITY;
ALTER TABLE write_quotas  FORCE ROW LEVEL SECURITY;

-- The system scope (deployment tooling) sees and writes everything, by policy rather than
-- BYPASSRLS, so the grant is visible in the schema and revocable per table. The policies test
-- current_user, not just role membership: the owner login is a member of memwarden_system (to
-- SET ROLE into it) and would otherwise inherit these policies on a raw, unwrapped query.
CREATE POLICY entries_system       ON entries       TO memwarden_system USING (current_user = 'memwarden_system') WITH CHECK (current_user = 'memwarden_system');
CREATE POLICY log_leaves_system    ON log_leaves    TO memwarden_system USING (current_user = 'memwarden_system') WITH CHECK (current_user = 'memwarden_system');
CREATE POLICY lineage_edges_system ON lineage_edges TO memwarden_system USING (current_user = 'memwarden_system') WITH CHECK (current_user = 'memwarden_system');
CREATE POLICY review_queue_system  ON review_queue  TO memwarden_system USING (current_user = 'memwarden_system') WITH CHECK (current_user = 'memwarden_system');
CREATE POLICY audit_events_system  ON audit_events  TO memwarden_system USING (current_user = 'memwarden_system') WITH CHECK (current_user = 'memwarden_system');
CREATE POLICY write_quotas_system  ON write_quotas  TO memwarden_system USING (current_user = 'memwarden_system') WITH CHECK (current_user = 'memwarden_system');

-- Entries: a principal reads its own rows and the global OPERATOR rows (only once a principal
-- is set); it writes only its own, never OPERATOR memory.
CREATE POLICY entries_app_read ON entries FOR SELECT TO memwarden_app
  USING (owner = memwarden_principal() OR (tier = 'OPERATOR' AND memwarden_principal() IS NOT NULL));
CREATE POLICY entries_app_insert ON entries FOR INSERT TO memwarden_app
  WITH CHECK (owner = memwarden_principal() AND tier <> 'OPERATOR');
CREATE POLICY entries_app_update ON entries FOR UPDATE TO memwarden_app
  USING (owner = memwarden_principal() AND tier <> 'OPERATOR')
  WITH CHECK (owner = memwarden_principal() AND tier <> 'OPERATOR');

CREATE POLICY log_leaves_app_read ON log_leaves FOR SELECT TO memwarden_app USING (owner = memwarden_principal());
CREATE POLICY log_leaves_app_insert ON log_leaves FOR INSERT TO memwarden_app WITH CHECK (owner = memwarden_principal());
CREATE POLICY lineage_edges_app_read ON lineage_edges FOR SELECT TO memwarden_app USING (owner = memwarden_principal());
CREATE POLICY lineage_edges_app_insert ON lineage_edges FOR INSERT TO memwarden_app WITH CHECK (owner = memwarden_principal());
CREATE POLICY review_queue_app_read ON review_queue FOR SELECT TO memwarden_app USING (owner = memwarden_principal());
CREATE POLICY review_queue_app_insert ON review_queue FOR INSERT TO memwarden_app WITH CHECK (owner = memwarden_principal());
CREATE POLICY audit_events_app_read ON audit_events FOR SELECT TO memwarden_app USING (owner = memwarden_principal());
CREATE POLICY audit_events_app_insert ON audit_events FOR INSERT TO memwarden_app WITH CHECK (owner = memwarden_principal());
CREATE POLICY write_quotas_app ON write_quotas TO memwarden_app
  USING (principal = memwarden_principal()) WITH CHECK (principal = memwarden_principal());
`;

/** All migrations, in order. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'tables', sql: TABLES },
  { version: 2, name: 'roles, grants and row-level security', sql: SECURITY },
  MIGRATION_3,
  MIGRATION_10,
  MIGRATION_20,
  MIGRATION_50,
  MIGRATION_60,
  MIGRATION_61,
];
