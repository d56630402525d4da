/**
 * @module memory/log/ledger
 * The provenance ledger: principals and their keys, checkpoints and proofs, and verification of
 * signed entries (decode strictly → MAC → signature under the registry → log inclusion). It
 * cannot write: signing and committing entries and tombstones is `./commit.ts`, which only the
 * write path (`memory/write/`) may import (ADR 0029).
 */
import { keyIdFor } from '../../core/crypto/ids.js';
import { verifyEd25519 } from '../../core/crypto/ed25519.js';
import { bytesEqual } from '../../core/bytes.js';
import {
  type SignedEntry,
  type EntryForVerify,
  decodeEntryForVerify,
  decodeSignedEntry,
  safeDecodeSignedEntry,
  withEntryLeafData,
  withEntrySigningInput,
} from '../../core/entry/index.js';
import { MemwardenError, type ErrorCode } from '../../core/errors.js';
import { parseCheckpoint, verifyCheckpoint, verifyInclusion } from '../../core/merkle/index.js';
import { type ChainHash, chainBytes, leafHashChain } from '../../core/merkle/hash.js';
import type { PrincipalKind } from '../../core/trust.js';
import type { Clock, RandomSource } from '../../ports/clock.js';
import type { KeySource } from '../../ports/keysource.js';
import type { CheckpointRecord, PrincipalRecord, StorageBackend, StoredEntry } from '../../ports/storage.js';
import { HostKeys } from '../identity/keys.js';
import { MerkleLog } from './log.js';
import { VerifierRegistry, rotationStatement } from '../identity/registry.js';
import { DEFAULT_MAX_MIRROR_LEAVES, VerifiedLeaves } from './verified-leaves.js';

/** The outcome of verifying a stored entry. A value: verification failures are findings. */
export type Verification =
  | { ok: true; entry: SignedEntry; leafIndex: number; checkpointSize: number | undefined }
  | {
      ok: false;
      code: ErrorCode;
      id: string;
      stage: 'load' | 'decode' | 'mac' | 'signature' | 'inclusion';
    };

export interface LedgerOptions {
  readonly storage: StorageBackend;
  readonly keys: KeySource;
  readonly clock: Clock;
  readonly random: RandomSource;
  /** Log identity in checkpoints (C2SP origin line). */
  readonly origin?: string;
  /**
   * Most leaves the verified leaf mirror may hold (32 bytes each; default 2^22). Past it,
   * first verifications prove inclusion by audit paths read from the store.
   */
  readonly maxVerifiedLeaves?: number;
  /** How long the read path reuses a key record (ns; default 1 s, ADR 0014). */
  readonly keyRecordTtlNs?: bigint;
}

/** An entry awaiting the signature and inclusion checks of a first verification. */
interface FirstCheck {
  /** Its position in the caller's list. */
  readonly at: number;
  readonly stored: StoredEntry;
  /** The decoded record and where its signed parts sit in `stored.bytes`. */
  readonly d: EntryForVerify;
  /** The hash its log leaf must have (of id ‖ sig, MemLineage §3.4), as a latin1 chain string. */
  readonly leafHash: ChainHash;
}

/**
 * What the ledger needs of the commit queue attached to it (`memory/log/commit.ts`): drained
 * before checkpoints, revocations and close; told when keys change.
 */
export interface CommitQueue {
  drain(): Promise<void>;
  keysChanged(principal?: string): void;
}

export class Ledger {
  /** The commit queue writing through this ledger, once one is attached. */
  private queue: CommitQueue | undefined;
  /** The latest checkpoint whose note signature this process has verified. */
  private checkpointCache: CheckpointRecord | undefined;
  /** id → MAC of bytes already fully verified in this process (re-verification fast path). */
  private readonly verified = new Map<string, Uint8Array>();
  /**
   * The decoded record of bytes re-verified before, keyed by the bytes object itself (weakly:
   * it lives as long as the caller keeps the row — the read model keeps its rows, so a hot
   * entry is decoded once, not on every search that returns it). Used only after the MAC over
   * those same bytes has just been checked again and equals the fully verified one.
   */
  private readonly decodedByBytes = new WeakMap<Uint8Array, SignedEntry>();
  /** Leaf hashes verified against a signed checkpoint (first verification's inclusion check). */
  private readonly mirror: VerifiedLeaves;

