/**
 * @module adapters/sql/schema-v60
 * Migration 60 (ADR 0075): the SQL lexical path at scale, with isolation still enforced by the
 * database.
 *
 * Under row-level security the planner may not run a qual whose operator is not `LEAKPROOF`
 * (`@@`, `ts_match_vq`) ahead of the policy's quals, so the full-text candidate query could not
 * use the GIN index `entries_tsv_idx` and scanned the scope; the BM25 statistics scanned it too.
 *
 * - Role `memwarden_lexical` (NOLOGIN, no BYPASSRLS): its only policy on `entries` is
 *   `USING (true)` for SELECT — a policy whose qual folds away, so the planner has no security
 *   qual to keep ahead of `@@` and uses the GIN index. Nobody logs in as it or keeps membership
 *   in it: the migration grants the owner login membership only to hand it ownership of the
 *   functions below and revokes it before committing (the migration lock serialises that).
 * - `memwarden_lexical_match(q tsquery, vec boolean)`: SECURITY DEFINER, owned by that role,
 *   executable by `memwarden_app` only. It returns the rows matching `q` **that the caller's
 *   read policy admits**: the predicate is `entries_app_read`'s, reading the principal from the
 *   same transaction-local setting (`memwarden_principal()`), never from an argument — there is
 *   no way to ask it for another principal's rows. Only the query columns come back (no bytes,
 *   MAC or embedding), plus `rank` (`ts_rank(content_tsv, q, 32)`, the candidate
 *   order) and `embedded` (the embedding column `vec` selects is set). The caller applies its
 *   filters, ranking and limit; the hits it returns are re-read through `entries` under RLS.
 *   Its result set is kept in memory up to 16 MB (`work_mem`) rather than spilled to disk.
 * - `entry_lex_stats`: per (owner, OPERATOR or not) counters of the rows BM25 counts (not
 *   deleted, not superseded, embedded): rows, rows with a `lex_len`, and the sum of `lex_len`.
 *   Statement triggers with transition tables keep them (one upsert per owner per statement);
 *   the trigger's argument names the embedding column (`embedding`, or `embedding_vec` once the
 *   pgvector column exists: `./migrations.ts` switches it and recounts). The app role reads them
 *   under the same scope predicate as `entries` and cannot write them.
 */

/** The role owning the lexical functions (see the module comment). */
export const LEXICAL_ROLE = 'memwarden_lexical';

/** The scope predicate of `entries_app_read` (migration 2), on `owner` / `tier`. */
const SCOPE = `(owner = memwarden_principal() OR (tier = 'OPERATOR' AND memwarden_principal() IS NOT NULL))`;

/** The same predicate on the alias `e` (inside a function whose output columns share the names). */
const E_SCOPE = SCOPE.replace(/\b(owner|tier) /g, 'e.$1 ');

const MATCH_COLS = `e.id, e.owner, e.tier, e.kind, e.uri, e.run_id, e.agent_id, e.memory_id,
      e.created_ns, e.event_ns, e.expires_ns, e.deleted, e.superseded_by, e.metadata,
      e.leaf_index, e.content, e.content_tsv, ts_rank(e.content_tsv, q, 32)`;

/** The rows BM25 statistics count, on a relation `r`, with embedding column `%2$I`. */
const COUNTED = `NOT deleted AND superseded_by IS NULL AND %2$I IS NOT NULL`;

/**
 * The counter upsert of the trigger: +1 per counted row of `lex_new`, −1 per counted row of
 * `lex_old` (the transition tables present for the statement's kind), per owner.
 */
