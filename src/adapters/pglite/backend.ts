/**
 * @module adapters/pglite/backend
 * The embedded default backend: PGlite (PostgreSQL in WebAssembly, in-process) with pgvector,
 * running the shared dialect (`../sql/`) — the same migrations, queries and row-level-security
 * policies as the server backend.
 *
 * Isolation: PGlite's only user is the superuser `postgres`, and superusers bypass RLS even when
 * it is forced. So every unit of work is a PGlite transaction that starts with
 * `SET LOCAL ROLE memwarden_system` (the root backend: deployment tooling) or
 * `SET LOCAL ROLE memwarden_app` + `app.principal` (a view from {@link PgliteBackend.asPrincipal}).
 * Neither role is a superuser, owns a table, or has BYPASSRLS, so the policies really apply.
 *
 * Concurrency: PGlite is a single session. Writers are serialised by a mutex; a multi-call
 * `transaction()` stages its writes and commits them in one SQL transaction (see
 * `./staged.js` for why), so it stays invisible to outside readers until it commits.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { MemwardenError } from '../../core/errors.js';
import type {
  KeyRecord,
  LeafRecord,
  NodeRecord,
  PrincipalRecord,
  StorageBackend,
  StoredEntry,
} from '../../ports/storage.js';
import type { KeyPatch } from '../sql/registry.js';
import { normalised } from '../sql/errors.js';
import { type MigrationReport, migrate } from '../sql/migrations.js';
import { headMoved } from '../sql/log.js';
import { type Queryable, type Scope, SYSTEM_SCOPE, principalScope } from '../sql/queryable.js';
import {
  appendLeavesBinary,
  commitPlan,
  enterScopeBinary,
  putEntriesBinary,
  quotaUpsertBinary,
} from './commit-sql.js';
import type { QuotaUpsert } from '../sql/records.js';
import { runBinaryQuery } from './binary-rows.js';
import { SCAN_SQL, decodeScanRows } from './scan.js';
import { checkScan } from '../sql/rank.js';
import type { SqlFeatures } from '../sql/entries.js';
import { SqlView, assertSameScope, checkPrincipalId } from '../sql/view.js';
import {
  COUNT_SQL,
  IndexTracker,
  LIST_INDEXES_SQL,
  type VectorIndexOptions,
  type VectorIndexStatus,
  createIndexSql,
  hasIterativeScan,
  maintainIndex,
} from '../sql/vector-index.js';
import type { PgliteDb, PgliteTx } from './db.js';
import { CommittedHint } from './staged-ext.js';
import { StagedView } from './staged-view.js';
import { type DataOp, quotaMoved } from './staged.js';
import { pipelineTransaction } from './pipeline-tx.js';
import { pipelineMessage, pipelineResults } from './binary-params.js';
import { PgliteWorker } from './worker.js';
import { Mutex } from './mutex.js';

/** The session's GIN pending-list bound (see `open`). */
export const GIN_PENDING_LIST_LIMIT = '256kB';

/** Options for {@link PgliteBackend.open}. */
export interface PgliteBackendOptions {
  /** A local folder for durable storage; omitted → in-memory (lost on close). */
  readonly dataDir?: string;
  /**
   * Use an already created PGlite instead of creating one (e.g. one instance shared by a test
   * file). The backend migrates it but never closes it. Load the `vector` extension on it to
   * get the `vector(384)` column. A {@link PgliteWorker} is accepted too.
   */
  readonly instance?: PgliteDb;
  /**
   * Run PGlite in a worker thread (ADR 0025): PostgreSQL's CPU moves off the calling thread
   * (under load the HTTP server and the database then use two cores). Same data, same
   * semantics; default false. Ignored when `instance` is given.
   */
  readonly worker?: boolean;
  /** With `worker`: called once if the worker thread dies (`PgliteWorkerOptions.onExit`). */
  readonly onWorkerExit?: (e: MemwardenError) => void;
  /**
   * ANN index management (`../sql/vector-index.js`): exact scan below `minRows` (default
   * 10,000) rows with an embedding, an IVFFlat index above, rebuilt as the store doubles.
   */
  readonly vectorIndex?: VectorIndexOptions;
}

/** A Queryable that can also read binary result rows. */
interface PgliteQueryable extends Queryable {
  /** The raw backend messages of `sql` with binary result rows (`./binary-rows.js`). */
  binaryRows(sql: string, params: readonly (string | null)[]): Promise<Uint8Array>;
}