  private constructor(
    readonly storage: StorageBackend,
    readonly log: MerkleLog,
    readonly registry: VerifierRegistry,
    readonly keys: HostKeys,
    readonly clock: Clock,
    readonly random: RandomSource,
    maxVerifiedLeaves: number,
  ) {
    this.mirror = new VerifiedLeaves(storage, maxVerifiedLeaves);
  }

  static async open(opts: LedgerOptions): Promise<Ledger> {
    const { clock, random } = opts;
    const log = await MerkleLog.open(opts.storage, {
      clock,
      ...(opts.origin === undefined ? {} : { origin: opts.origin }),
    });
    const registry = new VerifierRegistry(
      opts.storage,
      clock,
      opts.keyRecordTtlNs === undefined ? undefined : { keyRecordTtlNs: opts.keyRecordTtlNs },
    );
    const keys = await HostKeys.open(opts.keys, random);
    return new Ledger(
      opts.storage,
      log,
      registry,
      keys,
      clock,
      random,
      opts.maxVerifiedLeaves ?? DEFAULT_MAX_MIRROR_LEAVES,
    );
  }

  // ---- principals --------------------------------------------------------------------------

  /** Register a principal whose key the host holds (generated here, stored in the KeySource). */
  async registerPrincipal(
    kind: PrincipalKind,
    name: string,
  ): Promise<PrincipalRecord & { kid: string }> {
    const { publicKey, kid } = await this.keys.createSigningKey(keyIdFor);
    const p = await this.registry.register(kind, name, publicKey);
    return { ...p, kid };
  }

  /** Rotate a host-held principal key: the current key signs its successor (ADR 0004). */
  async rotatePrincipalKey(principalId: string): Promise<string> {
    const current = await this.currentKid(principalId);
    const signer = await this.keys.signer(current);
    if (signer === undefined)
      throw new MemwardenError('KEY_UNKNOWN', 'the host does not hold this key');
    const { publicKey, kid } = await this.keys.createSigningKey(keyIdFor);
    const atNs = this.clock.nowNs();
    const signature = signer.sign(rotationStatement(principalId, kid, atNs));
    // Check, insert the successor and close the old key in one transaction.
    await this.storage.transaction(async (tx) =>
      new VerifierRegistry(tx, this.clock).rotate(principalId, publicKey, { atNs, signature }),
    );
    this.registry.forgetKeys([current]);
    this.queue?.keysChanged(principalId);
    return kid;
  }

  /** Revoke a key; nothing appended from now on verifies under it, whatever its timestamp. */
  async revokeKey(kid: string, reason: string): Promise<void> {
    await this.drain();
    await this.log.refresh(); // other processes may have appended: revoke at the real size
    await this.registry.revoke(kid, reason, { atNs: this.clock.nowNs(), logSize: this.log.size });
    this.queue?.keysChanged();
  }

  /** The newest open key of a principal. */
  async currentKid(principalId: string): Promise<string> {
    const keys = await this.storage.keysOf(principalId);
    const open = keys.filter((k) => k.validUntilNs === undefined && k.revokedAtNs === undefined);
    open.sort((a, b) => (a.validFromNs < b.validFromNs ? 1 : -1));
    const k = open[0];
    if (k === undefined) {
      const p = await this.storage.getPrincipal(principalId);
      throw new MemwardenError(
        p === undefined ? 'PRINCIPAL_UNKNOWN' : 'KEY_REVOKED',
        'no usable key',
        {
          details: { principalId },
        },
      );
    }
    return k.kid;
  }
  // ---- the commit queue (memory/log/commit.ts) ----------------------------------------------

  /** Attach the ledger's one commit queue (`committerOf` does; a second one is refused). */
  attachCommitQueue(q: CommitQueue): void {
    if (this.queue !== undefined && this.queue !== q)
      throw new MemwardenError('STORAGE_CONFLICT', 'the ledger already has a commit queue');
    this.queue = q;
  }

  /** Wait until every queued write has committed or failed. */
  async drain(): Promise<void> {
    await this.queue?.drain();
  }

  // ---- checkpoints and proofs ---------------------------------------------------------------

