/**
 * Database-enforced isolation (article Pattern 4) in both Postgres backends: the same cases run
 * against PGlite always and against the PostgreSQL server when MEMWARDEN_TEST_DATABASE_URL is
 * set (pg-backend.test.ts fails CI when it is not). Raw queries go around the backend to prove
 * the database — not memwarden's code — is what refuses.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMemwardenError } from '../../src/core/errors.js';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import type { StorageBackend, StoredEntry } from '../../src/ports/storage.js';

/** What each backend under test provides. */
interface Harness {
  backend: StorageBackend & { asPrincipal(id: string): StorageBackend };
  /** Run statements in one transaction as the connecting role (rolled back); returns the last result's rows. */
  raw(statements: readonly (string | [string, unknown[]])[]): Promise<Record<string, unknown>[]>;
  /** True when the connecting role is a superuser (PGlite): its own raw reads bypass RLS. */
  ownerIsSuperuser: boolean;
  /** The backend stores embeddings in `embedding_vec` (pgvector). */
  vector: boolean;
  close(): Promise<void>;
}

const bytes = (n: number): Uint8Array => new Uint8Array([n, n, n]);
const entry = (
  id: string,
  owner: string,
  tier: StoredEntry['tier'],
  leafIndex: number,
): StoredEntry => ({
  id,
  owner,
  tier,
  bytes: bytes(leafIndex),
  leafIndex,
  macKid: 'm',
  mac: bytes(9),
});
const leaf = (index: number, entryId: string) => ({
  index,
  data: bytes(index),
  hash: new Uint8Array(32).fill(index),
  entryId,
  kind: 'entry' as const,
});

async function denied(p: Promise<unknown>): Promise<void> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(isMemwardenError(e, 'STORAGE_FAILED')).toBe(true);
  expect((e as { details?: { reason?: string } }).details?.reason).toBe('denied');
}

