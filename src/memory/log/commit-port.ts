/**
 * @module memory/log/commit-port
 * The ledger's commit sequencer as the commit capability (`./commit.ts`) reaches it. The log's
 * one append order — entries, tombstones and registry statements alike — is the ledger's group
 * commit, which checks every signed record against the registry at the position it commits at
 * (ADR 0033); what signs entries and tombstones and builds their rows is `./commit.ts` (ADR
 * 0029). The `Ledger` has no method that commits an entry: it registers its sequencer here,
 * and only `ledger.ts` and `commit.ts` may import this module (dependency-cruiser rule
 * `commit-port-only-ledger-and-commit`), so holding a `Ledger` is not a way to write.
 */
import type { Ed25519Signer } from '../../core/crypto/ed25519.js';
import type { SignedEntry } from '../../core/entry/index.js';
import { MemwardenError } from '../../core/errors.js';
import type { SourceTier } from '../../core/trust.js';
import type {
  KeyRecord,
  LeafKind,
  QuotaDemand,
  StorageBackend,
  StoredEntry,
} from '../../ports/storage.js';
import type { RegistryView } from '../identity/registry-view.js';

/**
 * A signed record's claim to be valid at the position it commits at: checked inside the commit
 * transaction against the registry as the log stands there (finding 1 of issue 17).
 */
export interface SignedBy {
  readonly writer: string;
  kid: string;
  ts: bigint;
  /** An entry's tier (checked against the writer's kind); tombstones have none. */
  readonly tier?: SourceTier;
  /**
   * Re-sign the record with the writer's current key at `ts` (host-held writers only; a record
   * signed elsewhere has none and is refused instead).
   */
  readonly resign?: (kid: string, signer: Ed25519Signer, ts: bigint) => void;
  /**
   * For a record this process signed with the private key of the key id it names: its bytes as
   * committed (after any re-signature), their MAC and the record they encode, else undefined. Once the commit has
   * checked the key at the record's position and appended its leaf, the ledger counts it as
   * verified in this process (ADR 0080; see `Ledger.verifyMany`): its signature was
   * made here under that key, its leaf was appended here — verifying it again on its first read
   * would only repeat the same check.
   */
  readonly verifiedHere?: () =>
    | { readonly mac: Uint8Array; readonly bytes: Uint8Array; readonly entry: SignedEntry }
    | undefined;
}

/** An entry or tombstone queued for the group commit. */
export interface CommitRecord {
  id: string;
  /** The leaf's data; a re-signature in the commit replaces it. */
  leafData: Uint8Array;
  readonly kind: LeafKind;
  /**
   * Persist the record inside the commit transaction, once its leaf index is known: either a
   * stored entry (batched with its neighbours into one `putEntries` call) or a callback.
   */
  readonly persist:
    | { readonly entry: (leafIndex: number) => StoredEntry }
    | ((tx: StorageBackend, leafIndex: number) => Promise<void>);
  /** The quota this write consumes in the commit transaction (none: not counted). */
  readonly quota: QuotaDemand | undefined;
  /** Who signed it, checked at its position before it commits. */
  readonly signed: SignedBy;
  /** A new version: the entry it supersedes. */
  readonly supersedes?: string;
  /** Registry statements are the ledger's own (never a commit record). */
  readonly statement?: undefined;
}

/** What the commit capability needs of a ledger. */
export interface Sequencer {
  /**
   * Queue a record for the group commit; resolves with its leaf index once its transaction
   * committed (re-signed there if its writer's key changed first), rejects if it was refused
   * (the key's registry code, `QUOTA_EXCEEDED`) or failed alone.
   */
  enqueue(record: CommitRecord): Promise<number>;
  /** The registry as the log's signed statements define it (as this process has read them). */
  readonly view: RegistryView;
  /** Catch the view up with statements other processes appended (`force`: now). */
  refreshRegistry(force?: boolean): Promise<void>;
  /** A principal's newest usable key (`PRINCIPAL_UNKNOWN` / `KEY_REVOKED` otherwise). */
  currentKey(principalId: string): KeyRecord;
}

const sequencers = new WeakMap<object, Sequencer>();

/** Called by the `Ledger` constructor: its sequencer. */
export function registerSequencer(ledger: object, s: Sequencer): void {
  sequencers.set(ledger, s);
}

/** The sequencer of `ledger`. */
export function sequencerOf(ledger: object): Sequencer {
  const s = sequencers.get(ledger);
  if (s === undefined) throw new MemwardenError('INPUT_INVALID', 'not a ledger');
  return s;
}

/** The refusal of a write over its daily quota (the error `Memory.add` reports). */
export function quotaExceeded(d: { tier: SourceTier; limit: number }): MemwardenError {
  return new MemwardenError('QUOTA_EXCEEDED', `daily ${d.tier} write quota of ${d.limit} reached`, {
    details: { tier: d.tier, limit: d.limit },
  });
}
