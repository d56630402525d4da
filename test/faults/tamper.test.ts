/**
 * Tampering at rest, swept over every column of every security-relevant table, on the embedded
 * store (PGlite, altered as its superuser) and on the PostgreSQL server (altered as the table
 * owner with row-level security off for the statement; a fresh schema). See ./tamper-harness.ts.
 * Ends with `memwarden audit` through the built binary on a clean and on a tampered store.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { type Raw, type SweepResult, buildFixture, openCore, sweep } from './tamper-harness.js';

const BIN = resolve('dist/cli/main.js');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const env = { ...process.env, MEMWARDEN_EMBEDDER: 'deterministic', MEMWARDEN_DATABASE_URL: '' };

const COLUMNS_SQL = `SELECT c.relname AS "table", a.attname AS "column", format_type(a.atttypid, a.atttypmod) AS "type"
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
  ORDER BY 1, a.attnum`;

function audit(args: string[]): {
  code: number;
  json: { ok: boolean; findings: { code: string; subject: string }[] } | undefined;
  err: string;
} {
  const r = spawnSync(process.execPath, [BIN, 'audit', '--json', ...args], {
    env,
    encoding: 'utf8',
  });
  let json;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { code: r.status ?? -1, json, err: r.stderr };
}

function report(name: string, r: SweepResult, ms: number): void {
  const lines = r.rows.map(
    (x) =>
      `  ${x.column.padEnd(28)} ${x.what.padEnd(60)} ${x.open ? 'open-refused' : `read:${x.read ? 'yes' : 'no '} audit:${x.audit}`}`,
  );
  const ex = r.exempt.map((x) => `  ${x.column.padEnd(28)} ${x.kind}: ${x.reason}`);
  process.stdout.write(
    `\ntamper sweep (${name}): ${r.rows.length} alterations detected, ${r.exempt.length} exempt columns, ${ms} ms\n${lines.join('\n')}\n${ex.join('\n')}\n`,
  );
}

describe('tampering at rest: embedded store (PGlite)', () => {
  it('detects every alteration at read or audit time, with no false alarm', async () => {
    const t0 = Date.now();
    const dir = mkdtempSync(join(tmpdir(), 'mw-tamper-'));
    dirs.push(dir);
    let db = await PGlite.create({ dataDir: join(dir, 'pgdata'), extensions: { vector } });
    const storage = await PgliteBackend.open({ instance: db });
    const raw: Raw = {
      select: async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows,
      tamper: async (_t, sql, params) => {
        await db.query(sql, params);
      },
      columns: async () =>
        (await db.query<{ table: string; column: string; type: string }>(COLUMNS_SQL)).rows,
    };
    const fx = await buildFixture(storage, dir);
    const r = await sweep(raw, fx, () => openCore(storage, dir), storage, 'pglite');
    report('PGlite', r, Date.now() - t0);
    await storage.close();
    await db.close();

    // `memwarden audit` through the binary: clean, then tampered, then refused while locked.
    const clean = audit(['--data', dir]);
    expect(clean.err).toBe('');
    expect(clean.code).toBe(0);
    expect(clean.json?.ok).toBe(true);
    db = await PGlite.create({ dataDir: join(dir, 'pgdata'), extensions: { vector } });
    await db.query("UPDATE entries SET content = 'tampered' WHERE id = $1", [fx.e.a1]);
    await db.close();
    const bad = audit(['--data', dir]);
    expect(bad.code).toBe(1);
    expect(bad.json?.findings).toEqual([
      expect.objectContaining({ code: 'ENTRY_INVALID', subject: fx.e.a1 }),
    ]);
    writeFileSync(join(dir, 'LOCK'), String(process.pid));
    const locked = audit(['--data', dir]);
    expect(locked.code).toBe(2);
    expect(locked.err).toMatch(/^error STORAGE_FAILED: .*in use/);
    rmSync(join(dir, 'LOCK'));
  }, 600_000);
});

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
describe.runIf(url !== undefined)('tampering at rest: PostgreSQL server', () => {
  it('detects every alteration at read or audit time, with no false alarm', async () => {
    const t0 = Date.now();
    const dir = mkdtempSync(join(tmpdir(), 'mw-tamper-pg-'));
    dirs.push(dir);
    const schema = `faults_tamper_${process.pid}_${Date.now() % 1e6}`;
    const storage = await PgBackend.open({ connectionString: url as string, schema });
    const client = new pg.Client({
      connectionString: url,
      options: `-c search_path=${schema},public`,
    });
    await client.connect();
    try {
      const raw: Raw = {
        // Reads as the system role (its policies see every row).
        select: async (sql, params) => {
          await client.query('BEGIN');
          try {
            await client.query('SET LOCAL ROLE memwarden_system');
            return (await client.query(sql, params)).rows as Record<string, unknown>[];
          } finally {
            await client.query('COMMIT');
          }
        },
        // As the owner: FORCE ROW LEVEL SECURITY would hide tenant rows even from it, so it is
        // lifted for this one statement and put back, all in one transaction.
        tamper: async (table, sql, params) => {
          await client.query('BEGIN');
          try {
            const f = await client.query(
              'SELECT relforcerowsecurity AS f FROM pg_class WHERE oid = $1::regclass',
              [table],
            );
            const forced = f.rows[0]?.f === true;
            if (forced) await client.query(`ALTER TABLE ${table} NO FORCE ROW LEVEL SECURITY`);
            await client.query(sql, params);
            if (forced) await client.query(`ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`);
            await client.query('COMMIT');
          } catch (e) {
            await client.query('ROLLBACK');
            throw e;
          }
        },
        columns: async () =>
          (await client.query(COLUMNS_SQL)).rows as {
            table: string;
            column: string;
            type: string;
          }[],
      };
      const fx = await buildFixture(storage, dir);
      const r = await sweep(raw, fx, () => openCore(storage, dir), storage, 'postgres');
      report('PostgreSQL', r, Date.now() - t0);
      await storage.close();

      const pgUrl = `${url}${(url as string).includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
      const clean = audit(['--data', dir, '--postgres', pgUrl]);
      expect(clean.err).toBe('');
      expect(clean.code).toBe(0);
      await raw.tamper('entries', "UPDATE entries SET content = 'tampered' WHERE id = $1", [
        fx.e.a1,
      ]);
      const bad = audit(['--data', dir, '--postgres', pgUrl]);
      expect(bad.code).toBe(1);
      expect(bad.json?.findings).toEqual([
        expect.objectContaining({ code: 'ENTRY_INVALID', subject: fx.e.a1 }),
      ]);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await client.end();
    }
  }, 600_000);
});
