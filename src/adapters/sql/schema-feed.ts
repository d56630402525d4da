/**
 * @module adapters/sql/schema-feed
 * Migration 20: the change feed of a store several processes share (issue 21, ADR 0037).
 *
 * Each process keeps an in-process read model (ADR 0018) and must learn of what the others
 * commit. Two triggers announce committed changes with `pg_notify`, which PostgreSQL delivers
 * to every listening session only when (and if) the transaction commits, in commit order:
 *
 * - `log_head` moves → `L<size>`: the log grew to `size`. The log is the truth; the note is
 *   only the wake-up. A follower reads the entries of the leaf indices it has not integrated
 *   (dense and commit-ordered: ADR 0011), never "rows changed since".
 * - an entry's `deleted`, `superseded_by` or `expires_ns` changes → `D<id>`, `S<id>` or
 *   `X<expires_ns>:<id>`. These state changes are monotone and idempotent (set once, expiry only
 *   forward), so one applied twice or late changes nothing.
 *
 * The channel is the schema's own (`mw_` + md5 of the table's schema: short, and several
 * memwarden schemas can share a database, as the tests' do). A session that is not listening
 * costs the notifying transaction a queue entry and nothing else; the embedded store runs the
 * same migration and never listens.
 */

/** The notify channel of a schema: the listener computes the same in SQL. */
export const FEED_CHANNEL_SQL = "'mw_' || md5(current_schema())";

const SQL = `
CREATE FUNCTION memwarden_feed_log() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NEW.size <> OLD.size THEN
    PERFORM pg_notify('mw_' || md5(TG_TABLE_SCHEMA), 'L' || NEW.size::text);
  END IF;
  RETURN NULL;
END $fn$;
CREATE TRIGGER log_head_feed AFTER UPDATE OF size ON log_head
  FOR EACH ROW EXECUTE FUNCTION memwarden_feed_log();

CREATE FUNCTION memwarden_feed_entry() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE ch text := 'mw_' || md5(TG_TABLE_SCHEMA);
BEGIN
  IF NEW.deleted AND NOT OLD.deleted THEN
    PERFORM pg_notify(ch, 'D' || NEW.id);
  END IF;
  IF NEW.superseded_by IS NOT NULL AND OLD.superseded_by IS NULL THEN
    PERFORM pg_notify(ch, 'S' || NEW.id);
  END IF;
  IF NEW.expires_ns IS DISTINCT FROM OLD.expires_ns THEN
    PERFORM pg_notify(ch, 'X' || coalesce(NEW.expires_ns::text, '') || ':' || NEW.id);
  END IF;
  RETURN NULL;
END $fn$;
CREATE TRIGGER entries_feed AFTER UPDATE OF deleted, superseded_by, expires_ns ON entries
  FOR EACH ROW EXECUTE FUNCTION memwarden_feed_entry();
`;

export const MIGRATION_20 = {
  version: 20,
  name: 'change feed (log head and entry state notes)',
  sql: SQL,
};
