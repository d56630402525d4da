/**
 * @module adapters/sql/schema-v50
 * Migration 50 (issue 20, ADR 0049): the query columns of version 2 entries, denormalised
 * from the signed record like the others (the read path and `memwarden audit` check them
 * against the bytes):
 * - `memory_id`: the logical memory id (`lid`, or the entry's own id on a first version);
 *   NULL on rows written before it, which read as their own id;
 * - `event_ns`: the event time (what the memory is about), for time filters and ranking;
 * - `metadata`: the caller's metadata as `jsonb`, for filters pushed into SQL (`./filter-sql.ts`);
 *   a GIN index (`jsonb_path_ops`) serves the containment pre-test of equality conditions;
 * - `run_id`, `agent_id`: the run / session and agent scopes within the principal;
 * - `lex_len`: the content's length in BM25 tokens (`core/text`), computed by the adapter on
 *   insert, for the collection statistics of lexical ranking (ADR 0050).
 * New columns of `entries` inherit its table-level grants and row-level security.
 */
const SQL = `
ALTER TABLE entries ADD COLUMN memory_id text;
ALTER TABLE entries ADD COLUMN event_ns  bigint;
ALTER TABLE entries ADD COLUMN metadata  jsonb;
ALTER TABLE entries ADD COLUMN run_id    text;
ALTER TABLE entries ADD COLUMN agent_id  text;
ALTER TABLE entries ADD COLUMN lex_len   int;
CREATE INDEX entries_memory_id_idx ON entries (memory_id) WHERE memory_id IS NOT NULL;
CREATE INDEX entries_event_idx     ON entries (owner, event_ns) WHERE event_ns IS NOT NULL;
CREATE INDEX entries_run_idx       ON entries (owner, run_id) WHERE run_id IS NOT NULL;
CREATE INDEX entries_metadata_idx  ON entries USING gin (metadata jsonb_path_ops) WHERE metadata IS NOT NULL;
`;

/** A `Migration` of ./schema.ts (typed there: importing the type back would be a cycle). */
export const MIGRATION_50 = {
  version: 50,
  name: 'entry v2 columns: memory id, event time, metadata, run and agent scopes',
  sql: SQL,
} as const;
