/**
 * A principal's partition scan (the read model's loader, `scanEntries`) on the PostgreSQL server
 * reads that principal's rows (and OPERATOR ones), not every owner's: under row-level security
 * the one-branch keyset query walked `entries_leaf_idx` over all rows and let the policy discard
 * the others' — at 100,000 rows of one owner, each first write of another principal on each
 * process cost ≈ 50–100 ms of server CPU (ADR 0079). Counted with EXPLAIN ANALYZE as the app role.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { scanSql } from '../../src/adapters/sql/entries.js';

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;

/** Rows the plan's scan nodes read: returned plus removed by a filter or an index recheck. */
function rowsRead(node: Record<string, unknown>): number {
  const own =
    String(node['Node Type']).includes('Scan') &&
    !String(node['Node Type']).startsWith('Bitmap Index')
      ? Number(node['Actual Rows'] ?? 0) +
        Number(node['Rows Removed by Filter'] ?? 0) +
        Number(node['Rows Removed by Index Recheck'] ?? 0)
      : 0;
  const kids = (node.Plans as Record<string, unknown>[] | undefined) ?? [];
  return own + kids.reduce((a, k) => a + rowsRead(k), 0);
}

describe.skipIf(url === undefined)('partition scan on the PostgreSQL server', () => {
  const schema = `mwscan_${process.pid}_${Date.now().toString(36)}`;
  let backend: PgBackend;
  let client: pg.Client;
  beforeAll(async () => {
    backend = await PgBackend.open({ connectionString: url as string, schema });
    client = new pg.Client({
      connectionString: url as string,
      options: `-c search_path=${schema},public`,
    });
    await client.connect();
    const emb = backend.hasVector ? 'embedding_vec' : 'embedding';
    const vec = backend.hasVector
      ? `('[' || array_to_string(array_fill(0.1::real, ARRAY[384]), ',') || ']')::vector`
      : 'array_fill(0.1::real, ARRAY[384])';
    await client.query('BEGIN');
    await client.query("SELECT set_config('role', 'memwarden_system', true)");
    // 4,000 rows of a large principal, then 5 of a small one and 2 OPERATOR rows, interleaved last.
    await client.query(
      `INSERT INTO entries (id, owner, tier, bytes, leaf_index, mac_kid, mac, deleted, ${emb})
       SELECT 'big-' || i, 'user:big', 'USER_OBSERVED', '\\x00', i, 'k', '\\x00', false, ${vec}
         FROM generate_series(0, 3999) i`,
    );
    await client.query(
      `INSERT INTO entries (id, owner, tier, bytes, leaf_index, mac_kid, mac, deleted, ${emb})
       SELECT CASE WHEN i % 4 = 3 THEN 'op-' ELSE 'small-' END || i,
              CASE WHEN i % 4 = 3 THEN 'operator:deploy' ELSE 'user:small' END,
              CASE WHEN i % 4 = 3 THEN 'OPERATOR' ELSE 'USER_OBSERVED' END,
              '\\x00', 4000 + i, 'k', '\\x00', false, ${vec}
         FROM generate_series(0, 7) i`,
    );
    await client.query('COMMIT');
    await client.query('ANALYZE entries');
  });
  afterAll(async () => {
    await backend?.close();
    await client?.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => undefined);
    await client?.end();
  });

  it('a small principal’s page reads its own and the OPERATOR rows, not the large one’s', async () => {
    const f = { vector: backend.hasVector };
    await client.query('BEGIN');
    try {
      await client.query(
        "SELECT set_config('role', 'memwarden_app', true), set_config('app.principal', 'user:small', true)",
      );
      const { rows } = await client.query(scanSql(f, true), [-1, 1000]);
      expect(rows.map((r) => r.id)).toEqual([
        'small-0',
        'small-1',
        'small-2',
        'op-3',
        'small-4',
        'small-5',
        'small-6',
        'op-7',
      ]);
      const plan = await client.query(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${scanSql(f, true)}`,
        [-1, 1000],
      );
      const root = (plan.rows[0]['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan;
      expect(rowsRead(root)).toBeLessThan(100);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('pages of the large principal and of the system scope are the same rows as before', async () => {
    const f = { vector: backend.hasVector };
    const view = backend.asPrincipal('user:big');
    const big = await view.scanEntries!({ afterLeafIndex: 3990, limit: 20 });
    expect(big.map((e) => e.id)).toEqual([
      ...Array.from({ length: 9 }, (_, i) => `big-${3991 + i}`),
      'op-3',
      'op-7',
    ]);
    const all = await backend.scanEntries!({ afterLeafIndex: 3998, limit: 4 });
    expect(all.map((e) => e.id)).toEqual(['big-3999', 'small-0', 'small-1', 'small-2']);
    expect(scanSql(f, false)).not.toContain('UNION');
  });
});
