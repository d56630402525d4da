/**
 * @module adapters/sql/view
 * The StorageBackend surface over the shared queries, parameterised by how a driver runs a
 * unit of work. Drivers subclass it and decide only *where* a query runs (its own scoped
 * transaction, or the enclosing one); *what* runs lives in `./log.js`, `./registry.js` and
 * `./entries.js`, so PGlite and PostgreSQL execute identical SQL.
 */
import { MemwardenError } from '../../core/errors.js';
import type {
  CheckpointRecord,
  KeyRecord,
  LeafRecord,
  NodeRecord,
  PrincipalRecord,
  StorageBackend,
  StoredEntry,
} from '../../ports/storage.js';
import * as entries from './entries.js';
import * as log from './log.js';
import type { Queryable, Scope } from './queryable.js';
import * as registry from './registry.js';
import type { KeyPatch } from './registry.js';

/** A StorageBackend whose every query runs under `scope` through the driver's `read`/`write`. */
export abstract class SqlView implements StorageBackend {
  constructor(readonly scope: Scope) {}

  /** Run a read-only unit of work under this view's scope. */
  protected abstract read<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Run a write as one all-or-nothing unit under this view's scope. */
  protected abstract write<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  abstract transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T>;
  abstract close(): Promise<void>;

  logSize(): Promise<number> {
    return this.read((q) => log.logSize(q));
  }
  appendLeaves(
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void> {
    return this.write((q) => log.appendLeaves(q, this.scope, start, leaves, nodes));
  }
  getLeaf(index: number): Promise<LeafRecord | undefined> {
    return this.read((q) => log.getLeaf(q, index));
  }
  getLeaves(start: number, end: number): Promise<LeafRecord[]> {
    return this.read((q) => log.getLeaves(q, start, end));
  }
  getNodes(refs: readonly { level: number; index: number }[]): Promise<(Uint8Array | undefined)[]> {
    return this.read((q) => log.getNodes(q, refs));
  }
  findLeafIndex(entryId: string): Promise<number | undefined> {
    return this.read((q) => log.findLeafIndex(q, entryId));
  }
  putCheckpoint(cp: CheckpointRecord): Promise<void> {
    return this.write((q) => log.putCheckpoint(q, cp));
  }
  latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    return this.read((q) => log.latestCheckpoint(q));
  }
  getCheckpoint(size: number): Promise<CheckpointRecord | undefined> {
    return this.read((q) => log.getCheckpoint(q, size));
  }

  insertPrincipal(p: PrincipalRecord, firstKey: KeyRecord): Promise<void> {
    return this.write((q) => registry.insertPrincipal(q, p, firstKey));
  }
  getPrincipal(id: string): Promise<PrincipalRecord | undefined> {
    return this.read((q) => registry.getPrincipal(q, id));
  }
  listPrincipals(): Promise<PrincipalRecord[]> {
    return this.read((q) => registry.listPrincipals(q));
  }
  insertKey(k: KeyRecord): Promise<void> {
    return this.write((q) => registry.insertKey(q, k));
  }
  closeKey(kid: string, patch: KeyPatch): Promise<void> {
    return this.write((q) => registry.closeKey(q, kid, patch));
  }
  getKey(kid: string): Promise<KeyRecord | undefined> {
    return this.read((q) => registry.getKey(q, kid));
  }
  keysOf(principalId: string): Promise<KeyRecord[]> {
    return this.read((q) => registry.keysOf(q, principalId));
  }

  putEntry(e: StoredEntry): Promise<void> {
    return this.write((q) => entries.putEntry(q, e));
  }
  getEntry(id: string): Promise<StoredEntry | undefined> {
    return this.read((q) => entries.getEntry(q, id));
  }
  listEntries(opts?: { afterLeafIndex?: number; limit?: number }): Promise<StoredEntry[]> {
    return this.read((q) => entries.listEntries(q, opts));
  }
}

/**
 * Validate a principal id for `asPrincipal`. An empty id would read as "no principal" (fail
 * closed, but silently), so it is refused loudly instead.
 */
export function checkPrincipalId(id: string): string {
  if (typeof id !== 'string' || id.length === 0 || id.includes('\0')) {
    throw new MemwardenError(
      'INPUT_INVALID',
      'principal id must be a non-empty string without NUL',
    );
  }
  return id;
}

/**
 * A scoped view may be narrowed to the principal it already is, never widened or switched:
 * code handed an agent's view cannot reach another tenant through it.
 */
export function assertSameScope(scope: Scope, id: string): void {
  if (scope.kind !== 'principal' || scope.id !== id) {
    throw new MemwardenError(
      'INPUT_INVALID',
      'a principal-scoped view cannot switch to another scope',
    );
  }
}
