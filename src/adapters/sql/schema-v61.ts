/**
 * @module adapters/sql/schema-v61
 * Migration 61 (ADR 0079): the OPERATOR rows in leaf order, for a principal's partition scan
 * (`./entries.ts` `scanPrincipalSql`): its second branch — the shared rows every principal sees —
 * walks this partial index instead of every row's `entries_leaf_idx` entry. The first branch
 * (the principal's own rows) uses `entries_owner_idx (owner, leaf_index)` of migration 1.
 */
const SQL = `
CREATE INDEX entries_operator_leaf_idx ON entries (leaf_index) WHERE tier = 'OPERATOR';
`;

/** A `Migration` of ./schema.ts (typed there: importing the type back would be a cycle). */
export const MIGRATION_61 = {
  version: 61,
  name: 'OPERATOR rows in leaf order (partition scans)',
  sql: SQL,
} as const;