async function rawError(
  h: Harness,
  statements: readonly (string | [string, unknown[]])[],
): Promise<string | undefined> {
  try {
    await h.raw(statements);
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
}

function rlsCases(name: string, make: () => Promise<Harness>): void {
  describe(`row-level security: ${name}`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await make();
      const sys = h.backend;
      // Seed as the system scope (deployment tooling): one row per tenant plus operator memory.
      await sys.putEntry(entry('op-1', 'operator:deploy', 'OPERATOR', 0));
      await h.backend.asPrincipal('user:a').transaction(async (tx) => {
        await tx.appendLeaves(await tx.logSize(), [leaf(await tx.logSize(), 'a-1')], []);
        await tx.putEntry(entry('a-1', 'user:a', 'USER_OBSERVED', 1));
      });
      const b = h.backend.asPrincipal('user:b');
      await b.appendLeaves(await b.logSize(), [leaf(await b.logSize(), 'b-1')], []);
      await b.putEntry(entry('b-1', 'user:b', 'USER_VERIFIED', 2));
    });
    afterAll(async () => {
      await h?.close();
    });

    it('principal B never sees A’s entries, by list or by id', async () => {
      const b = h.backend.asPrincipal('user:b');
      expect((await b.listEntries()).map((e) => e.id)).toEqual(['op-1', 'b-1']);
      expect(await b.getEntry('a-1')).toBeUndefined();
      const a = h.backend.asPrincipal('user:a');
      expect((await a.listEntries()).map((e) => e.id)).toEqual(['op-1', 'a-1']);
      expect(await a.getEntry('b-1')).toBeUndefined();
    });

    it('log leaves are owner-scoped for principals and global for the system', async () => {
      const a = h.backend.asPrincipal('user:a');
      const b = h.backend.asPrincipal('user:b');
      expect(await b.findLeafIndex('a-1')).toBeUndefined();
      expect(await a.findLeafIndex('a-1')).toBe(0);
      expect(await b.getLeaf(0)).toBeUndefined();
      expect((await h.backend.getLeaves(0, 10)).map((l) => l.entryId)).toEqual(['a-1', 'b-1']);
      expect(await b.logSize()).toBe(2); // the head is global: sequencing needs it
    });

    it('OPERATOR rows are visible to every principal and to the system', async () => {
      for (const p of ['user:a', 'user:b', 'user:nobody']) {
        expect((await h.backend.asPrincipal(p).getEntry('op-1'))?.tier).toBe('OPERATOR');
      }
      expect((await h.backend.listEntries()).map((e) => e.id)).toEqual(['op-1', 'a-1', 'b-1']);
    });

    it('an agent scope cannot write OPERATOR memory or another owner’s rows', async () => {
      const a = h.backend.asPrincipal('user:a');
      await denied(a.putEntry(entry('a-op', 'user:a', 'OPERATOR', 7)));
      await denied(a.putEntry(entry('a-as-b', 'user:b', 'USER_OBSERVED', 7)));
      // Staged in a transaction, the refusal at commit leaves nothing behind.
      await denied(
        a.transaction(async (tx) => {
          await tx.putEntry(entry('a-2', 'user:a', 'USER_OBSERVED', 8));
          await tx.putEntry(entry('a-op2', 'user:a', 'OPERATOR', 9));
        }),
      );
      expect(await h.backend.getEntry('a-2')).toBeUndefined();
      expect(await h.backend.getEntry('a-op')).toBeUndefined();
    });

    it('registry and checkpoints are written by the system scope only', async () => {
      const a = h.backend.asPrincipal('user:a');
      const k = {
        kid: 'ka',
        principalId: 'user:a',
        alg: 'ed25519' as const,
        publicKey: bytes(1),
        validFromNs: 1n,
      };
      await denied(
        a.insertPrincipal({ id: 'user:a', kind: 'user', name: 'a', createdAtNs: 1n }, k),
      );
      await denied(a.putCheckpoint({ size: 1, root: bytes(1), note: 'n', createdAtNs: 1n }));
      expect(await h.backend.getPrincipal('user:a')).toBeUndefined();
    });

    it('a scoped view cannot be switched to another principal', () => {
      const a = h.backend.asPrincipal('user:a') as StorageBackend & {
        asPrincipal(id: string): StorageBackend;
      };
      expect(() => a.asPrincipal('user:b')).toThrow(
        expect.objectContaining({ code: 'INPUT_INVALID' }),
      );
      expect(() => h.backend.asPrincipal('')).toThrow(
        expect.objectContaining({ code: 'INPUT_INVALID' }),
      );
    });

    it('a raw query as the app role with no principal set returns nothing (fail closed)', async () => {
      for (const t of [
        'entries',
        'log_leaves',
        'review_queue',
        'audit_events',
        'lineage_edges',
        'write_quotas',
      ]) {
        const rows = await h.raw([
          'SET LOCAL ROLE memwarden_app',
          `SELECT count(*)::int AS n FROM ${t}`,
        ]);
        expect(rows[0]?.n, t).toBe(0);
      }
      // An empty principal is "unset" too (set_config leaves '' behind after a local setting).
      const rows = await h.raw([
        'SET LOCAL ROLE memwarden_app',
        "SELECT set_config('app.principal', '', true)",
        'SELECT count(*)::int AS n FROM entries',
      ]);
      expect(rows[0]?.n).toBe(0);
    });

    it('a principal set in one transaction does not survive into the next on the connection', async () => {
      await h.backend.asPrincipal('user:a').listEntries();
      const rows = await h.raw([
        'SET LOCAL ROLE memwarden_app',
        'SELECT count(*)::int AS n FROM entries',
      ]);
      expect(rows[0]?.n).toBe(0);
    });

    it('the app role cannot turn row security off or bypass it', async () => {
      const asApp: [string, unknown[]] = [
        "SELECT set_config('app.principal', $1, true)",
        ['user:b'],
      ];
      expect(
        await rawError(h, [
          'SET LOCAL ROLE memwarden_app',
          asApp,
          'SET LOCAL row_security = off',
          'SELECT * FROM entries',
        ]),
      ).toBe('42501');
      expect(
        await rawError(h, [
          'SET LOCAL ROLE memwarden_app',
          'ALTER TABLE entries DISABLE ROW LEVEL SECURITY',
        ]),
      ).toBe('42501');
      expect(
        await rawError(h, [
          'SET LOCAL ROLE memwarden_app',
          'ALTER TABLE entries NO FORCE ROW LEVEL SECURITY',
        ]),
      ).toBe('42501');
      expect(
        await rawError(h, [
          'SET LOCAL ROLE memwarden_app',
          'DROP POLICY entries_app_read ON entries',
        ]),
      ).toBe('42501');
      expect(
        await rawError(h, [
          'SET LOCAL ROLE memwarden_app',
          "UPDATE entries SET bytes = '\\x00'", // bytes are never updatable, by anyone
        ]),
      ).toBe('42501');
      const roles = await h.raw([
        `SELECT r.rolname, r.rolsuper, r.rolbypassrls, r.rolcanlogin,
                pg_has_role(r.oid, c.relowner, 'USAGE') AS owns
           FROM pg_roles r, pg_class c
          WHERE r.rolname IN ('memwarden_app', 'memwarden_system') AND c.oid = 'entries'::regclass
          ORDER BY r.rolname`,
      ]);
      expect(roles).toEqual([
        {
          rolname: 'memwarden_app',
          rolsuper: false,
          rolbypassrls: false,
          rolcanlogin: false,
          owns: false,
        },
        {
          rolname: 'memwarden_system',
          rolsuper: false,
          rolbypassrls: false,
          rolcanlogin: false,
          owns: false,
        },
      ]);
      const rls = await h.raw([
        "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE oid = 'entries'::regclass",
      ]);
      expect(rls).toEqual([{ relrowsecurity: true, relforcerowsecurity: true }]);
    });

    it('the owner role itself, outside any wrapper, sees no tenant rows (non-superuser owner)', async () => {
      const rows = await h.raw(['SELECT count(*)::int AS n FROM entries']);
      // PGlite's only user is a superuser, which PostgreSQL never subjects to RLS; that is why
      // every PGlite query switches to a non-superuser role first.
      expect(rows[0]?.n).toBe(h.ownerIsSuperuser ? 3 : 0);
    });

    it('lexical matches (migration 60) come from the caller’s scope only, chosen by the transaction', async () => {
      const text = (
        id: string,
        owner: string,
        tier: StoredEntry['tier'],
        li: number,
        c: string,
      ) => ({
        ...entry(id, owner, tier, li),
        content: c,
        embedding: new Float32Array(384).fill(0.05),
        lexLen: c.split(' ').length,
      });
      await h.backend.putEntry(text('lx-op', 'operator:deploy', 'OPERATOR', 40, 'zephyr policy'));
      const a = h.backend.asPrincipal('user:a');
      const b = h.backend.asPrincipal('user:b');
      await a.putEntry(text('lx-a1', 'user:a', 'USER_OBSERVED', 41, 'zephyr apple zephyr'));
      await a.putEntry(text('lx-a2', 'user:a', 'USER_OBSERVED', 42, 'zephyr pear'));
      await a.putEntry(text('lx-a3', 'user:a', 'USER_OBSERVED', 43, 'plain words only'));
      await b.putEntry(text('lx-b1', 'user:b', 'USER_OBSERVED', 44, 'zephyr secret of b'));
      await a.markSuperseded('lx-a2', 'lx-a1');
      const match = (principal: string) => [
        'SET LOCAL ROLE memwarden_app',
        `SELECT set_config('app.principal', '${principal}', true)`,
        "SELECT id FROM memwarden_lexical_match(to_tsquery('simple', 'zephyr'), false) ORDER BY id",
      ];
      expect((await h.raw(match('user:a'))).map((r) => r.id)).toEqual(['lx-a1', 'lx-a2', 'lx-op']);
      expect((await h.raw(match('user:b'))).map((r) => r.id)).toEqual(['lx-b1', 'lx-op']);
      expect(await h.raw(match(''))).toEqual([]); // no principal: nothing, as the policy
      // The search returns the scope's rows only, and B's match is no candidate of A's.
      const hits = await a.searchEntries({ text: 'zephyr secret', limit: 10, nowNs: 1n });
      expect(hits.map((x) => x.entry.id)).toEqual(['lx-a1', 'lx-op']);
      // Statistics: the counters (and GIN df) equal the scan of the scope, for each principal.
      for (const p of ['user:a', 'user:b', 'user:nobody']) {
        const scope = [
          'SET LOCAL ROLE memwarden_app',
          `SELECT set_config('app.principal', '${p}', true)`,
        ];
        const scan = await h.raw([
          ...scope,
          `SELECT count(*)::int AS n, avg(lex_len)::float8 AS avg FROM entries
            WHERE NOT deleted AND superseded_by IS NULL AND embedding${h.vector ? '_vec' : ''} IS NOT NULL`,
        ]);
        const kept = await h.raw([
          ...scope,
          `SELECT coalesce(sum(n), 0)::int AS n, CASE WHEN coalesce(sum(len_n), 0) = 0 THEN NULL
                  ELSE (sum(len_sum)::numeric / sum(len_n)::numeric)::float8 END AS avg
             FROM entry_lex_stats`,
        ]);
        expect(kept).toEqual(scan);
      }
      // The app role can read, never write, the counters; nobody keeps the definer role.
      expect(
        await rawError(h, [
          'SET LOCAL ROLE memwarden_app',
          "SELECT set_config('app.principal', 'user:a', true)",
          'UPDATE entry_lex_stats SET n = n + 1',
        ]),
      ).toBe('42501');
      const role = await h.raw([
        `SELECT rolsuper, rolbypassrls, rolcanlogin,
                pg_has_role(current_user, 'memwarden_lexical', 'MEMBER') AS member
           FROM pg_roles WHERE rolname = 'memwarden_lexical'`,
      ]);
      expect(role).toEqual([
        { rolsuper: false, rolbypassrls: false, rolcanlogin: false, member: h.ownerIsSuperuser },
      ]);
      // Only the app role may call it (the system scope may not), and with no principal set it
      // returns nothing — also to the owner login outside any wrapper.
      expect(
        await rawError(h, [
          'SET LOCAL ROLE memwarden_system',
          "SELECT * FROM memwarden_lexical_match(to_tsquery('simple', 'zephyr'), false)",
        ]),
      ).toBe('42501');
      if (!h.ownerIsSuperuser) {
        expect(
          await h.raw([
            "SELECT id FROM memwarden_lexical_match(to_tsquery('simple', 'zephyr'), false)",
          ]),
        ).toEqual([]);
      }
      await a.markDeleted('lx-a1');
      await h.backend.markDeleted('lx-b1');
    });

    it('no scope can drive the counter trigger from a table of its own (migration 60)', async () => {
      // A temporary table with the counted columns and the counting trigger attached: were the
      // trigger function callable, its definer role would write another tenant's counters (or
      // wipe them all on TRUNCATE) — ranking inputs of a principal the caller cannot see.
      for (const role of ['memwarden_app', 'memwarden_system']) {
        const emb = h.vector ? 'embedding_vec' : 'embedding';
        const code = await rawError(h, [
          `SET LOCAL ROLE ${role}`,
          "SELECT set_config('app.principal', 'user:a', true)",
          `CREATE TEMP TABLE lex_probe (owner text, tier text, deleted boolean,
             superseded_by text, ${emb} text, lex_len int) ON COMMIT DROP`,
          `CREATE TRIGGER lex_probe_ins AFTER INSERT ON lex_probe REFERENCING NEW TABLE AS lex_new
             FOR EACH STATEMENT EXECUTE FUNCTION memwarden_lex_count('${emb}')`,
          "INSERT INTO lex_probe VALUES ('user:b', 'USER_OBSERVED', false, NULL, 'x', 1000000)",
        ]);
        expect(code).toBe('42501');
      }
      // The counters of user:b are unchanged (one counted row: lx-b1 was deleted above).
      const b = await h.raw([
        'SET LOCAL ROLE memwarden_app',
        "SELECT set_config('app.principal', 'user:b', true)",
        'SELECT coalesce(sum(len_sum), 0)::int AS s FROM entry_lex_stats WHERE NOT operator',
      ]);
      expect(Number(b[0]?.s)).toBeLessThan(1000000);
    });
  });
}

