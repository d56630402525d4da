/**
 * @module adapters/sql/vector-index
 * Approximate-nearest-neighbour index management for `entries.embedding_vec` (pgvector).
 *
 * Two kinds (`VectorIndexOptions.kind`): IVFFlat (below; the embedded store's, whose vector
 * search the in-process read model serves) and HNSW (`entries_emb_hnsw`, the PostgreSQL
 * server's option: built once at the threshold, never rebuilt — the graph takes inserts as they
 * come — searched with `hnsw.ef_search` and `hnsw.iterative_scan = relaxed_order`). Building one
 * kind drops memwarden's index of the other, so every process sharing a database must agree
 * on the kind (the default does).
 *
 * Policy: below {@link VectorIndexOptions.minRows} rows with an embedding there is no ANN
 * index and search is an exact scan (exact results for small stores). At the threshold an
 * IVFFlat index with `lists ≈ √rows` is built (pgvector's guidance for up to ~1M rows), and
 * rebuilt with a new `lists` once the row count has doubled since it was built (`rows ≥ 2·lists²`);
 * `ANALYZE` follows every build so the planner sees the new statistics. The index name carries
 * its `lists` (`entries_emb_ivf_<lists>`), so any process can tell what is built without a
 * bookkeeping table.
 *
 * Search (see `./search.js`) sets `ivfflat.probes` and `ivfflat.iterative_scan = relaxed_order`
 * (pgvector ≥ 0.8) transaction-locally, so a scan whose candidates are mostly filtered out by
 * row-level security or the live/tier filters keeps probing lists until it has `limit` rows.
 */

/** Index-name prefix; the suffix is the index's `lists`. */
export const IVF_PREFIX = 'entries_emb_ivf_';
/** The HNSW index's name (its parameters are fixed: one build, never rebuilt). */
export const HNSW_NAME = 'entries_emb_hnsw';

/** Which index `maintainIndex` keeps. */
export type VectorIndexKind = 'ivfflat' | 'hnsw';

/** What one build creates. */
export type IndexSpec =
  | { readonly kind: 'ivfflat'; readonly lists: number }
  | { readonly kind: 'hnsw'; readonly m: number; readonly efConstruction: number };

export interface VectorIndexOptions {
  /** The index kind (default `ivfflat`; see the module comment). */
  readonly kind?: VectorIndexKind;
  /**
   * HNSW candidates kept per search (`hnsw.ef_search`, default 40; raised to the query's
   * `limit` when that is larger). With the iterative scan the index keeps searching past rows
   * the filters and row-level security drop until `limit` rows pass.
   */
  readonly efSearch?: number;
  /** Rows with an embedding at which the ANN index is first built (default 10,000). */
  readonly minRows?: number;
  /** IVFFlat lists probed per query before the iterative scan widens (default 10). */
  readonly probes?: number;
  /** Build and rebuild automatically when the store is opened and after writes (default true). */
  readonly auto?: boolean;
  /**
   * With `auto`: also from the write path, as soon as inserts cross a threshold (default true).
   * False: only when the store is opened and on an explicit `maintainVectorIndex()` — for a
   * process whose vector search does not use this index (the in-process read model, ADR 0024):
   * a build holds PGlite's one session for seconds (~1.5 s at 20,000 rows) and every write
   * queues behind it.
   */
  readonly onWrite?: boolean;
}

export const DEFAULT_MIN_ROWS = 10_000;
export const DEFAULT_PROBES = 10;
export const DEFAULT_EF_SEARCH = 40;
/** pgvector's defaults (m = 16, ef_construction = 64): recall ≥ 0.95 at ef_search 40 on MiniLM-like data. */
export const HNSW_M = 16;
export const HNSW_EF_CONSTRUCTION = 64;

