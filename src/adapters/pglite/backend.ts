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
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { MemwardenError } from '../../core/errors.js';
import type { StorageBackend } from '../../ports/storage.js';
import { normalised } from '../sql/errors.js';
import { type MigrationReport, migrate } from '../sql/migrations.js';
import {
  type Queryable,
  type Scope,
  SYSTEM_SCOPE,
  enterScope,
  principalScope,
} from '../sql/queryable.js';
import type { SqlFeatures } from '../sql/entries.js';
import { SqlView, assertSameScope, checkPrincipalId } from '../sql/view.js';
import { StagedView } from './staged-view.js';

/** Options for {@link PgliteBackend.open}. */
export interface PgliteBackendOptions {
  /** A local folder for durable storage; omitted → in-memory (lost on close). */
  readonly dataDir?: string;
  /**
   * Use an already created PGlite instead of creating one (e.g. one instance shared by a test
   * file). The backend migrates it but never closes it. Load the `vector` extension on it to
   * get the `vector(384)` column.
   */
  readonly instance?: PGlite;
}

/** A promise-chain mutex: one holder at a time, in arrival order, surviving rejections. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.tail.then(fn, fn);
    this.tail = p.catch(() => undefined);
    return p;
  }
}

function asQueryable(tx: Transaction): Queryable {
  return {
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
  readonly db: PGlite;
  readonly ownsDb: boolean;
  readonly writers: Mutex;
  readonly migration: MigrationReport;
  closed: boolean;
}

/** Runs inside the one SQL transaction of a commit: every call joins it. */
class CommitView extends SqlView {
  constructor(
    scope: Scope,
    features: SqlFeatures,
    private readonly q: Queryable,
  ) {
    super(scope, features);
  }
  protected read<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    return fn(this.q);
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
  private constructor(
    private readonly s: Shared,
    scope: Scope,
  ) {
    super(scope, { vector: s.migration.vector });
  }

  /** Open (creating and migrating as needed) a PGlite database. */
  static async open(opts: PgliteBackendOptions = {}): Promise<PgliteBackend> {
    const db =
      opts.instance ??
      (await normalised(
        PGlite.create({
          ...(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir }),
          extensions: { vector },
        }),
      ));
    const ownerTx = <T>(fn: (q: Queryable) => Promise<T>): Promise<T> =>
      normalised(db.transaction((tx) => fn(asQueryable(tx))));
    let migration: MigrationReport;
    try {
      migration = await migrate(ownerTx);
    } catch (e) {
      if (opts.instance === undefined) await db.close();
      throw e;
    }
    const shared: Shared = {
      db,
      ownsDb: opts.instance === undefined,
      writers: new Mutex(),
      migration,
      closed: false,
    };
    return new PgliteBackend(shared, SYSTEM_SCOPE);
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

  /** One scoped PGlite transaction (PGlite queues it behind any other). */
  private scoped<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    if (this.s.closed)
      return Promise.reject(new MemwardenError('STORAGE_FAILED', 'backend is closed'));
    return normalised(
      this.s.db.transaction(async (tx) => {
        const q = asQueryable(tx);
        await enterScope(q, this.scope);
        return fn(q);
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
    return this.s.writers.run(async () => {
      const staged = new StagedView(
        this,
        this.scope.kind === 'principal' ? this.scope.id : undefined,
      );
      const result = await fn(staged);
      if (!staged.isEmpty)
        await this.scoped((q) => staged.commit(new CommitView(this.scope, this.features, q)));
      return result;
    });
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
