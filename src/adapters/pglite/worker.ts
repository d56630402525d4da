/**
 * @module adapters/pglite/worker
 * PGlite in a worker thread (ADR 0025): {@link PgliteWorker} is a {@link PgliteDb} whose every
 * call runs on a real PGlite (same options: pgvector, the same data folder) in a
 * `worker_threads` worker (`./worker-host.mjs`). The HTTP thread then spends no CPU executing
 * PostgreSQL (WebAssembly) or in PGlite's protocol layer: the two run on two cores.
 *
 * Semantics are PGlite's own, because PGlite still does the serialising: a `transaction`
 * runs its callback once the worker's PGlite transaction has begun, holds it open while this
 * thread sends its statements one by one, and ends it with COMMIT when the callback returns or
 * ROLLBACK when it throws; `runExclusive` holds the worker's query lock while the callback's
 * raw protocol calls run. Results, byte arrays and bigints cross by structured clone (raw protocol results are
 * transferred). Errors cross with every field of PGlite's `DatabaseError` (code, severity,
 * detail, constraint …) and are rebuilt as one, so `normalised()` maps them exactly as before.
 *
 * Failure: if the worker dies, every pending and later call rejects with `STORAGE_FAILED`
 * (`details.reason = 'worker_exited'`) — nothing waits forever. `close()` closes PGlite in the
 * worker (flushing the data folder) and only then ends the thread. The worker is unref'd while
 * no call is pending, as an in-process PGlite holds no handle either.
 */
import { Worker } from 'node:worker_threads';
import { type Results, protocol } from '@electric-sql/pglite';
import { MemwardenError } from '../../core/errors.js';
import type {
  PgliteDb,
  PgliteQueryOptions,
  PgliteTx,
  PipelineOutcome,
  RowExpectation,
} from './db.js';
import { Mutex } from './mutex.js';

/** Plain JavaScript, next to this module in `src/` and (copied by the build) in `dist/`. */
const HOST = new URL('./worker-host.mjs', import.meta.url);

/** An error as `./worker-host.mjs` sends it. */
interface ErrorRecord {
  readonly thrown?: string;
  readonly database?: boolean;
  readonly message?: string;
  readonly length?: number;
  readonly [field: string]: unknown;
}

interface Reply {
  readonly id: number;
  readonly v?: unknown;
  readonly err?: ErrorRecord;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

/** Rebuild the worker's error: a PGlite `DatabaseError` with all its fields, or an `Error`. */
function errorIn(r: ErrorRecord): Error {
  if (r.thrown !== undefined) return new Error(r.thrown);
  const message = r.message ?? 'PGlite error';
  const e: Error =
    r.database === true
      ? new protocol.messages.DatabaseError(message, r.length ?? 0, 'error')
      : new Error(message);
  for (const [k, v] of Object.entries(r)) {
    if (k !== 'database' && k !== 'message') (e as unknown as Record<string, unknown>)[k] = v;
  }
  return e;
}

/** Options for {@link PgliteWorker.create}. */
export interface PgliteWorkerOptions {
  /** A local folder for durable storage; omitted → in-memory. */
  readonly dataDir?: string;
  /**
   * Called once if the worker thread ends other than by `close()` (it crashed, ran out of
   * memory, was terminated): from then on every call fails with `STORAGE_FAILED`. A server
   * should exit so its supervisor restarts it on the intact data folder (`memwarden serve`
   * does); it must not go on answering every request with an error.
   */
  readonly onExit?: (e: MemwardenError) => void;
}

/** A PGlite running in a worker thread, behind PGlite's own API (the subset in `./db.js`). */
export class PgliteWorker implements PgliteDb {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private nextTx = 1;
  private nextLock = 1;
  /** The lock `runExclusive` holds on the worker right now (raw calls run under it). */
  private lock: number | undefined;
  private readonly exclusive = new Mutex();
  private dead: MemwardenError | undefined;
  private lastError: unknown;
  private closing: Promise<void> | undefined;
  private isClosed = false;

  private constructor(
    private readonly worker: Worker,
    private readonly onExit?: (e: MemwardenError) => void,
  ) {
    worker.on('message', (m: Reply) => this.settle(m));
    worker.on('error', (e) => {
      this.lastError = e;
    });
    worker.on('exit', (code) => this.exited(code));
    worker.unref();
  }

