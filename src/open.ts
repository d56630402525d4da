/**
 * @module open
 * `Memory.open()`: the library's front door. This is an edge (like the CLI and the server):
 * it picks the adapters — PGlite in a local data folder by default, a PostgreSQL server when
 * given a URL, the key file of the data folder, the local MiniLM embedding model — and wires
 * them into the application's `Memory`.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { MemwardenError } from './core/errors.js';
import path from 'node:path';
import { EmbeddingCache } from './adapters/embeddings/cache.js';
import { LocalMiniLmEmbedder } from './adapters/embeddings/local-minilm.js';
import { DeterministicEmbedder } from './adapters/embeddings/deterministic.js';
import { KeyFileSource } from './adapters/keyfile/keyfile.js';
import { PgBackend } from './adapters/pg/index.js';
import { PgliteBackend } from './adapters/pglite/index.js';
import { systemClock, systemRandom } from './adapters/system/index.js';
import type { Clock, RandomSource } from './ports/clock.js';
import type { Embedder } from './ports/embedder.js';
import type { KeySource } from './ports/keysource.js';
import type { MetricsSink } from './ports/metrics.js';
import type { RootStorage } from './ports/storage.js';
import { retentionConfig } from './memory/config.js';
import { Ledger } from './memory/log/ledger.js';
import { Memory as MemoryCore } from './memory/memory.js';
import {
  type ReadModelOptions,
  followerOf,
  readModelOf,
  withReadModel,
} from './memory/read/read-model.js';
import type { FollowerStatus } from './memory/read/follower.js';
import type { VectorIndexOptions } from './adapters/sql/vector-index.js';
import type { WriteScreen } from './memory/detect/screen.js';
import { DetectionPipeline } from './memory/detect/pipeline.js';
import type { AutoDetectionOptions } from './memory/detect/calibration.js';
import type { LlmProvider } from './ports/llm.js';
import type { AttributionSpec } from './memory/write/lineage.js';
import type { LineageOptions } from './core/lineage/index.js';

export interface OpenOptions {
  /** Data folder for the embedded store and the key file (default `.memwarden` or MEMWARDEN_DATA). */
  readonly dataDir?: string;
  /** A PostgreSQL URL: use the server backend (default MEMWARDEN_DATABASE_URL when set). */
  readonly postgres?: string;
  /** Keep the embedded store in memory (tests, demos). The key file still lives in dataDir. */
  readonly ephemeral?: boolean;
  /**
   * Run the embedded store's PGlite in a worker thread (ADR 0025, 0028): PostgreSQL's CPU
   * leaves the calling thread, so under concurrent load the database and the caller use two
   * cores; a group commit is one message to it. Same data folder, same semantics. Default
   * false here (a library caller rarely saturates a core, and a thread costs ~30 MB);
   * `memwarden serve` turns it on unless `--no-pglite-worker`.
   */
  readonly pgliteWorker?: boolean;
  /**
   * With `pgliteWorker`: called once if the database thread dies. Every later call then fails
   * with `STORAGE_FAILED`; the data folder is intact, so the remedy is a restart (`serve` logs
   * and exits with code 70 for its supervisor).
   */
  readonly onStorageLost?: (e: MemwardenError) => void;
  /** 'local' (all-MiniLM-L6-v2, default), 'deterministic' (tests only), or your own. */
  readonly embedder?: Embedder | 'local' | 'deterministic';
  readonly keys?: KeySource;
  readonly metrics?: MetricsSink;
  readonly retention?: Parameters<typeof retentionConfig>[0];
  readonly screens?: readonly WriteScreen[];
  readonly clock?: Clock;
  readonly random?: RandomSource;
  /** Checkpoint origin line (the log's identity). */
  readonly origin?: string;
  /** Lineage operating point (τ, fallback, §6.6 strict knobs); default τ = 0, Trusted fallback. */
  readonly lineage?: LineageOptions;
  /** Attribution algorithm: 'coarse' (default), `{ judge: LlmProvider }`, `{ scripted: { w0, d } }`, or one. */
  readonly attribution?: AttributionSpec;
  /** Only explicitly named parents count (auto-attribution from the last retrieval off). */
  readonly explicitParentsOnly?: boolean;
  /** The sensitive-action gate's policy document; default `DEFAULT_POLICY`. */
  readonly policy?: unknown;
  /**
   * Detection (issue 7) on the write and read paths. Default: every detector on, calibrated per
   * principal from its own verified memories and query history, with a bundled generic benign
   * reference until a principal has enough memories of its own (ADR 0016). `{ config }` tunes
   * the detectors; `{ benign }` replaces the bundled cold-start reference with your own; other
   * `AutoDetectionOptions` fields (minOwn, persistQueries, …) pass through. Your own
   * `DetectionPipeline` is used as given and shared by all principals; `false` turns
   * detection off.
   */
  readonly detection?:
    false | DetectionPipeline | (AutoDetectionOptions & { readonly benign?: readonly string[] });
  /** Extraction model (article Pattern 3): untrusted content is stored as extracted facts. */
  readonly extractor?: LlmProvider;
  /**
   * The in-process read model (ADR 0018): vector search and the near-duplicate check served
   * from verified in-process partitions, kept current by observing this process's writes — and,
   * on a PostgreSQL server several processes share, by following the log: the server's change
   * feed (LISTEN/NOTIFY) wakes each process, which reads the entries of the leaf indices other
   * processes committed (ADR 0037). On by default for both. `false` turns it off (every search
   * then asks the database); `{ maxEntries }` bounds the entries held (default 200,000; least
   * recently used principals are evicted, one too large for the bound is served by the
   * database).
   */
  readonly readModel?: false | ReadModelOptions;
  /**
   * A PostgreSQL server with pgvector: the ANN index SQL vector search uses (default IVFFlat:
   * cheap inserts; `{ kind: 'hnsw' }` for deployments whose vector searches go to SQL —
   * `readModel: false`, hybrid ranking — at ~5-8× the insert cost, ADR 0039). Every process
   * sharing a database must use the same kind.
   */
  readonly vectorIndex?: VectorIndexOptions;
  /**
   * The connection string for the change feed's LISTEN connection (default: `postgres`; env
   * MEMWARDEN_FEED_DATABASE_URL). Set it when `postgres` goes through a pooler in transaction
   * mode (pgbouncer): LISTEN needs a session of its own, directly to PostgreSQL.
   */
  readonly postgresFeed?: string;
}