const countSql = (emb: string, tables: readonly ('lex_new' | 'lex_old')[]): string => `
      WITH d AS (${tables
        .map(
          (
            t,
          ) => `SELECT x.owner, x.tier = 'OPERATOR' AS operator, ${t === 'lex_new' ? 1 : -1} AS s, x.lex_len
                     FROM ${t} x WHERE NOT x.deleted AND x.superseded_by IS NULL AND x.${emb} IS NOT NULL`,
        )
        .join(' UNION ALL ')}),
      g AS (SELECT d.owner, d.operator, sum(d.s)::bigint AS n,
                   sum(CASE WHEN d.lex_len IS NULL THEN 0 ELSE d.s END)::bigint AS len_n,
                   coalesce(sum(d.s * d.lex_len::bigint), 0)::bigint AS len_sum
              FROM d GROUP BY d.owner, d.operator)
      INSERT INTO entry_lex_stats AS t (owner, operator, n, len_n, len_sum)
      SELECT g.owner, g.operator, g.n, g.len_n, g.len_sum FROM g
       WHERE g.n <> 0 OR g.len_n <> 0 OR g.len_sum <> 0
      ON CONFLICT (owner, operator) DO UPDATE
        SET n = t.n + EXCLUDED.n, len_n = t.len_n + EXCLUDED.len_n,
            len_sum = t.len_sum + EXCLUDED.len_sum`;