  /** Start the worker and boot PGlite in it (with pgvector). */
  static async create(opts: PgliteWorkerOptions = {}): Promise<PgliteWorker> {
    const worker = new Worker(HOST, {
      workerData: opts.dataDir === undefined ? {} : { dataDir: opts.dataDir },
      // The process's flags (--cpu-prof, --import …) apply to the worker too, except those that
      // only describe the main entry (a worker refuses --input-type).
      execArgv: process.execArgv.filter((a) => !a.startsWith('--input-type')),
    });
    let onMessage: (m: { err?: ErrorRecord }) => void = () => undefined;
    let onError: (e: Error) => void = () => undefined;
    let onExit: (code: number) => void = () => undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        onMessage = (m) => (m.err === undefined ? resolve() : reject(errorIn(m.err)));
        onError = reject;
        onExit = (code) =>
          reject(
            new MemwardenError(
              'STORAGE_FAILED',
              `the PGlite worker exited while starting (code ${code})`,
              {
                details: { reason: 'worker_exited' },
              },
            ),
          );
        worker.once('message', onMessage).once('error', onError).once('exit', onExit);
      });
    } catch (e) {
      await worker.terminate();
      throw e;
    } finally {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    }
    return new PgliteWorker(worker, opts.onExit);
  }

  get closed(): boolean {
    return this.isClosed || this.dead !== undefined;
  }

  private settle(m: Reply): void {
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker.unref();
    if (m.err !== undefined) p.reject(errorIn(m.err));
    else p.resolve(m.v);
  }

  private exited(code: number): void {
    const why = this.lastError instanceof Error ? `: ${this.lastError.message}` : '';
    this.dead = new MemwardenError(
      'STORAGE_FAILED',
      this.closing === undefined
        ? `the PGlite worker exited (code ${code})${why}`
        : 'the PGlite database is closed',
      { details: { reason: 'worker_exited', exitCode: code }, cause: this.lastError },
    );
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(this.dead);
    if (this.closing === undefined) this.onExit?.(this.dead);
  }

  /** Send a message that is answered; `transfer`: buffers moved to the worker, not copied. */
  private call(msg: Record<string, unknown>, transfer?: readonly ArrayBuffer[]): Promise<unknown> {
    if (this.dead !== undefined) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // throws DataCloneError synchronously → rejects
      this.worker.postMessage({ ...msg, id }, transfer);
      if (this.pending.size === 0) this.worker.ref(); // a pending call keeps the process alive
      this.pending.set(id, { resolve, reject });
    });
  }

  /** Send a message that is not answered (its effect is ordered before every later message). */
  private post(msg: Record<string, unknown>): void {
    if (this.dead === undefined) this.worker.postMessage(msg);
  }

  query<T>(sql: string, params?: unknown[], options?: PgliteQueryOptions): Promise<Results<T>> {
    return this.call({ t: 'q', sql, params, opts: options }) as Promise<Results<T>>;
  }

  exec(sql: string, options?: PgliteQueryOptions): Promise<Results[]> {
    return this.call({ t: 'x', sql, opts: options }) as Promise<Results[]>;
  }

  async transaction<T>(fn: (tx: PgliteTx) => Promise<T>): Promise<T> {
    const tx = this.nextTx++;
    // Wait until the worker's PGlite transaction has begun, as PGlite runs the callback only
    // then: everything `fn` does (raw protocol calls included) happens inside it.
    await this.call({ t: 'b', tx });
    let closed = false;
    const open = (): void => {
      if (closed) throw new Error('Transaction is closed'); // PGlite's message
    };
    const call = this.call.bind(this);
    const handle: PgliteTx = {
      async query<R>(sql: string, params?: unknown[], options?: PgliteQueryOptions) {
        open();
        return (await call({ t: 'q', tx, sql, params, opts: options })) as Results<R>;
      },
      async exec(sql: string, options?: PgliteQueryOptions) {
        open();
        return (await call({ t: 'x', tx, sql, opts: options })) as Results[];
      },
      async rollback() {
        open();
        await call({ t: 'rb', tx });
        closed = true;
      },
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await fn(handle);
    } catch (e) {
      closed = true;
      await this.call({ t: 'e', tx, commit: false }); // ROLLBACK (unless rolled back): its error wins
      throw e;
    }
    closed = true;
    await this.call({ t: 'e', tx, commit: true });
    return result;
  }

  runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.exclusive.run(async () => {
      const lock = this.nextLock++;
      this.post({ t: 'l', lock });
      this.lock = lock;
      try {
        return await fn();
      } finally {
        this.lock = undefined;
        this.post({ t: 'u', lock });
      }
    });
  }

  execProtocolRaw(message: Uint8Array, options?: { syncToFs?: boolean }): Promise<Uint8Array> {
    return this.call({
      t: 'r',
      msg: message,
      stream: false,
      syncToFs: options?.syncToFs,
      lock: this.lock,
    }) as Promise<Uint8Array>;
  }

  async execProtocolRawStream(
    message: Uint8Array,
    options: { syncToFs?: boolean; onRawData: (data: Uint8Array) => void },
  ): Promise<void> {
    const out = (await this.call({
      t: 'r',
      msg: message,
      stream: true,
      syncToFs: options.syncToFs,
      lock: this.lock,
    })) as Uint8Array;
    options.onRawData(out); // one chunk: the worker joined PGlite's
  }

  /**
   * `./pipeline-tx.ts` `pipelineTransaction` as ONE message (ADR 0028): the worker begins,
   * runs the pipeline, decides and commits or rolls back without waiting for this thread.
   */
  pipelineTransaction(
    message: Uint8Array,
    statements: number,
    expect: readonly RowExpectation[],
  ): Promise<PipelineOutcome> {
    // The message is the caller's to give away (a fresh pipeline): moved, not copied — a clone
    // of a group commit's ~40 KB (and of the spare capacity of the buffer it was written
    // into) cost the HTTP thread more than the rest of the call. The caller's view is detached.
    // A Node Buffer may be a slice of a shared pool: that one is copied first.
    const msg = Buffer.isBuffer(message) ? new Uint8Array(message) : message;
    return this.call({ t: 'pt', msg, n: statements, expect }, [
      msg.buffer as ArrayBuffer,
    ]) as Promise<PipelineOutcome>;
  }

  /** Close PGlite in the worker (every queued call runs first), then end the thread. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        if (this.dead === undefined) await this.call({ t: 'c' });
      } finally {
        this.isClosed = true;
        await this.worker.terminate();
      }
    })();
    return this.closing;
  }
}