/** Which storage and vector paths an opened memory runs, and why (`serve` logs it, `/healthz`). */
export interface StorageInfo {
  readonly backend: 'pglite' | 'postgres';
  /** How SQL vector searches rank (hybrid ranking, and the database path below). */
  readonly vector: {
    readonly sql: 'pgvector' | 'in-process';
    readonly reason: string;
    readonly summary: string;
    readonly version?: string;
    readonly index?: 'hnsw' | 'ivfflat';
  };
  /**
   * The in-process read model serving vector search; on a shared server, its log follower
   * (`synced`: caught up with the other processes' commits, so the model answers).
   */
  readonly readModel: {
    readonly on: boolean;
    readonly follower?: FollowerStatus;
    /** Partitions and entries held; partitions loading, or still building their index. */
    readonly held?: { partitions: number; entries: number; loading: number; indexing: number };
  };
}

/** How long `open` waits for a shared store's change feed before serving without the model. */
const FIRST_SYNC_MS = 10_000;

function pickDetection(option: OpenOptions['detection']): {
  detection?: DetectionPipeline;
  autoDetection?: AutoDetectionOptions;
} {
  if (option === false) return {};
  if (option instanceof DetectionPipeline) return { detection: option };
  const { benign, ...auto } = option ?? {};
  return {
    autoDetection: {
      ...auto,
      ...(benign === undefined || benign.length === 0 ? {} : { genericReference: benign }),
    },
  };
}

function pickEmbedder(option: OpenOptions['embedder']): Embedder {
  // MEMWARDEN_EMBEDDER=deterministic is for tests that drive the CLI or server as a child process.
  const e = option ?? (process.env.MEMWARDEN_EMBEDDER as OpenOptions['embedder'] | undefined);
  if (e === 'deterministic') return new DeterministicEmbedder();
  if (e === undefined || e === 'local') return new EmbeddingCache(new LocalMiniLmEmbedder());
  return e;
}

/**
 * PGlite is one process's database: a second process opening the same folder would corrupt
 * it. Take an exclusive lock file (with our pid); a lock left by a dead process (SIGKILL) is
 * stale and taken over.
 */
function lockDataDir(dir: string): () => void {
  const lock = path.join(dir, 'LOCK');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(readFileSync(lock, 'utf8'));
      let alive = false;
      try {
        alive = Number.isInteger(pid) && pid > 0 && pid !== process.pid && process.kill(pid, 0);
      } catch {
        alive = false;
      }
      if (alive) {
        throw new MemwardenError(
          'STORAGE_FAILED',
          `data folder ${dir} is in use by process ${pid}`,
          {
            details: { reason: 'locked', pid },
          },
        );
      }
      rmSync(lock, { force: true }); // stale
    }
  }
  throw new MemwardenError('STORAGE_FAILED', `could not lock data folder ${dir}`);
}

/** The Memory API with the embedded default wiring. */
export class Memory extends MemoryCore {
  /** The storage backend this memory runs on (for deployment tooling). */
  declare readonly storageBackend: RootStorage;