const SQL = `
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${LEXICAL_ROLE}') THEN
    CREATE ROLE ${LEXICAL_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT;
  END IF;
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;

-- Functions below resolve names in this schema first, then the catalog; pg_temp last (a
-- caller's temporary table can never stand in for entries).
DO $$ BEGIN
  EXECUTE format('SET LOCAL search_path = %I, pg_catalog, pg_temp', current_schema());
  EXECUTE format('GRANT USAGE, CREATE ON SCHEMA %I TO ${LEXICAL_ROLE}', current_schema());
END $$;

CREATE TABLE entry_lex_stats (
  owner    text    NOT NULL,
  operator boolean NOT NULL,
  n        bigint  NOT NULL,
  len_n    bigint  NOT NULL,
  len_sum  bigint  NOT NULL,
  PRIMARY KEY (owner, operator)
);
REVOKE ALL ON entry_lex_stats FROM PUBLIC;
GRANT SELECT ON entry_lex_stats TO memwarden_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON entry_lex_stats TO ${LEXICAL_ROLE};
ALTER TABLE entry_lex_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE entry_lex_stats FORCE ROW LEVEL SECURITY;
CREATE POLICY entry_lex_stats_app_read ON entry_lex_stats FOR SELECT TO memwarden_app
  USING (owner = memwarden_principal() OR (operator AND memwarden_principal() IS NOT NULL));
CREATE POLICY entry_lex_stats_lexical ON entry_lex_stats TO ${LEXICAL_ROLE}
  USING (true) WITH CHECK (true);

GRANT SELECT (id, owner, tier, kind, uri, run_id, agent_id, memory_id, created_ns, event_ns,
  expires_ns, deleted, superseded_by, metadata, leaf_index, content, content_tsv, lex_len,
  embedding) ON entries TO ${LEXICAL_ROLE};
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'entries'::regclass
              AND attname = 'embedding_vec' AND NOT attisdropped) THEN
    GRANT SELECT (embedding_vec) ON entries TO ${LEXICAL_ROLE};
  END IF;
END $$;
CREATE POLICY entries_lexical ON entries FOR SELECT TO ${LEXICAL_ROLE} USING (true);

CREATE FUNCTION memwarden_lexical_match(q tsquery, vec boolean)
  RETURNS TABLE (id text, owner text, tier text, kind text, uri text, run_id text,
    agent_id text, memory_id text, created_ns bigint, event_ns bigint, expires_ns bigint,
    deleted boolean, superseded_by text, metadata jsonb, leaf_index bigint, content text,
    content_tsv tsvector, rank real, embedded boolean)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path FROM CURRENT SET work_mem = '16MB' AS $fn$
#variable_conflict use_column
BEGIN
  -- Static queries (planned on first use): the embedding_vec branch runs only where it exists.
  IF vec THEN
    RETURN QUERY SELECT ${MATCH_COLS}, e.embedding_vec IS NOT NULL
      FROM entries e WHERE e.content_tsv @@ q AND ${E_SCOPE};
  ELSE
    RETURN QUERY SELECT ${MATCH_COLS}, e.embedding IS NOT NULL
      FROM entries e WHERE e.content_tsv @@ q AND ${E_SCOPE};
  END IF;
END $fn$;

CREATE FUNCTION memwarden_lex_count() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $fn$
#variable_conflict use_column
DECLARE
  emb text := TG_ARGV[0];
BEGIN
  -- Only entries' own triggers count (EXECUTE is revoked from PUBLIC, so nobody can attach it
  -- elsewhere; this is the second wall: a table of the caller's — a temporary one — would let
  -- the definer role write any owner's counters).
  IF TG_RELID <> 'entries'::regclass THEN
    RAISE EXCEPTION 'memwarden_lex_count: not a trigger of entries' USING ERRCODE = '42501';
  END IF;
  -- Static statements (planned once per session, not per trigger call); the embedding_vec
  -- ones are parsed only where that column exists and the trigger names it.
  IF TG_OP = 'TRUNCATE' THEN
    DELETE FROM entry_lex_stats;
  ELSIF emb = 'embedding' THEN
    IF TG_OP = 'INSERT' THEN ${countSql('embedding', ['lex_new'])};
    ELSIF TG_OP = 'UPDATE' THEN ${countSql('embedding', ['lex_new', 'lex_old'])};
    ELSE ${countSql('embedding', ['lex_old'])};
    END IF;
  ELSIF emb = 'embedding_vec' THEN
    IF TG_OP = 'INSERT' THEN ${countSql('embedding_vec', ['lex_new'])};
    ELSIF TG_OP = 'UPDATE' THEN ${countSql('embedding_vec', ['lex_new', 'lex_old'])};
    ELSE ${countSql('embedding_vec', ['lex_old'])};
    END IF;
  ELSE
    RAISE EXCEPTION 'memwarden_lex_count: unknown embedding column %', emb;
  END IF;
  RETURN NULL;
END $fn$;

-- Rebuild the counters from the rows (this migration; the switch to embedding_vec).
CREATE FUNCTION memwarden_lex_recount(emb text) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $fn$
BEGIN
  IF emb IS NULL OR emb NOT IN ('embedding', 'embedding_vec') THEN
    RAISE EXCEPTION 'memwarden_lex_recount: unknown embedding column %', emb;
  END IF;
  DELETE FROM entry_lex_stats;
  EXECUTE format('INSERT INTO entry_lex_stats (owner, operator, n, len_n, len_sum)
    SELECT owner, tier = ''OPERATOR'', count(*), count(lex_len), coalesce(sum(lex_len), 0)
      FROM entries WHERE ${COUNTED} GROUP BY 1, 2', 'entries', emb);
END $fn$;

REVOKE ALL ON FUNCTION memwarden_lexical_match(tsquery, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memwarden_lexical_match(tsquery, boolean) TO memwarden_app;
REVOKE ALL ON FUNCTION memwarden_lex_recount(text) FROM PUBLIC;
-- A trigger fires without an EXECUTE check; attaching one needs it. Without this revoke any
-- role could attach the counter to a temporary table of its own and write any owner's counters.
REVOKE ALL ON FUNCTION memwarden_lex_count() FROM PUBLIC;

DO $$
DECLARE
  granted boolean := false;
  emb text := CASE WHEN EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'entries'::regclass
                   AND attname = 'embedding_vec' AND NOT attisdropped)
                THEN 'embedding_vec' ELSE 'embedding' END;
BEGIN
  IF NOT pg_has_role(current_user, '${LEXICAL_ROLE}', 'MEMBER') THEN
    EXECUTE format('GRANT ${LEXICAL_ROLE} TO %I', current_user);
    granted := true;
  END IF;
  ALTER FUNCTION memwarden_lexical_match(tsquery, boolean) OWNER TO ${LEXICAL_ROLE};
  ALTER FUNCTION memwarden_lex_count() OWNER TO ${LEXICAL_ROLE};
  ALTER FUNCTION memwarden_lex_recount(text) OWNER TO ${LEXICAL_ROLE};
  -- After the owner change (it moves grants held by the old owner to the new one): the owner
  -- login recounts when the pgvector column appears (./migrations.ts).
  EXECUTE format('GRANT EXECUTE ON FUNCTION memwarden_lex_recount(text) TO %I', current_user);
  -- …and re-creates the counting triggers then (CREATE TRIGGER needs EXECUTE; PUBLIC has none).
  EXECUTE format('GRANT EXECUTE ON FUNCTION memwarden_lex_count() TO %I', current_user);
  PERFORM memwarden_lex_recount(emb);
  EXECUTE format('CREATE TRIGGER entries_lex_ins AFTER INSERT ON entries
    REFERENCING NEW TABLE AS lex_new FOR EACH STATEMENT EXECUTE FUNCTION memwarden_lex_count(%L)', emb);
  EXECUTE format('CREATE TRIGGER entries_lex_upd AFTER UPDATE ON entries
    REFERENCING OLD TABLE AS lex_old NEW TABLE AS lex_new FOR EACH STATEMENT EXECUTE FUNCTION memwarden_lex_count(%L)', emb);
  EXECUTE format('CREATE TRIGGER entries_lex_del AFTER DELETE ON entries
    REFERENCING OLD TABLE AS lex_old FOR EACH STATEMENT EXECUTE FUNCTION memwarden_lex_count(%L)', emb);
  EXECUTE format('CREATE TRIGGER entries_lex_trunc AFTER TRUNCATE ON entries
    FOR EACH STATEMENT EXECUTE FUNCTION memwarden_lex_count(%L)', emb);
  EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM ${LEXICAL_ROLE}', current_schema());
  IF granted THEN
    EXECUTE format('REVOKE ${LEXICAL_ROLE} FROM %I', current_user);
  END IF;
END $$;
`;