function asQueryable(tx: PgliteTx, db: PgliteDb): PgliteQueryable {
  return {
    // Inside `tx` (PGlite holds its transaction lock for us): the statement joins it.
    binaryRows: (sql, params) => runBinaryQuery(db, sql, params),
    query: async (sql, params) => {
      const r = await tx.query(sql, params === undefined ? undefined : [...params]);
      return { rows: r.rows as Record<string, unknown>[] };
    },
    exec: async (sql) => {
      await tx.exec(sql);
    },
  };
}

interface Shared {
  readonly db: PgliteDb;
  readonly ownsDb: boolean;
  readonly writers: Mutex;
  readonly migration: MigrationReport;
  readonly features: SqlFeatures;
  readonly index: IndexTracker;
  /** pgvector's `vector` type OID in this database (binary array parameters), if installed. */
  readonly vectorOid: number | undefined;
  /** Committed log size and quota counts known to this process (`./staged-ext.js`). */
  readonly known: CommittedHint;
  /** Moves after every write of a principal or key record (`StorageBackend.registryVersion`). */
  registryVersion: number;
  closed: boolean;
}

/** Runs inside the one SQL transaction of a commit: every call joins it. */
class CommitView extends SqlView {
  constructor(
    scope: Scope,
    features: SqlFeatures,
    private readonly q: PgliteQueryable,
    private readonly db: PgliteDb,
    private readonly vectorOid: number | undefined,
  ) {
    super(scope, features);
  }
  protected read<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return fn(this.q);
  }
  /** The quota upsert with binary parameters in one round trip (`./commit-sql.js`). */
  protected override readonly quotaUpsert: QuotaUpsert = (_q, a) => quotaUpsertBinary(this.db, a);
  /**
   * The group-commit path: one INSERT with the rows bound as binary arrays, under this view's
   * scope, so RLS and every constraint apply (`./commit-sql.js`).
   */
  override async putEntries(es: readonly StoredEntry[]): Promise<void> {
    if (this.vectorOid === undefined) return super.putEntries(es);
    await putEntriesBinary(this.db, es, this.vectorOid);
  }
  /** Leaves, nodes and the head move in one round trip with binary parameters (`./commit-sql.js`). */
  override async appendLeaves(
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void> {
    if (leaves.length === 0) return super.appendLeaves(start, leaves, nodes);
    if (!(await appendLeavesBinary(this.db, this.scope, start, leaves, nodes)))
      await headMoved(this.q, start);
  }
  protected write<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return fn(this.q);
  }
  transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    return fn(this);
  }
  async close(): Promise<void> {}
}

/** The PGlite StorageBackend. The object `open` returns acts in the system scope. */
export class PgliteBackend extends SqlView {
  /** PGlite is one process's database (`Memory.open` also locks its data folder): the only writer. */
  readonly exclusive = true;

  private constructor(
    private readonly s: Shared,
    scope: Scope,
  ) {
    super(scope, s.features);
  }

  /** Open (creating and migrating as needed) a PGlite database. */
  static async open(opts: PgliteBackendOptions = {}): Promise<PgliteBackend> {
    const dataDir = opts.dataDir === undefined ? {} : { dataDir: opts.dataDir };
    const db: PgliteDb =
      opts.instance ??
      (await normalised<PgliteDb>(
        opts.worker === true
          ? PgliteWorker.create({
              ...dataDir,
              ...(opts.onWorkerExit === undefined ? {} : { onExit: opts.onWorkerExit }),
            })
          : PGlite.create({ ...dataDir, extensions: { vector } }),
      ));
    const ownerTx = <T>(fn: (q: Queryable) => Promise<T>): Promise<T> =>
      normalised(db.transaction((tx) => fn(asQueryable(tx, db))));
    let migration: MigrationReport;
    try {
      migration = await migrate(ownerTx);
    } catch (e) {
      if (opts.instance === undefined) await db.close();
      throw e;
    }
    // PGlite runs no autovacuum, so the full-text GIN index's pending list (fastupdate) is
    // only merged when an insert finds it over gin_pending_list_limit — with the default 4 MB,
    // one insert every ~16,000 entries held PGlite (and every queued write) for ~100 ms.
    // 256 kB merges the same entries in ~8 ms steps about twice a second under load (ADR 0024).
    await normalised(db.exec(`SET gin_pending_list_limit = '${GIN_PENDING_LIST_LIMIT}'`));
    const index = new IndexTracker(opts.vectorIndex);
    let version: string | undefined;
    let vectorOid: number | undefined;
    if (migration.vector) {
      const { rows } = await ownerTx((q) =>
        q.query(
          "SELECT extversion, 'vector'::regtype::oid::int AS oid FROM pg_extension WHERE extname = 'vector'",
        ),
      );
      version = rows[0] === undefined ? undefined : String(rows[0].extversion);
      vectorOid = rows[0] === undefined ? undefined : Number(rows[0].oid);
    }
    const features: SqlFeatures = hasIterativeScan(version)
      ? { vector: migration.vector, ann: { probes: index.probes } }
      : { vector: migration.vector };
    const shared: Shared = {
      db,
      ownsDb: opts.instance === undefined,
      writers: new Mutex(),
      migration,
      features,
      index,
      vectorOid,
      known: new CommittedHint(),
      registryVersion: 0,
      closed: false,
    };
    const b = new PgliteBackend(shared, SYSTEM_SCOPE);
    // Bring the index up to date with what is stored (a no-op below the threshold).
    if (migration.vector && index.auto) await b.maintainVectorIndex();
    return b;
  }

