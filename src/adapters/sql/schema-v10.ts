/**
 * @module adapters/sql/schema-v10
 * Migration 10 (issue 17): signed registry statements in the log and tamper-evident review items.
 *
 * - `log_leaves.kind` admits `registry`: principal registrations, key rotations and revocations
 *   are signed statements appended to the log (ADR 0033). Partial indices on the registry and
 *   tombstone leaves let the ledger read those without scanning every leaf.
 * - `review_queue` gains `mac_kid` / `mac`: the host's MAC over the held payload and the
 *   decision state (ADR 0034). Items held before this migration have none.
 */
const SQL = `
ALTER TABLE log_leaves DROP CONSTRAINT IF EXISTS log_leaves_kind_check;
ALTER TABLE log_leaves ADD CONSTRAINT log_leaves_kind_check
  CHECK (kind IN ('entry', 'tombstone', 'registry'));
CREATE INDEX log_leaves_registry_idx ON log_leaves (idx) WHERE kind = 'registry';
CREATE INDEX log_leaves_tombstone_idx ON log_leaves (idx) WHERE kind = 'tombstone';

ALTER TABLE review_queue ADD COLUMN mac_kid text;
ALTER TABLE review_queue ADD COLUMN mac     bytea;
GRANT UPDATE (mac_kid, mac) ON review_queue TO memwarden_system;
`;

/** Migration 10 (see the module comment). */
export const MIGRATION_10 = {
  version: 10,
  name: 'registry statements in the log, review item MACs',
  sql: SQL,
} as const;