rlsCases('PGlite', async () => {
  const db = await PGlite.create({ extensions: { vector } });
  const backend = await PgliteBackend.open({ instance: db });
  return {
    backend,
    ownerIsSuperuser: true,
    vector: backend.hasVector,
    async raw(statements) {
      let rows: Record<string, unknown>[] = [];
      await db.transaction(async (tx) => {
        for (const s of statements) {
          const r = typeof s === 'string' ? await tx.query(s) : await tx.query(s[0], s[1]);
          rows = r.rows as Record<string, unknown>[];
        }
        await tx.rollback();
      });
      return rows;
    },
    async close() {
      await backend.close();
      await db.close();
    },
  };
});

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
if (url !== undefined) {
  rlsCases('PostgreSQL server', async () => {
    const schema = `mwrls_${process.pid}_${Date.now().toString(36)}`;
    const backend = await PgBackend.open({ connectionString: url, schema });
    const client = new pg.Client({
      connectionString: url,
      options: `-c search_path=${schema},public`,
    });
    await client.connect();
    return {
      backend,
      ownerIsSuperuser: false,
      vector: backend.hasVector,
      async raw(statements) {
        let rows: Record<string, unknown>[] = [];
        await client.query('BEGIN');
        try {
          for (const s of statements) {
            const r =
              typeof s === 'string' ? await client.query(s) : await client.query(s[0], s[1]);
            rows = r.rows as Record<string, unknown>[];
          }
        } finally {
          await client.query('ROLLBACK');
        }
        return rows;
      },
      async close() {
        await backend.close();
        await client.query(`DROP SCHEMA ${schema} CASCADE`);
        await client.end();
      },
    };
  });
}
