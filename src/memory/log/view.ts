/**
 * @module memory/log/view
 * What `Memory` hands out of its ledger (`Memory.ledger`): verification, proofs, checkpoints,
 * the principal registry's reads and key administration — and nothing that writes. The view is
 * a separate frozen object, not the ledger, so it carries no storage, host keys or log to
 * write through (ADR 0029): a channel holding a `Memory` can write only through its methods,
 * which run the write path.
 */
import type { SignedEntry } from '../../core/entry/index.js';
import type { CheckpointRecord, PrincipalRecord, StoredEntry } from '../../ports/storage.js';
import type { KeyRecord } from '../../ports/storage.js';
import { Ledger, type Verification } from './ledger.js';

export interface LedgerView {
  /** The log's origin line (checkpoints' identity). */
  readonly origin: string;
  /** Leaves committed so far (as this process has seen them). */
  readonly size: number;
  /** Records re-signed in their commit because their writer's key changed first (ADR 0033). */
  readonly resigned: number;
  /** The checkpoint verifier's raw Ed25519 public key. */
  readonly checkpointPublicKey: Uint8Array;
  verifyEntry(id: string): Promise<Verification>;
  verifyStored(stored: StoredEntry): Promise<Verification>;
  verifyMany(stored: readonly StoredEntry[]): Promise<Verification[]>;
  proveEntry(id: string): ReturnType<Ledger['proveEntry']>;
  checkpoint(): Promise<CheckpointRecord>;
  verifyCheckpointNote(note: string): boolean;
  /** Rotate a host-held principal key (the current key signs its successor). */
  rotatePrincipalKey(principalId: string): Promise<string>;
  /**
   * Revoke a key: a signed statement in the log; nothing at or past its leaf (the index
   * returned) verifies under the key (ADR 0033).
   */
  revokeKey(kid: string, reason: string): Promise<number>;
  currentKid(principalId: string): Promise<string>;
  getPrincipal(id: string): Promise<PrincipalRecord | undefined>;
  listPrincipals(): Promise<PrincipalRecord[]>;
  keysOf(principalId: string): Promise<KeyRecord[]>;
  primeVerification(): Promise<number>;
  decode(bytes: Uint8Array): SignedEntry;
  /**
   * One stored entry as `principal` sees it (its own rows plus global ones), or undefined: the
   * public `Gate` loads a context's segments through it before verifying them.
   */
  entryAs(principal: string, id: string): Promise<StoredEntry | undefined>;
}

/** The read-and-administer view of `ledger` (see the module comment). */
export function ledgerView(ledger: Ledger): LedgerView {
  const storage = ledger.storage;
  return Object.freeze({
    origin: ledger.log.origin,
    get size(): number {
      return ledger.log.size;
    },
    get resigned(): number {
      return ledger.resigned;
    },
    checkpointPublicKey: ledger.checkpointPublicKey,
    verifyEntry: (id: string) => ledger.verifyEntry(id),
    verifyStored: (s: StoredEntry) => ledger.verifyStored(s),
    verifyMany: (s: readonly StoredEntry[]) => ledger.verifyMany(s),
    proveEntry: (id: string) => ledger.proveEntry(id),
    checkpoint: () => ledger.checkpoint(),
    verifyCheckpointNote: (note: string) => ledger.verifyCheckpointNote(note),
    rotatePrincipalKey: (id: string) => ledger.rotatePrincipalKey(id),
    revokeKey: (kid: string, reason: string) => ledger.revokeKey(kid, reason),
    currentKid: (id: string) => ledger.currentKid(id),
    // The signed registry's statements, not the principals / keys tables (ADR 0033).
    getPrincipal: (id: string) => ledger.getPrincipal(id),
    listPrincipals: () => ledger.listPrincipals(),
    keysOf: (id: string) => ledger.keysOf(id),
    primeVerification: () => ledger.primeVerification(),
    decode: (bytes: Uint8Array) => Ledger.decode(bytes),
    entryAs: (principal: string, id: string) =>
      (typeof storage.asPrincipal === 'function'
        ? storage.asPrincipal(principal)
        : storage
      ).getEntry(id),
  });
}
