/**
 * @module adapters/pg/backend
 * The scale-out backend: a PostgreSQL server through `pg`, shared by several memwarden
 * processes. It runs the shared dialect (`../sql/`): the same migrations, queries and
 * row-level-security policies as PGlite.
 *
 * Isolation: the pool connects as the owner login role (which runs migrations and is granted
 * membership in the two NOLOGIN roles). Every unit of work checks out a client, BEGINs, and
 * does `SET LOCAL ROLE memwarden_system` (root backend) or `SET LOCAL ROLE memwarden_app` +
 * `app.principal` (a view from {@link PgBackend.asPrincipal}) before any data query. Both are
 * transaction-local, so a pooled connection never leaks a principal to the next checkout; and
 * because RLS is FORCEd, even a raw query by the owner outside the wrapper sees no tenant rows.
 *
 * Sequencing (ADR 0011): a commit transaction locks the `log_head` row first
 * (`lockLogHead` on the transaction view), so the commits of every process sharing the server
 * queue on the database and each appends at the size it reads under the lock; a stale
 * `start` fails with `STORAGE_CONFLICT` — one log, never a fork.
 */
import pg from 'pg';
import { MemwardenError } from '../../core/errors.js';
import type {
  LeafRecord,
  NodeRecord,
  StorageBackend,
  StoreFeed,
  StoredEntry,
} from '../../ports/storage.js';
import { PgFeed, type PgFeedOptions } from './feed.js';
import { normaliseDbError, normaliseDriverError, normalised } from '../sql/errors.js';
import {
  type MigrationReport,
  type VectorStatus,
  ensureSchema,
  migrate,
} from '../sql/migrations.js';
import {
  ENTER_SCOPE_SQL,
  type Queryable,
  type Scope,
  SYSTEM_SCOPE,
  principalScope,
  scopeParams,
} from '../sql/queryable.js';
import type { SqlFeatures } from '../sql/entries.js';
import { RowVectorCache } from '../sql/row-vectors.js';
import {
  MOVE_HEAD_OR_FAIL_SQL,
  appendStatements,
  checkLeafIndices,
  lockLogHead,
} from '../sql/log.js';
import { putEntriesStatements } from '../sql/entries.js';
import { SqlView, assertSameScope, checkPrincipalId } from '../sql/view.js';
import {
  COUNT_SQL,
  type IndexSpec,
  IndexTracker,
  LIST_INDEXES_SQL,
  type VectorIndexOptions,
  type VectorIndexStatus,
  createIndexSql,
  hasIterativeScan,
  maintainIndex,
} from '../sql/vector-index.js';

/** Session advisory lock key: one process maintains the ANN index at a time. */
const INDEX_LOCK = 0x6d77_6976; // 'mwiv'

/** Options for {@link PgBackend.open}. */
export interface PgBackendOptions {
  /** e.g. `postgres://memwarden:memwarden@127.0.0.1:5432/memwarden_test`. */
  readonly connectionString: string;
  /**
   * Schema to create (if absent) and use via `search_path` (default: the role's default, usually
   * `public`). Tests use a fresh schema per case; roles are cluster-wide and shared.
   */
  readonly schema?: string;
  /** Pool size (default 10). */
  readonly maxConnections?: number;
  /**
   * ANN index management with pgvector (`../sql/vector-index.js`): exact scan below `minRows`
   * (default 10,000) rows with an embedding, an index above — IVFFlat by default (rebuilt as
   * the store doubles; cheap inserts), HNSW with `kind: 'hnsw'` (built once; ~5-8× the insert
   * cost, ADR 0039). Without pgvector, vectors are ranked in-process and this does nothing.
   */
  readonly vectorIndex?: VectorIndexOptions;
  /**
   * Without pgvector (vectors ranked in-process): how many entries' embeddings to keep in
   * memory between searches, by row version (`../sql/row-vectors.js`; default 100,000 ≈ 160 MB
   * at 384 dimensions; 0 = fetch them with every search).
   */
  readonly rankCacheEntries?: number;
  /**
   * The change feed (`./feed.js`, ADR 0037): one more connection, LISTENing for the commits of
   * every process sharing the schema, opened on the first `feed.follow`. Default on; `false`
   * leaves `feed` undefined (nothing in this process then keeps in-process state current).
   */
  readonly feed?: boolean | PgFeedOptions;
  /**
   * Where the feed LISTENs (default `connectionString`): PostgreSQL itself, when
   * `connectionString` goes through a pooler in transaction mode (pgbouncer), where a LISTEN
   * has no session to live in. The same `schema` applies.
   */
  readonly feedConnectionString?: string;
}

