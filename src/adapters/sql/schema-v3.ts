/**
 * @module adapters/sql/schema-v3
 * Migration 3: the Memory API's tables and columns.
 *
 * - `entries` gains the denormalised query columns (writer, kind, uri, src_hash) and a stored
 *   full-text vector of `content` for lexical search (GIN-indexed). `expires_ns` becomes
 *   updatable by the app role (renew-on-use: the article's failure-mode table); the update
 *   policy of migration 2 still confines it to the principal's own non-OPERATOR rows.
 * - `review_queue`, `audit_events` and `write_quotas` were created empty in migration 1 as
 *   placeholders with shapes the Memory API does not use. Nothing could have written them (no
 *   port method existed), so they are dropped and recreated here with their real shapes and
 *   their row-level-security policies (dropping a table drops its policies and grants).
 * - `api_keys` (bearer keys of the service): system scope only — no grant to the app role at
 *   all, and RLS forced with a system-only policy as defence in depth.
 *
 * Full-text configuration: `simple` (lower-casing, no stemming, no stop words), so lexical
 * matching is language-neutral and close to the in-memory backend's term matching.
 */
const SYSTEM_POLICY = (t: string): string =>
  `CREATE POLICY ${t}_system ON ${t} TO memwarden_system USING (current_user = 'memwarden_system') WITH CHECK (current_user = 'memwarden_system');`;

const SQL = `
ALTER TABLE entries ADD COLUMN writer   text;
ALTER TABLE entries ADD COLUMN kind     text;
ALTER TABLE entries ADD COLUMN uri      text;
ALTER TABLE entries ADD COLUMN src_hash text;
ALTER TABLE entries ADD COLUMN content_tsv tsvector
  GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, coalesce(content, ''))) STORED;
CREATE INDEX entries_tsv_idx      ON entries USING gin (content_tsv);
CREATE INDEX entries_uri_idx      ON entries (uri) WHERE uri IS NOT NULL;
CREATE INDEX entries_src_hash_idx ON entries (src_hash) WHERE src_hash IS NOT NULL;
GRANT UPDATE (expires_ns) ON entries TO memwarden_app;

DROP TABLE review_queue;
CREATE TABLE review_queue (
  id          text   PRIMARY KEY,
  owner       text   NOT NULL,
  tier        text   NOT NULL
              CHECK (tier IN ('OPERATOR', 'USER_VERIFIED', 'USER_OBSERVED', 'EXTERNAL_TOOL', 'EXTERNAL_WEB')),
  content     text   NOT NULL,
  reasons     text[] NOT NULL,
  payload     bytea  NOT NULL,
  status      text   NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
  created_ns  bigint NOT NULL,
  decided_ns  bigint,
  decided_by  text,
  memory_id   text
);
CREATE INDEX review_queue_status_idx ON review_queue (status, created_ns);

DROP TABLE audit_events;
CREATE TABLE audit_events (
  seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id       text   NOT NULL UNIQUE,
  owner    text,
  at_ns    bigint NOT NULL,
  actor    text   NOT NULL,
  action   text   NOT NULL,
  subject  text,
  details  text   NOT NULL
);
CREATE INDEX audit_events_at_idx ON audit_events (at_ns, seq);
CREATE INDEX audit_events_subject_idx ON audit_events (subject, at_ns) WHERE subject IS NOT NULL;

DROP TABLE write_quotas;
CREATE TABLE write_quotas (
  principal text NOT NULL,
  tier      text NOT NULL,
  day       text NOT NULL,
  count     int  NOT NULL CHECK (count >= 0),
  PRIMARY KEY (principal, tier, day)
);

CREATE TABLE api_keys (
  key_hash   bytea   PRIMARY KEY CHECK (octet_length(key_hash) = 32),
  principal  text    NOT NULL,
  created_ns bigint  NOT NULL,
  revoked    boolean NOT NULL DEFAULT false
);

REVOKE ALL ON review_queue, audit_events, write_quotas, api_keys FROM PUBLIC;
GRANT SELECT, INSERT ON review_queue, audit_events TO memwarden_app, memwarden_system;
GRANT UPDATE (status, decided_ns, decided_by, memory_id) ON review_queue TO memwarden_system;
GRANT USAGE ON SEQUENCE audit_events_seq_seq TO memwarden_app, memwarden_system;
GRANT SELECT, INSERT, UPDATE ON write_quotas TO memwarden_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON write_quotas TO memwarden_system;
GRANT SELECT, INSERT ON api_keys TO memwarden_system;
GRANT UPDATE (revoked) ON api_keys TO memwarden_system;

ALTER TABLE review_queue ENABLE ROW LEVEL SECURITY;
ALTER TABLE review_queue FORCE ROW LEVEL SECURITY;
ALTER TABLE audit_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE audit_events FORCE ROW LEVEL SECURITY;
ALTER TABLE write_quotas ENABLE ROW LEVEL SECURITY;
ALTER TABLE write_quotas FORCE ROW LEVEL SECURITY;
ALTER TABLE api_keys     ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys     FORCE ROW LEVEL SECURITY;

${SYSTEM_POLICY('review_queue')}
${SYSTEM_POLICY('audit_events')}
${SYSTEM_POLICY('write_quotas')}
${SYSTEM_POLICY('api_keys')}

-- A principal enqueues and reads its own review items (always pending at insert); deciding is
-- the system's (no UPDATE grant to the app role).
CREATE POLICY review_queue_app_read ON review_queue FOR SELECT TO memwarden_app
  USING (owner = memwarden_principal());
CREATE POLICY review_queue_app_insert ON review_queue FOR INSERT TO memwarden_app
  WITH CHECK (owner = memwarden_principal() AND status = 'pending' AND decided_ns IS NULL
              AND decided_by IS NULL AND memory_id IS NULL);
CREATE POLICY audit_events_app_read ON audit_events FOR SELECT TO memwarden_app
  USING (owner = memwarden_principal());
CREATE POLICY audit_events_app_insert ON audit_events FOR INSERT TO memwarden_app
  WITH CHECK (owner = memwarden_principal());
CREATE POLICY write_quotas_app ON write_quotas TO memwarden_app
  USING (principal = memwarden_principal()) WITH CHECK (principal = memwarden_principal());
`;

/** Migration 3 (see the module comment); typed as a `Migration` where `./schema.js` lists it. */
export const MIGRATION_3 = {
  version: 3,
  name: 'memory api: metadata, review, audit, quotas, api keys',
  sql: SQL,
} as const;