  /**
   * Sign (or return the existing) checkpoint of the current log size: every leaf committed so
   * far, by this process or another sharing the store (only committed leaves are ever counted,
   * so a checkpoint is published only after its leaves are integrated).
   */
  async checkpoint(): Promise<CheckpointRecord> {
    await this.drain();
    await this.log.refresh();
    const s = this.keys.logSigner;
    return this.log.checkpoint({
      keyName: this.log.origin,
      publicKey: s.publicKey.raw,
      sign: (m) => s.sign(m),
    });
  }

  /** The checkpoint verifier key (`<name>+<hash>+<key>`, C2SP signed-note vkey). */
  get checkpointPublicKey(): Uint8Array {
    return this.keys.logSigner.publicKey.raw;
  }

  /** Check a checkpoint note was signed by this log's key. */
  verifyCheckpointNote(note: string): boolean {
    try {
      verifyCheckpoint(
        note,
        this.log.origin,
        this.checkpointPublicKey,
        (m, sig) => verifyEd25519(this.checkpointPublicKey, m, sig),
        this.log.origin,
      );
      return true;
    } catch {
      return false;
    }
  }

  /** Inclusion proof of an entry against the latest checkpoint covering it (made if needed). */
  async proveEntry(id: string): Promise<{
    leafIndex: number;
    treeSize: number;
    leafHash: Uint8Array;
    hashes: Uint8Array[];
    checkpoint: CheckpointRecord;
  }> {
    const stored = await this.storage.getEntry(id);
    if (stored === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such entry', { details: { id } });
    let cp = await this.storage.latestCheckpoint();
    if (cp === undefined || cp.size <= stored.leafIndex) cp = await this.checkpoint();
    const leaf = await this.storage.getLeaf(stored.leafIndex);
    if (leaf === undefined)
      throw new MemwardenError('LOG_CORRUPT', 'entry leaf missing', { details: { id } });
    const hashes = await this.log.inclusionProof(stored.leafIndex, cp.size);
    return {
      leafIndex: stored.leafIndex,
      treeSize: cp.size,
      leafHash: leaf.hash,
      hashes,
      checkpoint: cp,
    };
  }

  // ---- verification ---------------------------------------------------------------------------

  /**
   * Verify a stored entry end to end (MemLineage §3.6 steps 1–2): strict decode, MAC, the
   * writer's signature under a key valid at its time and log position, and inclusion of its
   * leaf in the latest checkpoint. An entry already verified in this process with the same
   * MAC skips the signature and proof (the MAC binds the bytes under the host's secret).
   */
  async verifyEntry(id: string): Promise<Verification> {
    const stored = await this.storage.getEntry(id);
    if (stored === undefined) return { ok: false, code: 'STORAGE_NOT_FOUND', id, stage: 'load' };
    return this.verifyStored(stored);
  }

  /** {@link verifyMany} of one entry. */
  async verifyStored(stored: StoredEntry): Promise<Verification> {
    return (await this.verifyMany([stored]))[0] as Verification;
  }

  /**
   * Verify a set of stored entries (a search's result set) at once; one verdict per entry, in
   * order, each independent of the others. Per entry: the MAC (SMSR component 1), strict
   * decoding, the stored owner and tier against the signed bytes; an entry already verified in
   * this process with the same MAC stops there. A first verification then checks the writer's
   * signature over the signed bytes cut out of the record (no re-encoding) under a key valid
   * at the entry's time and log position (ADR 0004), and the entry's leaf hash:
   * - under the latest signed checkpoint, against the verified leaf mirror (one hash and a
   *   comparison; `./verified-leaves.ts`), caught up with that checkpoint first if needed;
   * - past it (or if the stored leaves do not fold to the checkpoint root), through audit
   *   paths of all such entries read in one call, against the checkpoint root or, beyond any
   *   checkpoint, the log's current root.
   * Key records come from the registry's read cache (ADR 0014) and the checkpoint's note
   * signature is checked once per checkpoint, so a batch whose leaves the mirror covers makes
   * no storage call at all.
   */
  async verifyMany(stored: readonly StoredEntry[]): Promise<Verification[]> {
    const out = new Array<Verification>(stored.length);
    const todo: FirstCheck[] = [];
    for (let at = 0; at < stored.length; at++) {
      const s = stored[at] as StoredEntry;
      const id = s.id;
      const mac = this.keys.macs.check(s.macKid, s.bytes, s.mac);
      if (!mac.ok) {
        out[at] = { ok: false, code: mac.code, id, stage: 'mac' };
        continue;
      }
      const cached = this.verified.get(id);
      const again = cached !== undefined && bytesEqual(cached, s.mac);
      let entry: SignedEntry;
      let d: EntryForVerify | undefined;
      if (again) {
        const hit = this.decodedByBytes.get(s.bytes);
        if (hit !== undefined) entry = hit;
        else {
          const r = safeDecodeSignedEntry(s.bytes);
          if (!r.ok) {
            out[at] = { ok: false, code: r.error.code, id, stage: 'decode' };
            continue;
          }
          entry = r.value;
          this.decodedByBytes.set(s.bytes, entry);
        }
      } else {
        const r = decodeEntryForVerify(s.bytes, s);
        if (!r.ok) {
          out[at] = { ok: false, code: r.error.code, id, stage: 'decode' };
          continue;
        }
        d = r.value;
        entry = d.entry;
      }
      if (entry.id !== id || entry.ns !== s.owner || entry.tier !== s.tier) {
        out[at] = { ok: false, code: 'ENTRY_INVALID', id, stage: 'decode' };
        continue;
      }
      if (d === undefined) {
        out[at] = { ok: true, entry, leafIndex: s.leafIndex, checkpointSize: undefined };
        continue;
      }
      todo.push({ at, stored: s, d, leafHash: withEntryLeafData(s.bytes, d, leafHashChain) });
    }
    if (todo.length === 0) return out;

    const kids = todo.map((c) => c.d.entry.kid);
    const keys = this.registry.cachedKeyRecords(kids) ?? (await this.registry.keyRecordsFor(kids));
    const signed: FirstCheck[] = [];
    for (const c of todo) {
      const e = c.d.entry;
      const rec = keys.get(e.kid);
      const sig = withEntrySigningInput(c.stored.bytes, c.d, (input) =>
        this.registry.checkWith(rec, e.writer, e.kid, e.ts, input, e.sig, c.stored.leafIndex),
      );
      if (sig.ok) signed.push(c);
      else out[c.at] = { ok: false, code: sig.code, id: c.stored.id, stage: 'signature' };
    }
    if (signed.length > 0) await this.checkInclusions(signed, out);
    return out;
  }

  /**
   * Log inclusion of signature-checked entries; writes each verdict into `out` and remembers
   * the verified ones (see {@link verifyMany}).
   */
  private async checkInclusions(list: readonly FirstCheck[], out: Verification[]): Promise<void> {
    let maxIndex = -1;
    for (const c of list) if (c.stored.leafIndex > maxIndex) maxIndex = c.stored.leafIndex;
    const cps = await this.checkpointsFor(maxIndex);
    const good = cps.good;
    const pass = (c: FirstCheck, checkpointSize: number | undefined): void => {
      this.verified.set(c.stored.id, c.stored.mac);
      out[c.at] = { ok: true, entry: c.d.entry, leafIndex: c.stored.leafIndex, checkpointSize };
    };
    const failInclusion = (c: FirstCheck, code: ErrorCode): void => {
      out[c.at] = { ok: false, code, id: c.stored.id, stage: 'inclusion' };
    };
    /** Entries to prove by audit path, per tree size. */
    const byPath = new Map<number, FirstCheck[]>();
    const viaPath = (c: FirstCheck, size: number): void => {
      const g = byPath.get(size);
      if (g === undefined) byPath.set(size, [c]);
      else g.push(c);
    };
    let mirrorTried = false;
    let refreshed = false;
    for (const c of list) {
      const index = c.stored.leafIndex;
      const lh = c.leafHash;
      if (!Number.isSafeInteger(index) || index < 0) {
        failInclusion(c, 'LOG_INDEX_OUT_OF_RANGE');
      } else if (good !== undefined && index < good.size) {
        if (!mirrorTried && index >= this.mirror.size) {
          mirrorTried = true;
          await this.mirror.extendTo(good.size, good.root);
        }
        const m = this.mirror.matches(index, lh);
        if (m === true) pass(c, good.size);
        else if (m === false) failInclusion(c, 'LOG_PROOF_INVALID');
        else viaPath(c, good.size);
      } else if (cps.bad !== undefined && index < cps.bad) {
        failInclusion(c, 'LOG_CHECKPOINT_SIGNATURE_INVALID');
      } else {
        // A leaf appended by another process sharing the store: catch up with the log first.
        if (index >= this.log.size && !refreshed) {
          refreshed = true;
          await this.log.refresh();
        }
        if (index < this.log.size)
          viaPath(c, -1); // the log's current root
        else failInclusion(c, 'LOG_INDEX_OUT_OF_RANGE');
      }
    }
    for (const [key, group] of byPath) {
      // Size and root taken together, before any await (the current root moves with appends).
      if (key > this.log.size) await this.log.refresh(); // a checkpoint made by another process
      const size = key < 0 ? this.log.size : key;
      const rootP =
        key < 0 ? this.log.root(size) : Promise.resolve((good as CheckpointRecord).root);
      let root: Uint8Array;
      let proofs: (Uint8Array[] | undefined)[];
      try {
        root = await rootP;
        proofs = await this.log.inclusionProofs(
          group.map((c) => c.stored.leafIndex),
          size,
        );
      } catch {
        // The tree of that size cannot be read here (e.g. a size this process's log has not
        // reached): nothing in the group can be proven.
        for (const c of group) failInclusion(c, 'LOG_PROOF_INVALID');
        continue;
      }
      group.forEach((c, i) => {
        const proof = proofs[i];
        if (proof === undefined) failInclusion(c, 'LOG_PROOF_INVALID');
        else if (verifyInclusion(c.stored.leafIndex, size, chainBytes(c.leafHash), proof, root))
          pass(c, key < 0 ? undefined : size);
        else failInclusion(c, 'LOG_ROOT_MISMATCH');
      });
    }
  }

  /**
   * The newest signed checkpoint whose note signature verifies (`good`, verified once per
   * checkpoint and then cached: checkpoints only grow, and an older one still proves the leaves
   * it covers), reading the store only when the cached one does not reach `maxLeafIndex`. `bad`:
   * the size of a newer stored checkpoint whose note does not verify (its leaves fail).
   */
  private async checkpointsFor(
    maxLeafIndex: number,
  ): Promise<{ good: CheckpointRecord | undefined; bad: number | undefined }> {
    const cached = this.checkpointCache;
    if (cached !== undefined && cached.size > maxLeafIndex) return { good: cached, bad: undefined };
    const latest = await this.storage.latestCheckpoint();
    if (latest === undefined || (cached !== undefined && latest.size <= cached.size))
      return { good: cached, bad: undefined };
    if (!this.verifyCheckpointNote(latest.note)) return { good: cached, bad: latest.size };
    const parsed = parseCheckpoint(latest.note.slice(0, latest.note.indexOf('\n\n') + 1));
    if (parsed.size !== latest.size || !bytesEqual(parsed.root, latest.root))
      return { good: cached, bad: latest.size };
    this.checkpointCache = latest;
    return { good: latest, bad: undefined };
  }

  /**
   * Catch the verified leaf mirror up with the latest signed checkpoint now, instead of on the
   * first verification that needs it (a long-running service calls it at start). Returns the
   * number of leaves the mirror covers.
   */
  async primeVerification(): Promise<number> {
    await this.drain();
    const { good } = await this.checkpointsFor(Number.MAX_SAFE_INTEGER);
    if (good !== undefined) await this.mirror.extendTo(good.size, good.root);
    return this.mirror.size;
  }

  /** What the verified leaf mirror holds: leaves covered and bytes allocated. */
  get verifiedLeaves(): { leaves: number; bytes: number } {
    return { leaves: this.mirror.size, bytes: this.mirror.bytes };
  }

  /** Decode an entry's bytes without verifying (for display). */
  static decode(bytes: Uint8Array): SignedEntry {
    return decodeSignedEntry(bytes);
  }

  async close(): Promise<void> {
    await this.drain();
    await this.storage.close();
  }
}