/** Await a driver call; whatever it throws is a database error (`normaliseDriverError`). */
async function driver<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw normaliseDriverError(e);
  }
}

/**
 * A transaction's connection, pipelined (`pg`'s pipeline mode: each statement is written to the
 * socket as soon as it is issued, with its own Sync). `send` issues a statement without waiting
 * for its answer; `query` issues one and waits for it AND for everything sent before it, in
 * order, throwing the first failure. So BEGIN, the scope switch and a transaction's first query
 * cost one round trip, and a group commit's appends and inserts travel with its COMMIT.
 *
 * Inside an explicit transaction a failed statement aborts the transaction: every statement
 * after it fails (25P02) and a COMMIT after it rolls back — nothing sent behind a failure can
 * take effect, which is what makes sending ahead of the answers safe.
 */
class Pipe implements Queryable {
  private inflight: Promise<unknown>[] = [];

  constructor(private readonly c: pg.PoolClient) {}

  /** Issue `sql` now; its outcome is checked by the next `query`/`settle` (`onError` maps a failure). */
  send(sql: string, params?: readonly unknown[], onError?: (e: unknown) => unknown): void {
    const p = driver(this.c.query(sql, params === undefined ? undefined : [...params])).catch(
      (e: unknown) => {
        throw onError === undefined ? e : onError(e);
      },
    );
    p.catch(() => undefined); // observed by `settle`
    this.inflight.push(p);
  }

  /** Wait for everything sent so far; the first failure in issue order is thrown. */
  async settle(): Promise<void> {
    const ps = this.inflight;
    this.inflight = [];
    for (const p of ps) await p;
  }

  async query(
    sql: string,
    params?: readonly unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; command?: string }> {
    const p = driver(this.c.query(sql, params === undefined ? undefined : [...params]));
    p.catch(() => undefined);
    await this.settle();
    const r = await p;
    return { rows: r.rows as Record<string, unknown>[], command: r.command };
  }

  async exec(sql: string): Promise<void> {
    await this.query(sql);
  }
}

/**
 * Check out a client and run `fn` in BEGIN … COMMIT, rolling back on any error. BEGIN and the
 * scope switch are sent ahead of `fn`'s first statement (one round trip). A lost connection
 * (the server restarting, a network cut) is `STORAGE_UNAVAILABLE`; the broken client is dropped
 * from the pool and the next checkout reconnects.
 */