  /** Open memwarden: PGlite in `dataDir` unless a PostgreSQL URL is given. */
  static async open(opts: OpenOptions = {}): Promise<Memory> {
    const dataDir = path.resolve(opts.dataDir ?? process.env.MEMWARDEN_DATA ?? '.memwarden');
    const url = opts.postgres ?? process.env.MEMWARDEN_DATABASE_URL;
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const server = url !== undefined && url !== '';
    const feedUrl = opts.postgresFeed ?? process.env.MEMWARDEN_FEED_DATABASE_URL;
    const unlock = server || opts.ephemeral === true ? () => undefined : lockDataDir(dataDir);
    let storage: RootStorage;
    let vector: StorageInfo['vector'];
    try {
      const backend = server
        ? await PgBackend.open({
            connectionString: url,
            ...(opts.vectorIndex === undefined ? {} : { vectorIndex: opts.vectorIndex }),
            // The change feed serves the read model's log follower (ADR 0037).
            ...(opts.readModel === false
              ? { feed: false }
              : feedUrl === undefined || feedUrl === ''
                ? {}
                : { feedConnectionString: feedUrl }),
          })
        : await PgliteBackend.open({
            ...(opts.ephemeral === true ? {} : { dataDir: path.join(dataDir, 'pgdata') }),
            // The read model serves vector search here, so the SQL ANN index is (re)built when
            // the store is opened, never from the write path, which it would stall (ADR 0024).
            ...(opts.readModel === false ? {} : { vectorIndex: { onWrite: false } }),
            ...(opts.pgliteWorker === true ? { worker: true } : {}),
            ...(opts.onStorageLost === undefined ? {} : { onWorkerExit: opts.onStorageLost }),
          });
      vector =
        backend instanceof PgBackend
          ? backend.vectorPath
          : backend.hasVector
            ? {
                sql: 'pgvector',
                reason: 'installed',
                summary:
                  "pgvector (PGlite's bundled extension): SQL vector search by IVFFlat index",
                index: 'ivfflat',
              }
            : { sql: 'in-process', reason: 'not-available', summary: 'no pgvector in PGlite' };
      storage = backend;
      // The embedded store is this process's alone (the data-folder lock): observe its writes.
      // A server: observe them and follow the log for the other processes' (ADR 0037).
      if (opts.readModel !== false) {
        storage = withReadModel(storage, opts.readModel ?? {});
        const follower = followerOf(storage);
        if (follower !== undefined) {
          follower.start();
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            follower.ready,
            new Promise<void>((r) => (timer = setTimeout(r, FIRST_SYNC_MS))),
          ]);
          clearTimeout(timer);
        }
      }
    } catch (e) {
      unlock();
      throw e;
    }
    const clock = opts.clock ?? systemClock;
    const random = opts.random ?? systemRandom;
    const ledger = await Ledger.open({
      storage,
      keys: opts.keys ?? new KeyFileSource(dataDir),
      // The latest checkpoint signed, beside the keys but in a file of its own (several
      // processes may write it; none of them may race the key file): audit's rollback anchor.
      ...(opts.ephemeral === true && opts.keys !== undefined
        ? {}
        : { anchor: new KeyFileSource(dataDir, { fileName: 'checkpoint-anchor.json' }) }),
      clock,
      random,
      ...(opts.origin === undefined ? {} : { origin: opts.origin }),
    });
    const embedder = pickEmbedder(opts.embedder);
    const m = new Memory({
      ledger,
      storage,
      embedder,
      ...pickDetection(opts.detection),
      ...(opts.extractor === undefined ? {} : { extractor: opts.extractor }),
      clock,
      random,
      retention: retentionConfig(opts.retention),
      ...(opts.metrics === undefined ? {} : { metrics: opts.metrics }),
      ...(opts.screens === undefined ? {} : { screens: opts.screens }),
      ...(opts.lineage === undefined ? {} : { lineage: opts.lineage }),
      ...(opts.attribution === undefined ? {} : { attribution: opts.attribution }),
      ...(opts.explicitParentsOnly === undefined
        ? {}
        : { explicitParentsOnly: opts.explicitParentsOnly }),
      ...(opts.policy === undefined ? {} : { policy: opts.policy }),
    });
    Object.defineProperty(m, 'storageBackend', { value: storage, enumerable: false });
    const follower = followerOf(storage);
    const model = readModelOf(storage);
    m.describeStorage = () => ({
      backend: server ? 'postgres' : 'pglite',
      vector,
      readModel: {
        on: model !== undefined,
        ...(follower === undefined ? {} : { follower: follower.status }),
        ...(model === undefined ? {} : { held: model.status() }),
      },
    });
    m.unlock = unlock;
    return m;
  }

  private unlock: () => void = () => undefined;

  /** Which storage and vector paths this memory runs, and why (fresh at every call). */
  describeStorage: () => StorageInfo = () => {
    throw new MemwardenError('INPUT_INVALID', 'not opened with Memory.open');
  };

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.unlock();
    }
  }
}