/** Switch the counting triggers to `embedding_vec` (when the pgvector column appears) and recount. */
export const LEX_USE_VECTOR_SQL = `
DO $$
DECLARE cur text;
BEGIN
  SELECT encode(tgargs, 'escape') INTO cur FROM pg_trigger
   WHERE tgrelid = 'entries'::regclass AND tgname = 'entries_lex_ins';
  IF cur IS NULL OR cur LIKE 'embedding_vec%' THEN RETURN; END IF;
  EXECUTE format('GRANT SELECT (embedding_vec) ON entries TO ${LEXICAL_ROLE}');
  DROP TRIGGER entries_lex_ins ON entries;
  DROP TRIGGER entries_lex_upd ON entries;
  DROP TRIGGER entries_lex_del ON entries;
  DROP TRIGGER entries_lex_trunc ON entries;
  CREATE TRIGGER entries_lex_ins AFTER INSERT ON entries
    REFERENCING NEW TABLE AS lex_new FOR EACH STATEMENT EXECUTE FUNCTION memwarden_lex_count('embedding_vec');
  CREATE TRIGGER entries_lex_upd AFTER UPDATE ON entries
    REFERENCING OLD TABLE AS lex_old NEW TABLE AS lex_new FOR EACH STATEMENT EXECUTE FUNCTION memwarden_lex_count('embedding_vec');
  CREATE TRIGGER entries_lex_del AFTER DELETE ON entries
    REFERENCING OLD TABLE AS lex_old FOR EACH STATEMENT EXECUTE FUNCTION memwarden_lex_count('embedding_vec');
  CREATE TRIGGER entries_lex_trunc AFTER TRUNCATE ON entries
    FOR EACH STATEMENT EXECUTE FUNCTION memwarden_lex_count('embedding_vec');
  PERFORM memwarden_lex_recount('embedding_vec');
END $$;`;

/** A `Migration` of ./schema.ts (typed there: importing the type back would be a cycle). */
export const MIGRATION_60 = {
  version: 60,
  name: 'lexical search at scale: policy-checked GIN candidates, BM25 counters',
  sql: SQL,
} as const;