async function inTransaction<T>(
  pool: pg.Pool,
  scope: Scope | undefined,
  fn: (q: Pipe) => Promise<T>,
): Promise<T> {
  const client = await driver(pool.connect());
  let broken = false;
  // A checked-out client whose connection dies between queries emits 'error'; unhandled, that
  // would crash the process. Mark it broken instead: its next query fails (coded), and it is
  // dropped from the pool on release.
  const onError = (): void => {
    broken = true;
  };
  client.on('error', onError);
  const q = new Pipe(client);
  try {
    q.send('BEGIN');
    if (scope !== undefined) q.send(ENTER_SCOPE_SQL, scopeParams(scope));
    const result = await fn(q);
    const done = await q.query('COMMIT');
    // Defence in depth: a transaction aborted by a statement whose failure went unseen would
    // answer COMMIT with ROLLBACK — never report that as committed.
    if (done.command !== 'COMMIT')
      throw new MemwardenError('STORAGE_FAILED', `transaction ended with ${done.command ?? '?'}`);
    return result;
  } catch (e) {
    try {
      await q.settle().catch(() => undefined);
      await client.query('ROLLBACK');
    } catch {
      broken = true; // the connection is unusable: drop it from the pool
    }
    throw normaliseDbError(e);
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** Which vector path SQL searches take on this database, and why (`PgBackend.vectorPath`). */
export interface VectorPath {
  /** `pgvector`: the database ranks (`<=>`, ANN index); `in-process`: this process ranks `real[]`. */
  readonly sql: 'pgvector' | 'in-process';
  /** Why (see `VectorStatus`): `installed`, `created`, `not-available`, `not-permitted`, … */
  readonly reason: VectorStatus['reason'];
  /** pgvector's version in this database. */
  readonly version?: string;
  /** The ANN index kind searches use above the threshold (pgvector only). */
  readonly index?: 'hnsw' | 'ivfflat';
  /** Iterative index scans (pgvector ≥ 0.8): a filtered principal still gets `limit` rows. */
  readonly iterativeScan?: boolean;
  /** One sentence for the log and `/healthz`. */
  readonly summary: string;
}

function vectorPathOf(st: VectorStatus, index: IndexTracker, iterative: boolean): VectorPath {
  if (st.vector) {
    const how =
      index.kind === 'hnsw'
        ? `HNSW index (ef_search ${index.efSearch}) from ${index.minRows} rows, exact scan below`
        : `IVFFlat index (probes ${index.probes}) from ${index.minRows} rows, exact scan below`;
    return {
      sql: 'pgvector',
      reason: st.reason,
      ...(st.version === undefined ? {} : { version: st.version }),
      index: index.kind,
      iterativeScan: iterative,
      summary:
        `pgvector ${st.version ?? '?'} (${st.reason === 'created' ? 'created by this role' : 'installed in this database'}): ` +
        `SQL vector search by ${how}${iterative ? ', iterative scans' : ''}`,
    };
  }
  const why: Record<VectorStatus['reason'], string> = {
    installed: '',
    created: '',
    'not-available': 'the server has no pgvector',
    'not-permitted':
      'pgvector is available on the server but not created in this database, and this role may not create it (a superuser runs CREATE EXTENSION vector once)',
    failed: `pgvector could not be used: ${st.detail ?? 'unknown error'}`,
    disabled: 'disabled by the caller',
  };
  return {
    sql: 'in-process',
    reason: st.reason,
    summary: `no pgvector (${why[st.reason]}): SQL vector search ranks real[] in this process`,
  };
}

interface Shared {
  readonly pool: pg.Pool;
  readonly migration: MigrationReport;
  readonly features: SqlFeatures;
  readonly index: IndexTracker;
  readonly feed: PgFeed | undefined;
  closed: boolean;
}

/**
 * Joins one open transaction; each write runs under a savepoint so a failed call changes
 * nothing — except in a group commit (below).
 *
 * Group commit (ADR 0038): once the transaction holds the log head (`lockLogHead`), an append at
 * exactly the head and the entry inserts are SENT without waiting for their answers — leaves,
 * nodes, the head move and the entries then travel together, and with the COMMIT, in one round
 * trip. Their failures are seen at the next statement this transaction waits for (at the latest
 * its COMMIT) and fail the whole transaction: a failed statement aborts it in the database, so
 * nothing sent after it takes effect. The head move is the self-failing form
 * (`MOVE_HEAD_OR_FAIL_SQL`): a head elsewhere than `start` is an error, never a COMMIT of leaves
 * without their head. Every other call (reads, the quota upsert, marks, audits) waits, as before.
 */
class PgTxView extends SqlView {
  private savepoints = 0;
  /** The log size after this transaction's appends, once it holds the head; else undefined. */
  private head: number | undefined;
  constructor(
    scope: Scope,
    features: SqlFeatures,
    private readonly q: Pipe,
  ) {
    super(scope, features);
  }
  protected read<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return normalised(fn(this.q));
  }
  // A failed statement aborts a PostgreSQL transaction; the savepoint keeps the port's
  // "a failed call changes nothing" inside a transaction and lets the caller carry on. The
  // SAVEPOINT goes out with the call's first statement and its RELEASE with the next one.
  protected async write<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    const sp = `mw_sp_${this.savepoints++}`;
    this.q.send(`SAVEPOINT ${sp}`);
    try {
      const r = await fn(this.q);
      await this.q.settle();
      this.q.send(`RELEASE SAVEPOINT ${sp}`);
      return r;
    } catch (e) {
      await this.q.settle().catch(() => undefined);
      await normalised(this.q.query(`ROLLBACK TO SAVEPOINT ${sp}`));
      throw normaliseDbError(e);
    }
  }
  transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    return fn(this);
  }
  /** The log head row lock, held until this transaction ends (ADR 0011). */
  async lockLogHead(): Promise<number> {
    const size = await normalised(lockLogHead(this.q));
    this.head = size;
    return size;
  }
  override async appendLeaves(
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void> {
    if (this.head === undefined || start !== this.head || leaves.length === 0)
      return super.appendLeaves(start, leaves, nodes);
    checkLeafIndices(start, leaves);
    for (const st of appendStatements(this.scope, leaves, nodes)) this.q.send(st.sql, st.params);
    this.q.send(MOVE_HEAD_OR_FAIL_SQL, [leaves.length, start], (e) =>
      (e as { details?: { sqlstate?: string } }).details?.sqlstate === '23514'
        ? new MemwardenError('STORAGE_CONFLICT', `log append at ${start} but the log moved`)
        : e,
    );
    this.head = start + leaves.length;
  }
  async close(): Promise<void> {}
  /** Entries with an embedding inserted in this transaction (index bookkeeping). */
  embedded = 0;
  override async putEntry(e: StoredEntry): Promise<void> {
    await this.putEntries([e]);
  }
  override async putEntries(es: readonly StoredEntry[]): Promise<void> {
    if (this.head === undefined) await super.putEntries(es);
    else {
      // Built (embeddings checked) now, so a bad vector fails this call, not the commit.
      const sts = putEntriesStatements(this.features, es);
      for (const st of sts) this.q.send(st.sql, st.params);
    }
    this.embedded += es.filter((e) => e.embedding !== undefined).length;
  }
}

