/**
 * PGlite runs no autovacuum: the full-text GIN index's pending list (fastupdate) is merged
 * only when an insert finds it over `gin_pending_list_limit`. The backend bounds it per session
 * (256 kB) so that merge is a few milliseconds, not a ~100 ms hold of the one PGlite session
 * every ~16,000 writes (the default 4 MB). `gin_clean_pending_list` reports how many pending
 * pages it merged: with the bound, never more than 256 kB / 8 kB = 32 (+1 partly filled).
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';

const ROWS = 3_000;
// ~60 distinct words per row: a few hundred KB of pending entries per thousand rows.
const words = (i: number): string =>
  Array.from({ length: 60 }, (_, k) => `w${(i * 61 + k * 7919) % 50_000}`).join(' ');

async function fill(db: PGlite): Promise<number> {
  await db.exec('TRUNCATE entries');
  for (let start = 0; start < ROWS; start += 500) {
    await db.query(
      `INSERT INTO entries (id, owner, tier, bytes, leaf_index, mac_kid, mac, content)
       SELECT 'e' || g, 'p', 'USER_OBSERVED', '\\x00'::bytea, g, 'k', '\\x00'::bytea, ($2::text[])[g - $1 + 1]
       FROM generate_series($1::int, $1::int + 499) g`,
      [start, Array.from({ length: 500 }, (_, k) => words(start + k))],
    );
  }
  const r = await db.query<{ n: number }>(`SELECT gin_clean_pending_list('entries_tsv_idx') AS n`);
  return Number(r.rows[0]?.n);
}

describe('PGlite GIN pending list', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create({ extensions: { vector } });
    await PgliteBackend.open({ instance: db });
  }, 120_000);
  afterAll(async () => {
    await db.close();
  });

  it('stays within the session bound the backend sets', { timeout: 120_000 }, async () => {
    expect(
      (await db.query<{ v: string }>(`SELECT current_setting('gin_pending_list_limit') AS v`))
        .rows[0]?.v,
    ).toBe('256kB');
    expect(await fill(db)).toBeLessThanOrEqual(33);
  });

  it('(control) grows far past it with the default bound', { timeout: 120_000 }, async () => {
    await db.exec('RESET gin_pending_list_limit');
    expect(await fill(db)).toBeGreaterThan(33);
  });
});
