/**
 * @module ports/storage
 * The storage port. Every backend (in-memory here; PGlite and PostgreSQL later) implements
 * it, and one conformance suite (`src/testing/storage-conformance.ts`) runs against each.
 *
 * Rules every implementation keeps:
 * - Writes are atomic per call; a failed call changes nothing.
 * - Nothing is overwritten: inserting an existing key is `STORAGE_CONFLICT`.
 * - Log appends are sequenced: `appendLeaves` names the index it expects to start at and
 *   fails with `STORAGE_CONFLICT` if the log has moved, so two writers can never fork it.
 * - Returned byte arrays are copies or immutable; callers may not mutate them.
 */
import type { PrincipalKind, SourceTier } from '../core/trust.js';

/** One log leaf as stored: RFC 6962 leaf input and its hash. */
export interface LeafRecord {
  readonly index: number;
  /** The leaf input bytes (entry id ‖ signature, or a `ts:` tombstone). */
  readonly data: Uint8Array;
  /** SHA-256(0x00 ‖ data), RFC 6962 §2.1. */
  readonly hash: Uint8Array;
  /** The entry (or tombstone) this leaf commits. */
  readonly entryId: string;
  readonly kind: 'entry' | 'tombstone';
}

/** A stored perfect-subtree hash: level `level` (0 = leaf hash), covering leaves [index·2^level, (index+1)·2^level). */
export interface NodeRecord {
  readonly level: number;
  readonly index: number;
  readonly hash: Uint8Array;
}

/** A checkpoint as stored: the signed note text plus its parsed size and root. */
export interface CheckpointRecord {
  readonly size: number;
  readonly root: Uint8Array;
  /** The C2SP signed note, verbatim. */
  readonly note: string;
  readonly createdAtNs: bigint;
}

export interface LogStore {
  /** Number of leaves in the log. */
  logSize(): Promise<number>;
  /**
   * Append `leaves` (indices `start`, `start+1`, …) together with the interior nodes they
   * complete, in one atomic step. Fails with `STORAGE_CONFLICT` unless `start` equals the
   * current size.
   */
  appendLeaves(start: number, leaves: readonly LeafRecord[], nodes: readonly NodeRecord[]): Promise<void>;
  getLeaf(index: number): Promise<LeafRecord | undefined>;
  /** Leaves in [start, end). */
  getLeaves(start: number, end: number): Promise<LeafRecord[]>;
  /** The stored hashes for `refs`, in order; undefined where absent. */
  getNodes(refs: readonly { level: number; index: number }[]): Promise<(Uint8Array | undefined)[]>;
  /** Leaf index of the leaf committing `entryId` (its entry leaf, not a tombstone). */
  findLeafIndex(entryId: string): Promise<number | undefined>;
  putCheckpoint(cp: CheckpointRecord): Promise<void>;
  latestCheckpoint(): Promise<CheckpointRecord | undefined>;
  getCheckpoint(size: number): Promise<CheckpointRecord | undefined>;
}

export interface PrincipalRecord {
  /** Derived from the first public key: `${kind}:${hex(SHA-256(pk))[0..32]}`. */
  readonly id: string;
  readonly kind: PrincipalKind;
  /** Human label; not unique, not trusted. */
  readonly name: string;
  readonly createdAtNs: bigint;
}

export interface KeyRecord {
  /** `hex(SHA-256(pk))[0..16]`. */
  readonly kid: string;
  readonly principalId: string;
  readonly alg: 'ed25519';
  readonly publicKey: Uint8Array;
  /** Entries signed before this instant do not verify under this key. */
  readonly validFromNs: bigint;
  /** Set by rotation: the key signs nothing at or after this instant. */
  readonly validUntilNs?: bigint;
  /** Set by revocation: nothing signed at or after this instant verifies. */
  readonly revokedAtNs?: bigint;
  /** Log size when revoked: no leaf at or past it verifies under this key, whatever its timestamp. */
  readonly revokedAtLogSize?: number;
  readonly revocationReason?: string;
}

export interface RegistryStore {
  /** `STORAGE_CONFLICT` if the id exists (registration never overwrites). */
  insertPrincipal(p: PrincipalRecord, firstKey: KeyRecord): Promise<void>;
  getPrincipal(id: string): Promise<PrincipalRecord | undefined>;
  listPrincipals(): Promise<PrincipalRecord[]>;
  /** `STORAGE_CONFLICT` if the kid exists. */
  insertKey(k: KeyRecord): Promise<void>;
  /**
   * Close the validity of `kid` (rotation or revocation). Only narrowing updates are legal:
   * a set field is never changed again (`STORAGE_CONFLICT`).
   */
  closeKey(
    kid: string,
    patch: { validUntilNs?: bigint; revokedAtNs?: bigint; revokedAtLogSize?: number; revocationReason?: string },
  ): Promise<void>;
  getKey(kid: string): Promise<KeyRecord | undefined>;
  keysOf(principalId: string): Promise<KeyRecord[]>;
}

/** A stored entry: the exact signed bytes plus the authenticator tag. */
export interface StoredEntry {
  readonly id: string;
  /**
   * The principal scope that owns the entry (the RLS tenant key). Denormalised from the signed
   * record so the database can enforce isolation; the read path re-checks it against the bytes.
   */
  readonly owner: string;
  /** Source tier, denormalised for the same reason (OPERATOR rows are global). */
  readonly tier: SourceTier;
  /** Canonical CBOR of the signed record (body + signature), exactly as signed. */
  readonly bytes: Uint8Array;
  readonly leafIndex: number;
  /** HMAC key id and tag over `bytes` (SMSR component 1). */
  readonly macKid: string;
  readonly mac: Uint8Array;
}

export interface EntryStore {
  /** `STORAGE_CONFLICT` if the id exists. */
  putEntry(e: StoredEntry): Promise<void>;
  getEntry(id: string): Promise<StoredEntry | undefined>;
  /** Entries in log order, for audit and listing. */
  listEntries(opts?: { afterLeafIndex?: number; limit?: number }): Promise<StoredEntry[]>;
}

/** The whole storage port of this stage. */
export interface StorageBackend extends LogStore, RegistryStore, EntryStore {
  /** Run `fn` so that its writes are all-or-nothing and serialised against other writers. */
  transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * A view of the same store whose every query runs for `principalId` (article Pattern 4):
   * it sees only that principal's rows plus global OPERATOR rows, and may not write OPERATOR
   * rows or rows owned by anyone else. Backends that enforce this in the database (PGlite,
   * PostgreSQL: row-level security) implement it; the object `open` returns acts as the system
   * scope (deployment tooling). A scoped view refuses to switch to another principal
   * (`INPUT_INVALID`); closing a view is a no-op (the root owns the connection).
   */
  asPrincipal?(principalId: string): StorageBackend;
}