/** What {@link planIndex} and a maintenance run report. */
export interface VectorIndexStatus {
  /** Rows with an embedding (all principals). */
  readonly rows: number;
  /** `lists` of the IVFFlat index in place; undefined: none (exact scan), or HNSW. */
  readonly lists: number | undefined;
  /** The kind of ANN index in place after the run; undefined: none (exact scan). */
  readonly kind?: VectorIndexKind;
  /** Whether this run built (or rebuilt) the index. */
  readonly built: boolean;
}

/** The `lists` to build for `rows`, or undefined to keep what is there. */
export function planIndex(
  rows: number,
  current: number | undefined,
  minRows: number,
): number | undefined {
  if (rows < minRows) return undefined;
  const want = Math.max(1, Math.round(Math.sqrt(rows)));
  if (current === undefined) return want;
  return rows >= 2 * current * current ? want : undefined;
}

/** The row count at which the next check is due (rows only grow between checks). */
export function nextCheckAt(rows: number, current: number | undefined, minRows: number): number {
  if (current === undefined) return Math.max(minRows, rows + 1);
  return Math.max(2 * current * current, rows + 1);
}

/** SQL listing memwarden's ANN indexes of `entries` in the current schema: rows `{ name }`. */
export const LIST_INDEXES_SQL = `SELECT indexname AS name FROM pg_indexes
  WHERE schemaname = current_schema() AND tablename = 'entries'
    AND (indexname LIKE '${IVF_PREFIX}%' OR indexname = '${HNSW_NAME}')`;

/** Lists of each named index (unparseable names are ignored). */
export function listsOf(names: readonly string[]): number[] {
  return names
    .filter((n) => n.startsWith(IVF_PREFIX))
    .map((n) => Number(n.slice(IVF_PREFIX.length)))
    .filter((n) => Number.isSafeInteger(n) && n > 0);
}

/** Rows with an embedding; run in the system scope (row-level security hides rows otherwise). */
export const COUNT_SQL = 'SELECT count(*) AS n FROM entries WHERE embedding_vec IS NOT NULL';

/**
 * The numbers are integers computed here, never caller text, so interpolating them is safe
 * (DDL takes no parameters).
 */
export function createIndexSql(spec: IndexSpec, concurrently: boolean): string {
  const c = concurrently ? 'CONCURRENTLY ' : '';
  const int = (n: number, what: string): number => {
    if (!Number.isSafeInteger(n) || n < 1)
      throw new RangeError(`${what} must be a positive integer`);
    return n;
  };
  if (spec.kind === 'hnsw') {
    return `CREATE INDEX ${c}IF NOT EXISTS ${HNSW_NAME}
    ON entries USING hnsw (embedding_vec vector_cosine_ops)
    WITH (m = ${int(spec.m, 'm')}, ef_construction = ${int(spec.efConstruction, 'ef_construction')})`;
  }
  const lists = int(spec.lists, 'lists');
  return `CREATE INDEX ${c}IF NOT EXISTS ${IVF_PREFIX}${lists}
    ON entries USING ivfflat (embedding_vec vector_cosine_ops) WITH (lists = ${lists})`;
}

/** Whether a pgvector version string (`0.8.1`) has iterative index scans (≥ 0.8). */
export function hasIterativeScan(version: string | undefined): boolean {
  if (version === undefined) return false;
  const [maj, min] = version.split('.').map(Number);
  return (maj ?? 0) > 0 || (min ?? 0) >= 8;
}

/** How a driver runs the three steps of a maintenance run. */
export interface IndexDriver {
  /** Rows with an embedding, counted in the system scope ({@link COUNT_SQL}). */
  count(): Promise<number>;
  /** Names of the IVFFlat indexes in place ({@link LIST_INDEXES_SQL}). */
  indexes(): Promise<string[]>;
  /** Build the index `spec` names, drop `old`, then ANALYZE entries (as the table owner). */
  build(spec: IndexSpec, old: readonly string[]): Promise<void>;
}

