/**
 * @module adapters/pglite/db
 * The part of PGlite's API the backend uses, as an interface both an in-process `PGlite` and
 * the worker-thread proxy (`./worker.js`, ADR 0025) implement. Keeping it this narrow is what
 * makes the proxy exact: every member here is forwarded with PGlite's own semantics; nothing
 * else is offered.
 */
import type { ExecProtocolOptions, QueryOptions, Results } from '@electric-sql/pglite';

/** `QueryOptions` without the function-valued members (they cannot cross to a worker). */
export type PgliteQueryOptions = Pick<QueryOptions, 'rowMode' | 'blob' | 'paramTypes'>;

/** A PGlite transaction (`PGlite.transaction`'s callback argument). */
export interface PgliteTx {
  query<T>(sql: string, params?: unknown[], options?: PgliteQueryOptions): Promise<Results<T>>;
  exec(sql: string, options?: PgliteQueryOptions): Promise<Results[]>;
  rollback(): Promise<void>;
  readonly closed: boolean;
}

/** The database: a `PGlite`, or a `PgliteWorker` running one in a worker thread. */
export interface PgliteDb {
  query<T>(sql: string, params?: unknown[], options?: PgliteQueryOptions): Promise<Results<T>>;
  exec(sql: string, options?: PgliteQueryOptions): Promise<Results[]>;
  transaction<T>(fn: (tx: PgliteTx) => Promise<T>): Promise<T>;
  /** Hold PGlite's query lock (no other statement runs) while `fn` runs. */
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  execProtocolRaw(
    message: Uint8Array,
    options?: Pick<ExecProtocolOptions, 'syncToFs'>,
  ): Promise<Uint8Array>;
  execProtocolRawStream(
    message: Uint8Array,
    options: { syncToFs?: boolean; onRawData: (data: Uint8Array) => void },
  ): Promise<void>;
  close(): Promise<void>;
  readonly closed: boolean;
  /**
   * {@link pipelineTransaction} in one call, where the implementation can do better than the
   * generic composition (the worker: one message instead of one per step). Must behave exactly
   * like it. It may take over `message` (the worker moves its buffer: the view is detached
   * after the call), so pass a message built for this call only.
   */
  pipelineTransaction?(
    message: Uint8Array,
    statements: number,
    expect: readonly RowExpectation[],
  ): Promise<PipelineOutcome>;
}

/** A statement of a pipeline (0-based, in send order) must have returned `rows` rows. */
export interface RowExpectation {
  readonly statement: number;
  readonly rows: number;
}

/** What a pipelined transaction did: its raw response, and whether it committed. */
export interface PipelineOutcome {
  readonly raw: Uint8Array;
  readonly committed: boolean;
}
