/**
 * @module cli/context
 * Where the CLI picks its store: `Memory.open` on the data folder (PGlite) or a PostgreSQL
 * server (`--postgres URL` / MEMWARDEN_DATABASE_URL).
 */
import type { MemwardenError } from '../core/errors.js';
import type { RetentionOverrides } from '../memory/config.js';
import type { Embedder } from '../ports/embedder.js';
import { Memory } from '../open.js';
import type { Metrics } from '../server/metrics.js';

/** Default data folder, relative to the working directory (or MEMWARDEN_DATA). */
export function defaultDataDir(): string {
  return process.env.MEMWARDEN_DATA ?? '.memwarden';
}

export interface StoreOptions {
  readonly data: string;
  readonly postgres?: string;
  /** false (`--no-read-model`): search the embedded store's database, not the in-process read model (ADR 0018). */
  readonly readModel?: boolean;
  /** Run the embedded store's PGlite in a worker thread (ADR 0025, 0028; serve's default). */
  readonly pgliteWorker?: boolean;
  /** PostgreSQL with pgvector: the ANN index kind (`--vector-index`, ADR 0039). */
  readonly vectorIndex?: 'ivfflat' | 'hnsw';
  /** Retention, quotas and write limits (`serve --config FILE`, `--quota`, `--ttl`, `--ttl-ceiling`). */
  readonly retention?: RetentionOverrides;
  /** The embedder to use (serve hands in the local model it loaded at start-up); default: Memory.open's. */
  readonly embedder?: Embedder;
}

/** Open the memory stored in `data` (created on first use). */
export async function openMemory(
  o: StoreOptions,
  metrics?: Metrics,
  onStorageLost?: (e: MemwardenError) => void,
): Promise<Memory> {
  return Memory.open({
    dataDir: o.data,
    ...(o.postgres === undefined ? {} : { postgres: o.postgres }),
    ...(o.readModel === false ? { readModel: false as const } : {}),
    ...(o.pgliteWorker === true ? { pgliteWorker: true } : {}),
    ...(o.vectorIndex === undefined ? {} : { vectorIndex: { kind: o.vectorIndex } }),
    ...(o.retention === undefined ? {} : { retention: o.retention }),
    ...(o.embedder === undefined ? {} : { embedder: o.embedder }),
    ...(metrics === undefined ? {} : { metrics }),
    ...(onStorageLost === undefined ? {} : { onStorageLost }),
  });
}

/** Open, run `fn`, always close. */
export async function withMemory<T>(o: StoreOptions, fn: (m: Memory) => Promise<T>): Promise<T> {
  const m = await openMemory(o);
  try {
    return await fn(m);
  } finally {
    await m.close();
  }
}