/** The PostgreSQL StorageBackend. The object `open` returns acts in the system scope. */
export class PgBackend extends SqlView {
  private constructor(
    private readonly s: Shared,
    scope: Scope,
  ) {
    super(scope, s.features);
  }

  /** Connect, migrate (idempotently, safe against concurrent openers) and return the backend. */
  static async open(opts: PgBackendOptions): Promise<PgBackend> {
    const schema = opts.schema;
    if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
      throw new MemwardenError('INPUT_INVALID', 'schema must be a lower-case SQL identifier');
    }
    const clientConfig: pg.ClientConfig = {
      connectionString: opts.connectionString,
      // Extensions (pgvector's type) live in public; our tables in the chosen schema.
      ...(schema === undefined ? {} : { options: `-c search_path=${schema},public` }),
    };
    // Pipeline mode: statements go out as issued (see Pipe); the feed's connection is a plain one.
    const pool = new pg.Pool({ ...clientConfig, max: opts.maxConnections ?? 10, pipeline: true });
    // An idle client's socket error must not crash the process; the next checkout reconnects.
    pool.on('error', () => undefined);
    try {
      const ownerTx = <T>(fn: (q: Queryable) => Promise<T>): Promise<T> =>
        inTransaction(pool, undefined, fn);
      if (schema !== undefined) await ensureSchema(ownerTx, schema);
      const migration = await migrate(ownerTx);
      const index = new IndexTracker(opts.vectorIndex);
      const version = migration.vectorStatus.version;
      // `pg` sends byte arrays as binary parameters: embeddings travel in binary form.
      const cacheEntries = opts.rankCacheEntries ?? 100_000;
      const rowVectors =
        migration.vector || cacheEntries <= 0
          ? {}
          : { rowVectors: new RowVectorCache(cacheEntries) };
      const iterative = migration.vector && hasIterativeScan(version);
      const features: SqlFeatures = iterative
        ? {
            vector: true,
            ann: { kind: index.kind, probes: index.probes, efSearch: index.efSearch },
            binaryParams: true,
          }
        : { vector: migration.vector, binaryParams: true, ...rowVectors };
      const feed =
        opts.feed === false
          ? undefined
          : new PgFeed(
              {
                ...clientConfig,
                ...(opts.feedConnectionString === undefined
                  ? {}
                  : { connectionString: opts.feedConnectionString }),
              },
              features,
              opts.feed === true || opts.feed === undefined ? {} : opts.feed,
            );
      const b = new PgBackend(
        { pool, migration, features, index, feed, closed: false },
        SYSTEM_SCOPE,
      );
      if (migration.vector && index.auto) await b.maintainVectorIndex();
      return b;
    } catch (e) {
      await pool.end();
      throw normaliseDbError(e);
    }
  }

  /** Whether the pgvector `vector(384)` column is available (`entries.embedding_vec`). */
  get hasVector(): boolean {
    return this.s.migration.vector;
  }

  /**
   * The change feed of the schema (root backend only): the commits of every process sharing
   * it, as they happen (ADR 0037).
   */
  get feed(): StoreFeed | undefined {
    return this.scope.kind === 'system' ? this.s.feed : undefined;
  }

  /** Which vector path SQL searches take on this database, and why (logged by `open`). */
  get vectorPath(): VectorPath {
    return vectorPathOf(
      this.s.migration.vectorStatus,
      this.s.index,
      this.features.ann !== undefined,
    );
  }

  /**
   * A view whose every query runs as `memwarden_app` with `app.principal = principalId`;
   * row-level security confines it to that principal's rows plus global OPERATOR rows. On a
   * view that is already scoped, only the same principal is accepted.
   */
  asPrincipal(principalId: string): StorageBackend {
    checkPrincipalId(principalId);
    if (this.scope.kind === 'principal') {
      assertSameScope(this.scope, principalId);
      return this;
    }
    return new PgBackend(this.s, principalScope(principalId));
  }

  /**
   * Build or rebuild the IVFFlat index if the row count calls for it (see
   * `../sql/vector-index.js`). `CREATE INDEX CONCURRENTLY` outside a transaction, so writers
   * and readers carry on meanwhile; a session advisory lock keeps other processes from
   * building at the same time (they skip). Runs automatically after writes cross a threshold.
   */
  maintainVectorIndex(): Promise<VectorIndexStatus> {
    if (!this.s.migration.vector)
      return Promise.resolve({ rows: 0, lists: undefined, built: false });
    return this.s.index.run(() =>
      maintainIndex(
        {
          count: () =>
            this.systemTx(async (q) => Number((await q.query(COUNT_SQL)).rows[0]?.n ?? 0)),
          indexes: () =>
            this.systemTx(async (q) =>
              (await q.query(LIST_INDEXES_SQL)).rows.map((r) => String(r.name)),
            ),
          build: (spec, old) => this.buildIndex(spec, old),
        },
        this.s.index.minRows,
        this.s.index.kind,
      ),
    );
  }

  private systemTx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return inTransaction(this.s.pool, SYSTEM_SCOPE, fn);
  }

  private async buildIndex(spec: IndexSpec, old: readonly string[]): Promise<void> {
    const c = await driver(this.s.pool.connect());
    let broken = false;
    const onError = (): void => {
      broken = true;
    };
    c.on('error', onError);
    try {
      const { rows } = await c.query('SELECT pg_try_advisory_lock($1) AS ok', [INDEX_LOCK]);
      if (rows[0]?.ok !== true) return; // another process is building
      try {
        await c.query(`SET maintenance_work_mem = '256MB'`);
        await c.query(createIndexSql(spec, true));
        for (const n of old) await c.query(`DROP INDEX CONCURRENTLY IF EXISTS "${n}"`);
        await c.query('ANALYZE entries');
      } finally {
        await c.query('RESET maintenance_work_mem');
        await c.query('SELECT pg_advisory_unlock($1)', [INDEX_LOCK]);
      }
    } catch (e) {
      broken = true;
      throw normaliseDriverError(e);
    } finally {
      c.off('error', onError);
      c.release(broken);
    }
  }

  /** After a commit inserting `n` embedded entries: start a maintenance run when one is due. */
  private inserted(n: number): void {
    if (n > 0 && this.s.migration.vector && this.s.index.inserted(n)) {
      this.maintainVectorIndex().catch((e: unknown) => {
        this.s.index.lastError = e;
      });
    }
  }

  override async putEntry(e: StoredEntry): Promise<void> {
    await super.putEntry(e);
    this.inserted(e.embedding === undefined ? 0 : 1);
  }

  override async putEntries(es: readonly StoredEntry[]): Promise<void> {
    await super.putEntries(es);
    this.inserted(es.filter((e) => e.embedding !== undefined).length);
  }

  private scoped<T>(fn: (q: Pipe) => Promise<T>): Promise<T> {
    if (this.s.closed)
      return Promise.reject(new MemwardenError('STORAGE_FAILED', 'backend is closed'));
    return inTransaction(this.s.pool, this.scope, fn);
  }

  protected read<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.scoped(fn);
  }

  protected write<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.scoped(fn);
  }

  /**
   * One database transaction (READ COMMITTED; log appends serialise on the log head row lock).
   * Nested calls on `tx` join it. Reads on the outer backend use another connection and see
   * only committed data.
   */
  transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    let view: PgTxView | undefined;
    return this.scoped((q) => fn((view = new PgTxView(this.scope, this.features, q)))).then((r) => {
      this.inserted(view?.embedded ?? 0);
      return r;
    });
  }

  /** Close the pool (root backend only; closing a principal view is a no-op). */
  async close(): Promise<void> {
    if (this.scope.kind !== 'system' || this.s.closed) return;
    this.s.closed = true;
    await this.s.feed?.close();
    await this.s.pool.end();
  }
}