  /**
   * Exact, not a time bound: every write of this database passes through this process (the
   * data-folder lock) and the key-writing calls below — direct or in a transaction — move it
   * once they have ended.
   */
  get registryVersion(): number {
    return this.s.registryVersion;
  }

  override async insertPrincipal(p: PrincipalRecord, firstKey: KeyRecord): Promise<void> {
    try {
      await super.insertPrincipal(p, firstKey);
    } finally {
      this.s.registryVersion++;
    }
  }

  override async insertKey(k: KeyRecord): Promise<void> {
    try {
      await super.insertKey(k);
    } finally {
      this.s.registryVersion++;
    }
  }

  override async closeKey(kid: string, patch: KeyPatch): Promise<void> {
    try {
      await super.closeKey(kid, patch);
    } finally {
      this.s.registryVersion++;
    }
  }

  /** Whether the pgvector `vector(384)` column is available (`entries.embedding_vec`). */
  get hasVector(): boolean {
    return this.s.migration.vector;
  }

  /**
   * A view whose every query runs as `memwarden_app` with `app.principal = principalId`:
   * row-level security confines it to that principal's rows plus global OPERATOR rows, and
   * refuses its writes of OPERATOR rows or rows owned by anyone else. On a view that is already
   * scoped, only the same principal is accepted.
   */
  asPrincipal(principalId: string): StorageBackend {
    checkPrincipalId(principalId);
    if (this.scope.kind === 'principal') {
      assertSameScope(this.scope, principalId);
      return this;
    }
    return new PgliteBackend(this.s, principalScope(principalId));
  }

  /**
   * Build or rebuild the IVFFlat index if the row count calls for it (see
   * `../sql/vector-index.js`), serialised with writers. Runs automatically after writes cross
   * a threshold (unless `vectorIndex.auto` is false); call it to force a check.
   */
  maintainVectorIndex(): Promise<VectorIndexStatus> {
    if (!this.s.migration.vector)
      return Promise.resolve({ rows: 0, lists: undefined, built: false });
    return this.s.index.run(() => this.s.writers.run(() => this.maintainNow()));
  }

  private maintainNow(): Promise<VectorIndexStatus> {
    const db = this.s.db;
    const system = <T>(fn: (q: Queryable) => Promise<T>): Promise<T> =>
      normalised(
        db.transaction(async (tx) => {
          await enterScopeBinary(db, SYSTEM_SCOPE);
          return fn(asQueryable(tx, db));
        }),
      );
    return maintainIndex(
      {
        count: () => system(async (q) => Number((await q.query(COUNT_SQL)).rows[0]?.n ?? 0)),
        indexes: async () =>
          (await db.query<{ name: string }>(LIST_INDEXES_SQL)).rows.map((r) => r.name),
        // As the table owner (DDL), in one transaction: readers never see the table without an
        // index, and a failed build leaves the old one in place.
        build: (spec, old) =>
          normalised(
            db.transaction(async (tx) => {
              await tx.exec(`SET LOCAL maintenance_work_mem = '256MB'`);
              await tx.exec(createIndexSql(spec, false));
              for (const n of old) await tx.exec(`DROP INDEX IF EXISTS "${n}"`);
              await tx.exec('ANALYZE entries');
            }),
          ),
      },
      this.s.index.minRows,
      this.s.index.kind,
    );
  }

  /** After a commit inserting `n` embedded entries: start a maintenance run when one is due. */
  private inserted(n: number): void {
    if (n > 0 && this.s.migration.vector && this.s.index.inserted(n)) {
      this.maintainVectorIndex().catch((e: unknown) => {
        this.s.index.lastError = e;
      });
    }
  }

  /** A direct write of the log head or quota counts: forget what the hint held (under the mutex). */
  protected override touched(what: 'log' | 'quotas'): void {
    if (what === 'log') this.s.known.logSize = undefined;
    else this.s.known.quotas.clear();
  }

