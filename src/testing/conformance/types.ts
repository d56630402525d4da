/**
 * @module testing/conformance/types
 * The shapes every conformance case file shares.
 */
import type { StorageBackend } from '../../ports/storage.js';

/** Opens a fresh, empty backend; `reopen` (optional) reopens the same data after close. */
export interface BackendFactory {
  open(): Promise<StorageBackend>;
  reopen?: () => Promise<StorageBackend>;
}

export interface ConformanceCase {
  readonly name: string;
  run(factory: BackendFactory): Promise<void>;
}
