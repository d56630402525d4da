/**
 * @module adapters/sql/entries
 * Entry queries. Visibility is decided by row-level security, not here: under an agent scope
 * the same `SELECT` returns only that principal's rows plus global OPERATOR rows, and an
 * `INSERT` of another owner's or an OPERATOR row is refused by the database.
 */
import { MemwardenError } from '../../core/errors.js';
import { type SourceTier, SourceTiers } from '../../core/trust.js';
import type { StoredEntry } from '../../ports/storage.js';
import { bytesIn, bytesOut, numOut, strOut } from './codec.js';
import type { Queryable } from './queryable.js';

const COLS = 'id, owner, tier, bytes, leaf_index, mac_kid, mac';

/** Insert once; an existing id is a unique violation → STORAGE_CONFLICT. */
export async function putEntry(q: Queryable, e: StoredEntry): Promise<void> {
  await q.query(`INSERT INTO entries (${COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    e.id,
    e.owner,
    e.tier,
    bytesIn(e.bytes),
    e.leafIndex,
    e.macKid,
    bytesIn(e.mac),
  ]);
}

function entryOut(r: Record<string, unknown>): StoredEntry {
  const tier = strOut(r.tier);
  if (!(SourceTiers as readonly string[]).includes(tier))
    throw new MemwardenError('STORAGE_FAILED', 'bad tier');
  return {
    id: strOut(r.id),
    owner: strOut(r.owner),
    tier: tier as SourceTier,
    bytes: bytesOut(r.bytes),
    leafIndex: numOut(r.leaf_index),
    macKid: strOut(r.mac_kid),
    mac: bytesOut(r.mac),
  };
}

export async function getEntry(q: Queryable, id: string): Promise<StoredEntry | undefined> {
  const { rows } = await q.query(`SELECT ${COLS} FROM entries WHERE id = $1`, [id]);
  return rows.length === 0 ? undefined : entryOut(rows[0]!);
}

/** Entries in log order after `afterLeafIndex`; `LIMIT NULL` means no limit in PostgreSQL. */
export async function listEntries(
  q: Queryable,
  opts?: { afterLeafIndex?: number; limit?: number },
): Promise<StoredEntry[]> {
  const { rows } = await q.query(
    `SELECT ${COLS} FROM entries WHERE leaf_index > $1 ORDER BY leaf_index, id LIMIT $2`,
    [opts?.afterLeafIndex ?? -1, opts?.limit ?? null],
  );
  return rows.map(entryOut);
}