  override async putEntry(e: StoredEntry): Promise<void> {
    await super.putEntry(e);
    this.inserted(e.embedding === undefined ? 0 : 1);
  }

  override async putEntries(es: readonly StoredEntry[]): Promise<void> {
    await super.putEntries(es);
    this.inserted(es.filter((e) => e.embedding !== undefined).length);
  }

  /**
   * Live embedded entries with binary result rows (`./scan.js`): no text vectors to format or
   * parse. Row-level security decides the rows: the SELECT runs in this view's scoped
   * transaction like every other read.
   */
  override async scanEntries(opts: {
    afterLeafIndex?: number;
    limit: number;
  }): Promise<StoredEntry[]> {
    if (!this.features.vector) return super.scanEntries(opts);
    const after = checkScan(opts);
    return this.scoped(async (q) =>
      decodeScanRows(await q.binaryRows(SCAN_SQL, [String(after), String(opts.limit)])),
    );
  }

  /** One scoped PGlite transaction (PGlite queues it behind any other). */
  private scoped<T>(fn: (q: PgliteQueryable) => Promise<T>): Promise<T> {
    if (this.s.closed)
      return Promise.reject(new MemwardenError('STORAGE_FAILED', 'backend is closed'));
    return normalised(
      this.s.db.transaction(async (tx) => {
        await enterScopeBinary(this.s.db, this.scope);
        return fn(asQueryable(tx, this.s.db));
      }),
    );
  }

  protected read<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.scoped(fn);
  }

  protected write<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.s.writers.run(() => this.scoped(fn));
  }

  /**
   * All-or-nothing and serialised against every other writer of this database. Nested calls on
   * the handed-in `tx` join it. Do not call write methods of the outer backend from inside
   * `fn`: they queue behind this transaction (as in every backend).
   */
  transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    return this.s.writers
      .run(async () => {
        const known = this.s.known;
        const staged = new StagedView(
          this,
          this.scope.kind === 'principal' ? this.scope.id : undefined,
          known,
        );
        try {
          const result = await fn(staged);
          const ops = staged.isEmpty ? undefined : staged.dataOps();
          const pipelined = ops !== undefined && (await this.commitPipelined(ops));
          if (!pipelined && !staged.isEmpty)
            await this.scoped((q) =>
              staged.commit(
                new CommitView(this.scope, this.features, q, this.s.db, this.s.vectorOid),
              ),
            );
          staged.publish();
          return { result, embedded: staged.embeddedCount };
        } catch (e) {
          known.clear();
          throw e;
        } finally {
          if (staged.registryTouched) this.s.registryVersion++;
        }
      })
      .then(({ result, embedded }) => {
        this.inserted(embedded);
        return result;
      });
  }

  /**
   * Commit `ops` as one pipelined transaction (ADR 0028); false (nothing done) when they
   * need the statement-by-statement commit. Rolled back: the database's own error if a
   * statement failed, else the first unmet expectation's conflict — the errors the
   * statement-by-statement commit gives.
   */
  private commitPipelined(ops: readonly DataOp[]): Promise<boolean> {
    const oid = this.s.vectorOid;
    if (oid === undefined) return Promise.resolve(false);
    return normalised(
      (async () => {
        // Built inside: a value the statements cannot carry fails as the step-by-step commit's
        // does (e.g. an integer out of range, SQLSTATE 22003).
        const plan = commitPlan(this.scope, ops, oid);
        if (plan === undefined) return false;
        const n = plan.statements.length;
        const out = await pipelineTransaction(
          this.s.db,
          pipelineMessage(plan.statements),
          n,
          plan.expect,
        );
        if (out.committed) return true;
        const results = pipelineResults(out.raw, n); // throws the database's error, if any
        for (const e of plan.expect) {
          if (results[e.statement]!.rows.length === e.rows) continue;
          if (e.headFrom !== undefined) {
            const start = e.headFrom;
            await this.scoped((q) => headMoved(q, start));
          }
          throw quotaMoved();
        }
        throw new MemwardenError(
          'STORAGE_FAILED',
          'a pipelined commit rolled back without a cause',
        );
      })(),
    );
  }

  /**
   * Close the database (root backend only; a principal view shares it and closing the view is
   * a no-op). Waits for queued writers first.
   */
  async close(): Promise<void> {
    if (this.scope.kind !== 'system' || this.s.closed) return;
    await this.s.writers.run(async () => {
      this.s.closed = true;
    });
    if (this.s.ownsDb) await this.s.db.close();
  }
}