/** One maintenance run: count, compare with what is built, (re)build when due. */
export async function maintainIndex(
  d: IndexDriver,
  minRows: number,
  kind: VectorIndexKind = 'ivfflat',
): Promise<VectorIndexStatus> {
  const rows = await d.count();
  const names = await d.indexes();
  if (kind === 'hnsw') {
    const old = names.filter((n) => n !== HNSW_NAME);
    if (names.includes(HNSW_NAME)) {
      if (old.length > 0)
        await d.build({ kind, m: HNSW_M, efConstruction: HNSW_EF_CONSTRUCTION }, old);
      return { rows, lists: undefined, kind, built: false };
    }
    if (rows < minRows) return { rows, lists: undefined, built: false };
    await d.build({ kind, m: HNSW_M, efConstruction: HNSW_EF_CONSTRUCTION }, old);
    return { rows, lists: undefined, kind, built: true };
  }
  const have = listsOf(names);
  const current = have.length === 0 ? undefined : Math.max(...have);
  const lists = planIndex(rows, current, minRows);
  const ivf = (l: number | undefined): { kind?: VectorIndexKind } =>
    l === undefined ? {} : { kind: 'ivfflat' };
  if (lists === undefined || lists === current)
    return { rows, lists: current, ...ivf(current), built: false };
  await d.build(
    { kind: 'ivfflat', lists },
    names.filter((n) => n !== `${IVF_PREFIX}${lists}`),
  );
  return { rows, lists, kind: 'ivfflat', built: true };
}

/** Auto-maintenance bookkeeping shared by a backend's views. */
export class IndexTracker {
  readonly kind: VectorIndexKind;
  readonly efSearch: number;
  readonly minRows: number;
  readonly probes: number;
  readonly auto: boolean;
  readonly onWrite: boolean;
  private rows = 0;
  private nextAt = Number.POSITIVE_INFINITY;
  private running: Promise<VectorIndexStatus> | undefined;
  /** The last automatic run's failure (automatic runs never fail a write). */
  lastError: unknown;

  /** The last run's outcome (what `open` reports). */
  last: VectorIndexStatus | undefined;

  constructor(opts: VectorIndexOptions | undefined) {
    this.kind = opts?.kind ?? 'ivfflat';
    this.efSearch = opts?.efSearch ?? DEFAULT_EF_SEARCH;
    if (this.kind !== 'ivfflat' && this.kind !== 'hnsw')
      throw new RangeError("vectorIndex.kind must be 'ivfflat' or 'hnsw'");
    if (!Number.isSafeInteger(this.efSearch) || this.efSearch < 1 || this.efSearch > 1000)
      throw new RangeError('vectorIndex.efSearch must be an integer 1 … 1000');
    this.minRows = opts?.minRows ?? DEFAULT_MIN_ROWS;
    this.probes = opts?.probes ?? DEFAULT_PROBES;
    this.auto = opts?.auto ?? true;
    this.onWrite = opts?.onWrite ?? true;
    if (!Number.isSafeInteger(this.minRows) || this.minRows < 1)
      throw new RangeError('vectorIndex.minRows must be a positive integer');
    if (!Number.isSafeInteger(this.probes) || this.probes < 1)
      throw new RangeError('vectorIndex.probes must be a positive integer');
  }

  /** Record a run's outcome: the next check is due when the count crosses the next threshold. */
  settle(s: VectorIndexStatus): VectorIndexStatus {
    this.rows = s.rows;
    this.last = s;
    // An HNSW index is never rebuilt: once it exists, writes need no more checks.
    this.nextAt =
      s.kind === 'hnsw' ? Number.POSITIVE_INFINITY : nextCheckAt(s.rows, s.lists, this.minRows);
    return s;
  }

  /** One run at a time; concurrent callers share it. */
  run(fn: () => Promise<VectorIndexStatus>): Promise<VectorIndexStatus> {
    this.running ??= fn()
      .then((s) => this.settle(s))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** Count `n` inserted embeddings; true when an automatic run from the write path is due. */
  inserted(n: number): boolean {
    this.rows += n;
    return this.auto && this.onWrite && this.running === undefined && this.rows >= this.nextAt;
  }
}
