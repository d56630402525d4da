/**
 * @module memory/log/ledger
 * The provenance ledger: principals and their keys as signed registry statements in the log
 * (ADR 0033), the group commit that sequences every record of the log and checks each signed
 * one against the registry at the position it commits at, checkpoints and proofs, and
 * verification of signed entries (decode strictly → MAC → signature under the registry → log
 * inclusion → liveness from the signed records). It cannot write an entry: signing and
 * committing entries and tombstones is `./commit.ts`, which only the write path
 * (`memory/write/`) may import (ADR 0029); it reaches the group commit through
 * `./commit-port.ts`, which only these two modules import.
 */
import { keyIdFor, parsePrincipalId, principalIdFor } from '../../core/crypto/ids.js';
import { publicKeyFromRaw, verifyEd25519 } from '../../core/crypto/ed25519.js';
import { bytesEqual, fromHex, toHex } from '../../core/bytes.js';
import {
  type SignedEntry,
  type ApiKeyScopeName,
  type EntryForVerify,
  type RegistryBody,
  type SignedRegistryStatement,
  decodeEntryForVerify,
  registryLeafData,
  registrySigningInput,
  registryStatementOfLeaf,
  decodeSignedEntry,
  entryLeafData,
  safeDecodeSignedEntry,
  uuidToString,
  uuidv7,
  withEntryLeafData,
  withEntrySigningInput,
} from '../../core/entry/index.js';
import { MemwardenError, type ErrorCode } from '../../core/errors.js';
import { parseCheckpoint, verifyCheckpoint, verifyInclusion } from '../../core/merkle/index.js';
import {
  type ChainHash,
  chainBytes,
  leafHash as leafHashOf,
  leafHashChain,
} from '../../core/merkle/hash.js';
import { type PrincipalKind, mayWriteTier } from '../../core/trust.js';
import type { Clock, RandomSource } from '../../ports/clock.js';
import type { KeySource } from '../../ports/keysource.js';
import type {
  CheckpointRecord,
  EntryStatus,
  KeyRecord,
  PrincipalRecord,
  QuotaDemand,
  StorageBackend,
  StoredEntry,
} from '../../ports/storage.js';
import { HostKeys } from '../identity/keys.js';
import { type LockedAppend, MerkleLog } from './log.js';
import { VerifierRegistry, rotationStatement } from '../identity/registry.js';
import { RegistryView, type ViewApiKey } from '../identity/registry-view.js';
import { DEFAULT_MAX_MIRROR_LEAVES, VerifiedLeaves } from './verified-leaves.js';
import { type CommitRecord, quotaExceeded, registerSequencer } from './commit-port.js';

/** The outcome of verifying a stored entry. A value: verification failures are findings. */
export type Verification =
  | { ok: true; entry: SignedEntry; leafIndex: number; checkpointSize: number | undefined }
  | {
      ok: false;
      code: ErrorCode;
      id: string;
      stage: 'load' | 'decode' | 'mac' | 'signature' | 'inclusion' | 'state';
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
  /**
   * How long the read path on a shared store (several processes) uses its registry view before
   * reading the registry statements appended since (ns; default 1 s, ADR 0014). Commits always
   * read them under the log head lock; an exclusive store never needs to.
   */
  readonly keyRecordTtlNs?: bigint;
  /**
   * Where the host records the latest checkpoint it signed, outside the database (a source of
   * its own, not `keys`): `memwarden audit` finds a log rolled back before it. Absent: none.
   */
  readonly anchor?: KeySource;
  /**
   * Open without writing anything (`memwarden audit`): a store whose registry predates signed
   * statements is read from its tables instead of being adopted into the log.
   */
  readonly readOnly?: boolean;
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

/** A record queued for the group commit: an entry or tombstone, or a registry statement. */
type Pending = (CommitRecord | RegistryRecord) & {
  /**
   * Failure isolation (issue 17 finding 2): after a failed commit, its writes are retried in
   * halves, each half a commit of its own (this id), so a bad row fails only its own write.
   */
  group?: number;
  resolve: (leafIndex: number) => void;
  reject: (e: unknown) => void;
};

/** A registry statement queued for the group commit, applied to the view at its position. */
interface RegistryRecord {
  readonly id: string;
  readonly leafData: Uint8Array;
  readonly kind: 'registry';
  readonly persist: (tx: StorageBackend, leafIndex: number) => Promise<void>;
  readonly quota: undefined;
  readonly statement: SignedRegistryStatement;
  readonly signed?: undefined;
  readonly supersedes?: undefined;
}

/**
 * Count the quota of the writes in a taken batch, inside its commit transaction: one
 * `consumeQuotas` call for the whole batch (one set-based statement on the SQL backends), or
 * one `consumeQuota` per write where a wrapper lacks it. Returns the writes admitted (in order)
 * and those refused.
 */
async function admitQuotas(
  tx: StorageBackend,
  batch: readonly Pending[],
): Promise<{ admitted: Pending[]; refused: Pending[] }> {
  const counted = batch.filter((p) => p.quota !== undefined);
  if (counted.length === 0) return { admitted: [...batch], refused: [] };
  const demands = counted.map((p) => p.quota as QuotaDemand);
  let verdicts: boolean[];
  if (tx.consumeQuotas !== undefined) verdicts = await tx.consumeQuotas(demands);
  else {
    verdicts = [];
    for (const d of demands)
      verdicts.push((await tx.consumeQuota(d.principal, d.tier, d.dayKey, d.limit)).ok);
  }
  const refused = new Set(counted.filter((_, i) => verdicts[i] !== true));
  if (refused.size === 0) return { admitted: [...batch], refused: [] };
  return { admitted: batch.filter((p) => !refused.has(p)), refused: [...refused] };
}

/**
 * Persist a committed batch in log order: runs of stored entries go to the store in one
 * multi-row `putEntries` call (one statement instead of one per entry), callbacks (tombstones)
 * run in between, so every record still lands after the ones queued before it.
 */
async function persistBatch(
  tx: StorageBackend,
  batch: readonly Pending[],
  start: number,
): Promise<void> {
  let run: StoredEntry[] = [];
  const flush = async (): Promise<void> => {
    if (run.length === 0) return;
    const es = run;
    run = [];
    if (tx.putEntries !== undefined) await tx.putEntries(es);
    else for (const e of es) await tx.putEntry(e);
  };
  for (let i = 0; i < batch.length; i++) {
    const p = (batch[i] as Pending).persist;
    if (typeof p === 'function') {
      await flush();
      await p(tx, start + i);
    } else run.push(p.entry(start + i));
  }
  await flush();
}

/**
 * May a failed commit be retried in parts? Not when the store is unreachable (every write
 * would fail again: no retry storm against a database that is down).
 */
function isolatable(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code !== 'STORAGE_UNAVAILABLE';
}

/** The registry leaves of a store in [start, end). */
async function registryLeaves(
  s: StorageBackend,
  start: number,
  end: number,
): Promise<{ index: number; data: Uint8Array }[]> {
  if (end <= start) return [];
  if (s.getLeavesOfKind !== undefined) return s.getLeavesOfKind('registry', start, end);
  const out: { index: number; data: Uint8Array }[] = [];
  for (let a = start; a < end; a += 4096)
    for (const l of await s.getLeaves(a, Math.min(end, a + 4096)))
      if (l.kind === 'registry') out.push(l);
  return out;
}

/**
 * Apply the statement a committed registry leaf carries to `view`; a leaf that does not decode,
 * is not signed by the host or breaks the rules changes nothing and is returned as an anomaly
 * (the audit reports it).
 */
function applyLeaf(
  view: RegistryView,
  index: number,
  data: Uint8Array,
): { index: number; code: ErrorCode; message: string } | undefined {
  let st: SignedRegistryStatement;
  try {
    st = registryStatementOfLeaf(data);
  } catch (e) {
    return {
      index,
      code: (e as MemwardenError).code ?? 'CODEC_MALFORMED',
      message: 'registry leaf does not decode',
    };
  }
  const v = view.check(st, index);
  if (!v.ok)
    return { index, code: v.code ?? 'KEY_INVALID', message: v.message ?? 'statement refused' };
  view.apply(st, index);
  return undefined;
}

/** Commit transactions open at once: one holding the log head, one queued behind it. */
const COMMIT_DEPTH = 2;
/** Most records one commit transaction takes (bounds its statements and its lock hold). */
const MAX_BATCH = 2048;
const DEFAULT_REGISTRY_TTL_NS = 1_000_000_000n;
const MAX_NAME = 256;
const MAX_REASON = 1024;

export class Ledger {
  private pending: Pending[] = [];
  /** Isolation groups handed out (see {@link Pending.group}). */
  private groups = 0;
  /** Commit transactions open (≤ COMMIT_DEPTH). */
  private inflight = 0;
  /** A commit transaction is waiting for the log head. */
  private waiting = false;
  /** Settles when the most recently opened commit transaction has finished. */
  private lastCommit: Promise<void> = Promise.resolve();
  /** The latest checkpoint whose note signature this process has verified. */
  private checkpointCache: CheckpointRecord | undefined;
  /**
   * id → MAC and leaf index of an entry already fully verified in this process (or signed and
   * committed by it, ADR 0080): the re-verification fast path.
   */
  private readonly verified = new Map<string, { mac: Uint8Array; leafIndex: number }>();
  /**
   * The decoded record of bytes re-verified before, keyed by the bytes object itself (weakly:
   * it lives as long as the caller keeps the row — the read model keeps its rows, so a hot
   * entry is decoded once, not on every search that returns it). Used only after the MAC over
   * those same bytes has just been checked again and equals the fully verified one.
   */
  private readonly decodedByBytes = new WeakMap<Uint8Array, SignedEntry>();
  /** Leaf hashes verified against a signed checkpoint (first verification's inclusion check). */
  private readonly mirror: VerifiedLeaves;
  /**
   * The registry as the log's signed statements define it (ADR 0033): every decision about a
   * writer's kind and key is taken on it, never on the `principals` / `keys` tables.
   */
  private view: RegistryView;
  /** The view holds every registry statement of leaves [0, registrySyncedTo). */
  private registrySyncedTo: number;
  /** When the read path last caught the view up (shared stores). */
  private registrySyncedAt = 0n;
  private registrySync: Promise<void> | undefined;
  private readonly registryTtlNs: bigint;
  /** Registry statements found in the log that do not hold (reported by `audit`). */
  readonly registryAnomalies: { index: number; code: ErrorCode; message: string }[] = [];
  /** Entries whose stored proof failed its self-check before serving (ADR 0033). */
  private readonly unprovable = new Set<string>();
  /**
   * Entries a tombstone in the log deletes (read from the tombstone leaves, which carry their
   * target): the `deleted` column is a cache this overrules (issue 17 finding 7).
   */
  private readonly tombstoned = new Set<string>();
  /** Tombstone leaves read into {@link tombstoned}: [0, tombstonesSyncedTo). */
  private tombstonesSyncedTo = 0;
  /**
   * Claims that an entry is superseded (old id → new version id), from versions this process
   * committed and from the `entry.superseded` events the commit writes; a claim counts only
   * once the new version's signed `sup` confirms it ({@link liveState}).
   */
  private readonly supersededClaims = new Map<string, string>();
  private supersessionLoaded = false;
  /** Records re-signed in a commit because their key changed first (a test and metrics hook). */
  resigned = 0;
  /** Size of the checkpoint last recorded as the anchor by this process. */
  private anchoredSize = 0;

  private constructor(
    readonly storage: StorageBackend,
    readonly log: MerkleLog,
    /**
     * The table-backed registry of earlier versions. The ledger no longer decides anything on
     * it; kept for callers that read key records for display.
     */
    readonly registry: VerifierRegistry,
    readonly keys: HostKeys,
    readonly clock: Clock,
    readonly random: RandomSource,
    maxVerifiedLeaves: number,
    view: RegistryView,
    syncedTo: number,
    registryTtlNs: bigint,
  ) {
    this.mirror = new VerifiedLeaves(storage, maxVerifiedLeaves);
    this.view = view;
    this.registrySyncedTo = syncedTo;
    this.registryTtlNs = registryTtlNs;
    // The commit capability (`./commit.ts`) reaches the group commit through this, not
    // through a method of the ledger (ADR 0029, 0033).
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const ledger = this;
    registerSequencer(this, {
      enqueue: (record) => ledger.enqueue(record),
      get view() {
        return ledger.view;
      },
      refreshRegistry: (force) => ledger.refreshRegistry(force),
      currentKey: (principalId) => ledger.currentKey(principalId),
    });
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
    keys.anchorSource = opts.anchor;
    // The registry view: every statement of the log, in order.
    const size = log.size;
    let view = new RegistryView(keys.logSigner.publicKey.raw);
    const anomalies: { index: number; code: ErrorCode; message: string }[] = [];
    for (const l of await registryLeaves(opts.storage, 0, size)) {
      const r = applyLeaf(view, l.index, l.data);
      if (r !== undefined) anomalies.push(r);
    }
    let legacy = false;
    if (view.statements === 0 && anomalies.length === 0) {
      const principals = await opts.storage.listPrincipals();
      if (principals.length > 0) {
        const keysBy = new Map<string, KeyRecord[]>();
        for (const p of principals) keysBy.set(p.id, await opts.storage.keysOf(p.id));
        view = RegistryView.fromTables(keys.logSigner.publicKey.raw, principals, keysBy);
        legacy = true;
      }
    }
    const ledger = new Ledger(
      opts.storage,
      log,
      registry,
      keys,
      clock,
      random,
      opts.maxVerifiedLeaves ?? DEFAULT_MAX_MIRROR_LEAVES,
      view,
      size,
      opts.keyRecordTtlNs ?? DEFAULT_REGISTRY_TTL_NS,
    );
    ledger.registryAnomalies.push(...anomalies);
    await ledger.syncTombstones(opts.storage, size);
    if (legacy && opts.readOnly !== true) await ledger.adoptLegacyRegistry();
    if (opts.readOnly !== true) await ledger.adoptLegacyApiKeys();
    return ledger;
  }

  // ---- principals --------------------------------------------------------------------------

  /**
   * A store whose principals and keys predate signed registry statements: each key record is
   * appended as an `adopt` statement, once, as it stands (trust on first use of this version);
   * from then on the log is the registry's history.
   */
  private async adoptLegacyRegistry(): Promise<void> {
    const waits: Promise<number>[] = [];
    for (const p of this.view.allPrincipals()) {
      for (const kid of p.keys) {
        const k = this.view.key(kid) as KeyRecord;
        let body: Omit<RegistryBody, 't' | 'v' | 'id' | 'ts'>;
        try {
          body = {
            op: 'adopt',
            principal: p.id,
            kid: k.kid,
            kind: parsePrincipalId(p.id).kind,
            pk: k.publicKey,
            from: k.validFromNs,
            ...(k.validUntilNs === undefined ? {} : { until: k.validUntilNs }),
            ...(k.revokedAtNs === undefined || k.revokedAtLogSize === undefined
              ? {}
              : {
                  at: k.revokedAtNs,
                  size: k.revokedAtLogSize,
                  reason: k.revocationReason ?? 'revoked',
                }),
          };
          waits.push(this.appendStatement(body, async () => {}));
        } catch {
          // An incoherent legacy record (it fails `memwarden audit` too): not adopted.
        }
      }
    }
    await Promise.allSettled(waits);
    await this.drain();
  }

  /** Register a principal whose key the host holds (generated here, stored in the KeySource). */
  async registerPrincipal(
    kind: PrincipalKind,
    name: string,
  ): Promise<PrincipalRecord & { kid: string }> {
    const { publicKey, kid } = await this.keys.createSigningKey(keyIdFor);
    const p = await this.registerPrincipalKey(kind, name, publicKey);
    return { ...p, kid };
  }

  /**
   * Register a principal with its first public key (the host holds the secret, or the
   * principal does and submits signed entries): a signed `key` statement in the log, with the
   * tables written in the same commit. `PRINCIPAL_ALREADY_REGISTERED` if the id or the key
   * exists; never overwrites.
   */
  async registerPrincipalKey(
    kind: PrincipalKind,
    name: string,
    publicKey: Uint8Array,
  ): Promise<PrincipalRecord> {
    const pk = publicKeyFromRaw(publicKey); // KEY_INVALID on a bad key
    if (typeof name !== 'string' || name.length > MAX_NAME) {
      throw new MemwardenError(
        'INPUT_INVALID',
        `principal name must be a string of ≤ ${MAX_NAME} chars`,
      );
    }
    const id = principalIdFor(kind, publicKey);
    const kid = keyIdFor(publicKey);
    await this.refreshRegistry(true);
    if (this.view.principal(id) !== undefined || this.view.key(kid) !== undefined) {
      throw new MemwardenError('PRINCIPAL_ALREADY_REGISTERED', 'principal already registered', {
        details: { id },
      });
    }
    const now = this.clock.nowNs();
    const principal: PrincipalRecord = { id, kind, name, createdAtNs: now };
    const key: KeyRecord = {
      kid,
      principalId: id,
      alg: 'ed25519',
      publicKey: pk.raw,
      validFromNs: now,
    };
    await this.appendStatement(
      { op: 'key', principal: id, kid, kind, pk: pk.raw, from: now },
      (tx) => tx.insertPrincipal(principal, key),
    );
    return principal;
  }

  /**
   * Rotate a host-held principal key: the current key signs its successor (ADR 0004), as a
   * signed `key` statement in the log. Writes queued under the old key that commit after the
   * rotation are re-signed with the new one in their commit; none is acknowledged invalid.
   */
  async rotatePrincipalKey(principalId: string): Promise<string> {
    await this.refreshRegistry(true);
    const current = this.currentKey(principalId);
    const signer = await this.keys.signer(current.kid);
    if (signer === undefined)
      throw new MemwardenError('KEY_UNKNOWN', 'the host does not hold this key');
    const { publicKey, kid } = await this.keys.createSigningKey(keyIdFor);
    let atNs = this.clock.nowNs();
    if (atNs <= current.validFromNs) atNs = current.validFromNs + 1n;
    const consent = signer.sign(rotationStatement(principalId, kid, atNs));
    const record: KeyRecord = { kid, principalId, alg: 'ed25519', publicKey, validFromNs: atNs };
    await this.appendStatement(
      {
        op: 'key',
        principal: principalId,
        kid,
        kind: parsePrincipalId(principalId).kind,
        pk: publicKey,
        from: atNs,
        prev: current.kid,
        consent,
      },
      async (tx) => {
        await tx.insertKey(record);
        const old = await tx.getKey(current.kid);
        if (old !== undefined && old.validUntilNs === undefined)
          await tx.closeKey(current.kid, { validUntilNs: atNs });
      },
    );
    return kid;
  }

  /**
   * Revoke a key: a signed `revoke` statement in the log. Nothing at or past its leaf verifies
   * under the key, whatever its timestamp; writes queued under the key that commit after it
   * are re-signed with the writer's current key if it has one, else refused (`KEY_REVOKED`) —
   * never acknowledged. A checkpoint is signed at once, so a rollback of the revocation is a
   * finding of `memwarden audit`. Returns the statement's leaf index.
   */
  async revokeKey(kid: string, reason: string): Promise<number> {
    if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON) {
      throw new MemwardenError('INPUT_INVALID', `revocation reason must be 1..${MAX_REASON} chars`);
    }
    await this.refreshRegistry(true);
    const rec = this.view.key(kid);
    if (rec === undefined)
      throw new MemwardenError('KEY_UNKNOWN', 'unknown key id', { details: { kid } });
    if (rec.revokedAtNs !== undefined)
      throw new MemwardenError('KEY_REVOKED', 'key already revoked', { details: { kid } });
    const at = this.clock.nowNs();
    const leafIndex = await this.appendStatement(
      { op: 'revoke', principal: rec.principalId, kid, at, reason },
      async (tx, index) => {
        const old = await tx.getKey(kid);
        if (old === undefined || old.revokedAtNs !== undefined) return;
        await tx.closeKey(kid, {
          ...(old.validUntilNs === undefined ? { validUntilNs: at } : {}),
          revokedAtNs: at,
          revokedAtLogSize: index,
          revocationReason: reason,
        });
      },
    );
    await this.checkpoint();
    return leafIndex;
  }

  // ---- API keys (issue 24, ADR 0070) ---------------------------------------------------------

  /**
   * Issue a bearer API key of `principal` (only the SHA-256 of its secret is given): a signed
   * `apikey` statement in the log, the key table row written in the same commit. The statement,
   * not the row, is what authentication and the admin API's key list decide on.
   */
  async issueApiKey(o: {
    principal: string;
    keyHash: Uint8Array;
    scope: ApiKeyScopeName;
    by: string;
    createdAtNs: bigint;
  }): Promise<ViewApiKey> {
    await this.refreshRegistry(true);
    if (this.view.principal(o.principal) === undefined)
      throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    const keyId = toHex(o.keyHash);
    await this.appendStatement(
      {
        op: 'apikey',
        principal: o.principal,
        kid: keyId.slice(0, 16),
        key: o.keyHash,
        scope: o.scope,
        from: o.createdAtNs,
        by: o.by,
      },
      (tx) =>
        tx.putApiKey({
          principalId: o.principal,
          keyHash: o.keyHash,
          createdAtNs: o.createdAtNs,
        }),
    );
    return this.view.apiKey(keyId) as ViewApiKey;
  }

  /**
   * Revoke an API key: a signed `apikey-revoke` statement (by `by`, with the reason); the key
   * table row is marked in the same commit. `KEY_UNKNOWN` / `KEY_REVOKED` otherwise.
   */
  async revokeApiKey(keyId: string, reason: string, by: string): Promise<ViewApiKey> {
    if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON) {
      throw new MemwardenError('INPUT_INVALID', `revocation reason must be 1..${MAX_REASON} chars`);
    }
    await this.refreshRegistry(true);
    const k = this.view.apiKey(keyId);
    if (k === undefined) throw new MemwardenError('KEY_UNKNOWN', 'no such API key');
    if (k.revokedAtNs !== undefined)
      throw new MemwardenError('KEY_REVOKED', 'the key is already revoked');
    const keyHash = fromHex(keyId);
    await this.appendStatement(
      {
        op: 'apikey-revoke',
        principal: k.principal,
        kid: keyId.slice(0, 16),
        key: keyHash,
        at: this.clock.nowNs(),
        reason,
        by,
      },
      async (tx) => {
        try {
          await tx.revokeApiKey(keyHash);
        } catch (e) {
          // The row is gone (an edit at rest): the statement still revokes the key.
          if (!(e instanceof MemwardenError && e.code === 'STORAGE_NOT_FOUND')) throw e;
        }
      },
    );
    return this.view.apiKey(keyId) as ViewApiKey;
  }

  /**
   * An API key by id (hex SHA-256 of its secret) as the signed statements state it, revoked or
   * not; undefined when no statement issued it (a row inserted at rest is not a key). On a
   * shared store, a key unknown here is looked for in statements other processes appended.
   */
  async apiKey(keyId: string): Promise<ViewApiKey | undefined> {
    await this.refreshRegistry();
    if (this.view.apiKey(keyId) === undefined && this.storage.exclusive !== true)
      await this.refreshRegistry(true);
    return this.view.apiKey(keyId);
  }

  /** A principal's API keys as the signed statements state them, oldest first. */
  async apiKeysOf(principal: string): Promise<ViewApiKey[]> {
    await this.refreshRegistry(true);
    return this.view.allApiKeys().filter((k) => k.principal === principal);
  }

  /**
   * A store whose API keys predate API-key statements (ADR 0070): each key row of a registered
   * principal is appended as an `apikey` statement without `by` (and a revoked one with its
   * `apikey-revoke`), once, as it stands — trust on first use of this version, as for the
   * signing keys (ADR 0033). Only while the log has no API-key statement at all.
   */
  private async adoptLegacyApiKeys(): Promise<void> {
    if (this.view.apiKeyStatements > 0 || this.storage.listApiKeys === undefined) return;
    const rows = await this.storage.listApiKeys();
    if (rows.length === 0) return;
    // The scope each key was issued with, where its issue was audited (keys of older versions
    // were all principal keys).
    const scopes = new Map<string, ApiKeyScopeName>();
    for (const e of await this.storage.listAudit({
      actionPrefix: 'apikey.issued',
      limit: 100_000,
    })) {
      const id = e.details['keyId'];
      if (typeof id === 'string' && e.details['scope'] === 'platform') scopes.set(id, 'platform');
    }
    const waits: Promise<number>[] = [];
    for (const r of rows) {
      if (this.view.principal(r.principalId) === undefined) continue; // audit reports it
      const keyId = toHex(r.keyHash);
      const kid = keyId.slice(0, 16);
      waits.push(
        this.appendStatement(
          {
            op: 'apikey',
            principal: r.principalId,
            kid,
            key: r.keyHash,
            scope: scopes.get(keyId) ?? 'principal',
            from: r.createdAtNs,
            reason: 'adopted: issued before API keys were signed statements',
          },
          async () => {},
        ),
      );
      if (r.revoked)
        waits.push(
          this.appendStatement(
            {
              op: 'apikey-revoke',
              principal: r.principalId,
              kid,
              key: r.keyHash,
              at: this.clock.nowNs(),
              reason: 'adopted: revoked before API keys were signed statements',
            },
            async () => {},
          ),
        );
    }
    await Promise.allSettled(waits);
    await this.drain();
  }

  /** The newest open key of a principal (from the signed registry). */
  async currentKid(principalId: string): Promise<string> {
    await this.refreshRegistry(true);
    return this.currentKey(principalId).kid;
  }

  private currentKey(principalId: string): KeyRecord {
    const k = this.view.current(principalId);
    if (k === undefined) {
      const known = this.view.principal(principalId) !== undefined;
      throw new MemwardenError(known ? 'KEY_REVOKED' : 'PRINCIPAL_UNKNOWN', 'no usable key', {
        details: { principalId },
      });
    }
    return k;
  }

  /**
   * A principal's kind as its signed registration states it (undefined: not registered). The
   * `principals.kind` column is never consulted: changing it at rest changes nothing.
   */
  async principalKind(id: string): Promise<PrincipalKind | undefined> {
    await this.refreshRegistry();
    if (this.view.kindOf(id) === undefined) await this.refreshRegistry(true);
    return this.view.kindOf(id);
  }

  /** A key record as the signed registry states it (for display and tooling). */
  async keyRecord(kid: string): Promise<KeyRecord | undefined> {
    await this.refreshRegistry();
    return this.view.key(kid);
  }

  /**
   * A principal as the signed registry states it (kind, registration time); the name is the
   * table's, an untrusted label. Undefined: not registered.
   */
  async getPrincipal(id: string): Promise<PrincipalRecord | undefined> {
    const kind = await this.principalKind(id);
    const p = this.view.principal(id);
    if (kind === undefined || p === undefined) return undefined;
    const row = await this.storage.getPrincipal(id);
    return { id, kind, name: row?.name ?? '', createdAtNs: p.createdAtNs };
  }

  /** Every principal as the signed registry states it (see {@link getPrincipal}). */
  async listPrincipals(): Promise<PrincipalRecord[]> {
    await this.refreshRegistry(true);
    const names = new Map((await this.storage.listPrincipals()).map((p) => [p.id, p.name]));
    return this.view.allPrincipals().map((p) => ({
      id: p.id,
      kind: p.kind,
      name: names.get(p.id) ?? '',
      createdAtNs: p.createdAtNs,
    }));
  }

  /** A principal's keys, oldest first, as the signed registry states them. */
  async keysOf(principalId: string): Promise<KeyRecord[]> {
    await this.refreshRegistry(true);
    const p = this.view.principal(principalId);
    if (p === undefined) return [];
    return p.keys.map((kid) => this.view.key(kid)).filter((k): k is KeyRecord => k !== undefined);
  }

  /** The signed registry as this process holds it (read-only use: audit, tooling). */
  get registryView(): RegistryView {
    return this.view;
  }

  /**
   * Catch the view up with registry statements other processes appended (a shared store), at
   * most once per `keyRecordTtlNs`; `force` reads now. An exclusive store is never behind.
   */
  async refreshRegistry(force = false): Promise<void> {
    if (this.storage.exclusive === true && !force) return;
    const now = this.clock.nowNs();
    if (!force && now - this.registrySyncedAt < this.registryTtlNs && now >= this.registrySyncedAt)
      return;
    if (this.registrySync !== undefined) return this.registrySync;
    this.registrySync = (async () => {
      try {
        const size = await this.storage.logSize();
        const leaves = await registryLeaves(this.storage, this.registrySyncedTo, size);
        this.applyCommittedLeaves(leaves, size);
        await this.syncTombstones(this.storage, size);
        this.registrySyncedAt = now;
      } finally {
        this.registrySync = undefined;
      }
    })();
    return this.registrySync;
  }

  /** Apply committed registry leaves (read in order) to the view, each once. */
  private applyCommittedLeaves(
    leaves: readonly { index: number; data: Uint8Array }[],
    size: number,
  ): void {
    for (const l of leaves) {
      if (l.index < this.registrySyncedTo) continue;
      const r = applyLeaf(this.view, l.index, l.data);
      if (r !== undefined) this.registryAnomalies.push(r);
      this.registrySyncedTo = l.index + 1;
    }
    if (size > this.registrySyncedTo) this.registrySyncedTo = size;
  }

  /** Read the targets of tombstone leaves in [tombstonesSyncedTo, size). */
  private async syncTombstones(s: StorageBackend, size: number): Promise<void> {
    const from = this.tombstonesSyncedTo;
    if (size <= from) return;
    const leaves =
      s.getLeavesOfKind !== undefined
        ? await s.getLeavesOfKind('tombstone', from, size)
        : (await s.getLeaves(from, size)).filter((l) => l.kind === 'tombstone');
    for (const l of leaves) {
      if (l.data.length !== 99) continue; // malformed: the audit reports it
      try {
        this.tombstoned.add(uuidToString(l.data.subarray(3, 19)));
      } catch {
        // not a UUID: the audit reports it
      }
    }
    if (size > this.tombstonesSyncedTo) this.tombstonesSyncedTo = size;
  }

  /** The supersession claims the commits recorded (`entry.superseded` events), read once. */
  private async loadSupersession(): Promise<void> {
    if (this.supersessionLoaded) return;
    this.supersessionLoaded = true;
    for (let after: bigint | undefined; ;) {
      const page = await this.storage.listAudit({
        limit: 1000,
        actionPrefix: 'entry.superseded',
        ...(after === undefined ? {} : { afterNs: after }),
      });
      for (const e of page) {
        const by = e.details.by;
        if (e.subject !== undefined && typeof by === 'string')
          this.supersededClaims.set(e.subject, by);
      }
      if (page.length < 1000) break;
      after = (page[page.length - 1] as { atNs: bigint }).atNs;
    }
  }

  /**
   * Is a verified entry live by its signed records, whatever its columns say (issue 17 finding
   * 7)? Not if a tombstone in the log targets it, nor if a version whose signed `sup` names it
   * exists, nor if its signed expiry has passed and no stored renewal extends it (a renewal
   * moves the stored expiry forward only; a stored expiry cleared or moved before the signed
   * one is a tampered row). `deletedColumn` says what the row claims: a row hidden as deleted
   * with no tombstone in the log is reported too. Undefined: live.
   */
  async liveState(
    stored: StoredEntry,
    entry: SignedEntry,
    nowNs: bigint,
  ): Promise<LiveState | undefined> {
    return liveOf(await this.signedState(stored, entry, nowNs));
  }

  /**
   * {@link liveState} without waiting, when the answer needs nothing loaded or refreshed first
   * (see {@link signedStateNow}): the same answer. Null: only `liveState` can give it. The read
   * path asks this for every hit; a promise per hit was a few percent of a 100k search's CPU on
   * a server (issue 21).
   */
  liveStateNow(stored: StoredEntry, entry: SignedEntry, nowNs: bigint): LiveState | undefined | null {
    const s = this.signedStateNow(stored, entry, nowNs);
    return s === null ? null : liveOf(s);
  }

  /**
   * A verified entry's status as its signed records state it — deleted (a tombstone in the
   * log), superseded (a version whose signed `sup` names it), expired (the signed expiry, or a
   * stored renewal after it, has passed), else live — and, when the row's state columns
   * disagree with them, why (`tampered`; the first disagreement found). What the console shows
   * (issue 24) and what {@link liveState} decides.
   */
  async signedState(stored: StoredEntry, entry: SignedEntry, nowNs: bigint): Promise<SignedState> {
    if (this.storage.exclusive !== true) await this.refreshRegistry();
    if (stored.deleted === true && !this.tombstoned.has(entry.id))
      await this.syncTombstones(this.storage, await this.storage.logSize());
    if (this.tombstoned.has(entry.id)) return deletedState(stored);
    await this.loadSupersession();
    let tampered = deletedColumnClaim(stored);
    const by = stored.supersededBy ?? this.supersededClaims.get(entry.id);
    if (by !== undefined) {
      const newer = await this.storage.getEntry(by);
      const v = newer === undefined ? undefined : (await this.verifyMany([newer]))[0];
      const confirmed = v?.ok === true && v.entry.sup === entry.id;
      if (confirmed) {
        tampered ??= expiryClaim(stored, entry);
        if (stored.supersededBy !== by) tampered ??= `superseded by ${by}, the row says live`;
        return {
          status: 'superseded',
          supersededBy: by,
          ...(tampered === undefined ? {} : { tampered }),
        };
      }
      if (stored.supersededBy !== undefined)
        tampered ??= expiryClaim(stored, entry) ?? 'marked superseded without a signed newer version';
    }
    return expiryState(stored, entry, nowNs, tampered);
  }

  /**
   * {@link signedState} without waiting, when it needs nothing loaded or refreshed: the registry
   * caught up within its time to live as of `nowNs` (the time the caller judges the row at; no
   * clock read of its own) or the store is exclusive, the supersession claims loaded, and the
   * row neither marked deleted without a known tombstone nor claimed superseded (those are
   * checked against the log or a newer version by `signedState`). The same answer; null
   * otherwise.
   */
  signedStateNow(stored: StoredEntry, entry: SignedEntry, nowNs: bigint): SignedState | null {
    if (
      this.storage.exclusive !== true &&
      !(nowNs - this.registrySyncedAt < this.registryTtlNs && nowNs >= this.registrySyncedAt)
    )
      return null;
    const tombstoned = this.tombstoned.has(entry.id);
    if (stored.deleted === true && !tombstoned) return null;
    if (tombstoned) return deletedState(stored);
    if (!this.supersessionLoaded) return null;
    if (stored.supersededBy !== undefined || this.supersededClaims.has(entry.id)) return null;
    return expiryState(stored, entry, nowNs, undefined);
  }

  private fresh(): [bigint, Uint8Array, Uint8Array] {
    const r = this.random.randomBytes(26);
    return [this.clock.nowNs() / 1_000_000n, r.subarray(0, 10), r.slice(10, 26)];
  }

  /** Queue an entry or tombstone (from `./commit.ts`, through the sequencer port). */
  private enqueue(record: CommitRecord): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const p = record as Pending;
      p.resolve = resolve;
      p.reject = reject;
      this.pending.push(p);
      this.pump();
    });
  }

  /** Sign a registry statement with the host log key and commit it; its leaf index. */
  private appendStatement(
    body: Omit<RegistryBody, 't' | 'v' | 'id' | 'ts'>,
    persist: (tx: StorageBackend, leafIndex: number) => Promise<void>,
  ): Promise<number> {
    const [ms, rand] = this.fresh();
    const full = {
      t: 'registry',
      v: 1,
      id: uuidv7(ms, rand),
      ...body,
      ts: this.clock.nowNs(),
    } as RegistryBody;
    const statement: SignedRegistryStatement = {
      ...full,
      sig: this.keys.logSigner.sign(registrySigningInput(full)),
    };
    return new Promise<number>((resolve, reject) => {
      this.pending.push({
        id: statement.id,
        leafData: registryLeafData(statement),
        kind: 'registry',
        persist,
        quota: undefined,
        statement,
        resolve,
        reject,
      });
      this.pump();
    });
  }

  /** Open the next commit transaction if records wait, none is queued for the head, and the pipeline has room. */
  private pump(): void {
    if (this.waiting || this.inflight >= COMMIT_DEPTH || this.pending.length === 0) return;
    this.inflight++;
    this.waiting = true;
    const previous = this.lastCommit;
    let settle!: () => void;
    this.lastCommit = new Promise<void>((r) => (settle = r));
    void this.commitNext(previous).finally(() => {
      this.inflight--;
      settle();
      this.pump();
    });
  }

  /**
   * The next batch: the isolation group at the head of the queue (a part of a failed batch,
   * committed on its own), else up to {@link MAX_BATCH} records that belong to no group.
   */
  private takeBatch(): Pending[] {
    const first = this.pending[0];
    if (first === undefined) return [];
    let n = 0;
    const g = first.group;
    while (n < this.pending.length && n < MAX_BATCH && this.pending[n]?.group === g) n++;
    return this.pending.splice(0, n);
  }

  /**
   * Each record of a taken batch against the registry at the position it will take (issue 17
   * finding 1): the view is first caught up, under the head lock, with every statement other
   * processes committed; statements of the batch apply in order. An entry or tombstone whose
   * key is no longer valid there (rotated, revoked) is re-signed with its writer's current
   * key when the host holds it, else refused with the registry's code; an entry's tier must be
   * within its writer's signed kind; a statement that no longer holds is refused. Verdicts
   * depend only on the records' order, so the positions that quota refusals later shift do
   * not change them.
   */
  private async checkBatch(
    taken: readonly Pending[],
    size: number,
  ): Promise<{ kept: Pending[]; refused: { p: Pending; e: MemwardenError }[] }> {
    let view = this.view;
    let forked = false;
    const kept: Pending[] = [];
    const refused: { p: Pending; e: MemwardenError }[] = [];
    const refuse = (p: Pending, code: ErrorCode, message: string): void => {
      refused.push({ p, e: new MemwardenError(code, message) });
    };
    for (const p of taken) {
      const pos = size + kept.length;
      const st = p.statement;
      if (st !== undefined) {
        const v = view.check(st, pos);
        if (!v.ok) {
          refuse(p, v.code ?? 'KEY_INVALID', v.message ?? 'registry statement refused');
          continue;
        }
        if (!forked) {
          view = view.fork();
          forked = true;
        }
        view.apply(st, pos);
        kept.push(p);
        continue;
      }
      const s = p.signed;
      if (s === undefined) {
        kept.push(p);
        continue;
      }
      const kind = view.kindOf(s.writer);
      if (kind === undefined) {
        refuse(p, 'PRINCIPAL_UNKNOWN', 'unknown writer');
        continue;
      }
      if (s.tier !== undefined && !mayWriteTier(kind, s.tier)) {
        refuse(p, 'ENTRY_INVALID', `a ${kind} principal may not write tier ${s.tier}`);
        continue;
      }
      const v = view.verify(s.writer, s.kid, s.ts, pos);
      if (v.ok) {
        kept.push(p);
        continue;
      }
      const cur = s.resign === undefined ? undefined : view.current(s.writer);
      const signer = cur === undefined ? undefined : await this.keys.signer(cur.kid);
      if (cur === undefined || signer === undefined || s.resign === undefined) {
        refuse(p, v.code, 'the writer key changed before the write committed');
        continue;
      }
      let ts = this.clock.nowNs();
      if (ts < cur.validFromNs) ts = cur.validFromNs;
      s.resign(cur.kid, signer, ts);
      s.kid = cur.kid;
      s.ts = ts;
      this.resigned++;
      const again = view.verify(s.writer, cur.kid, ts, pos);
      if (again.ok) kept.push(p);
      else refuse(p, again.code, 'the writer key changed before the write committed');
    }
    return { kept, refused };
  }

  private async commitNext(previous: Promise<void>): Promise<void> {
    let taken: Pending[] | undefined;
    let batch: Pending[] = [];
    let refused: Pending[] = [];
    let keyRefused: { p: Pending; e: MemwardenError }[] = [];
    let appended: LockedAppend | undefined;
    let view: RegistryView | undefined;
    const base = this.view;
    try {
      await this.storage.transaction(async (tx) => {
        const size = await this.log.lockHead(tx);
        // The head is ours, so the previous transaction has ended in the database; wait for
        // its outcome here too (the log's tip is trusted only after a commit).
        await previous;
        // A single-writer store (no head lock) gives the head without I/O, so without this turn
        // the batch would be taken before the event loop ran since the previous commit: the
        // requests that arrived during it (an HTTP server's) would each get a commit of their
        // own. One turn lets them reach the queue; with a head lock, its wait is that turn.
        if (tx.lockLogHead === undefined) await new Promise<void>((r) => setImmediate(r));
        taken = this.takeBatch();
        this.waiting = false;
        this.pump(); // the next transaction queues for the head while this one commits
        if (taken.length === 0) return;
        // Registry statements other processes committed before the head was ours.
        if (size > this.registrySyncedTo)
          this.applyCommittedLeaves(await registryLeaves(tx, this.registrySyncedTo, size), size);
        const checked = await this.checkBatch(taken, size);
        keyRefused = checked.refused;
        // Quotas next, in queue order: a refused write gets no leaf, no row and no count.
        ({ admitted: batch, refused } = await admitQuotas(tx, checked.kept));
        if (batch.length === 0) return;
        view = this.withStatements(batch, size);
        appended = await this.log.appendLocked(
          size,
          batch.map((p) => ({ data: p.leafData, entryId: p.id, kind: p.kind })),
          tx,
        );
        await persistBatch(tx, batch, appended.start);
      });
    } catch (e) {
      // Only a transaction that failed while waiting for the head still holds the waiting
      // flag: one that had taken its batch cleared it then, and the flag may now be the next
      // transaction's (clearing it here would let a third one open, which can deadlock: it
      // waits for its predecessor while holding the head that predecessor waits for).
      if (taken === undefined) this.waiting = false;
      this.log.abandon();
      if (taken === undefined) {
        // Failed before taking a batch (e.g. no connection): fail what waits, do not spin.
        for (const p of this.pending.splice(0)) p.reject(e);
        return;
      }
      // A failed batch fails no write but its own (issue 17 finding 2): retried in halves,
      // each its own commit, until the record that fails is alone — then only it is refused.
      // Nothing of the failed transaction remains (quota verdicts included).
      if (taken.length > 1 && isolatable(e)) {
        const mid = Math.ceil(taken.length / 2);
        const a = ++this.groups;
        const b = ++this.groups;
        taken.forEach((p, i) => (p.group = i < mid ? a : b));
        this.pending.unshift(...taken);
        return;
      }
      for (const p of taken) p.reject(e);
      return;
    }
    for (const { p, e } of keyRefused) p.reject(e);
    for (const p of refused) {
      const d = p.quota as QuotaDemand;
      p.reject(quotaExceeded(d));
    }
    if (appended === undefined) return;
    this.log.committed(appended);
    if (view !== undefined) {
      // The batch's statements are committed: the view moves with them (the base object is
      // still the one they were checked on; `previous` ordered every other commit before).
      if (this.view === base) this.view = view;
      else
        for (const p of batch)
          if (p.statement !== undefined)
            this.view.apply(p.statement, appended.start + batch.indexOf(p));
    }
    if (this.registrySyncedTo <= appended.start) this.registrySyncedTo = appended.size;
    for (const p of batch) {
      if (p.kind === 'tombstone' && p.leafData.length === 99)
        this.tombstoned.add(uuidToString(p.leafData.subarray(3, 19)));
      if (p.supersedes !== undefined) this.supersededClaims.set(p.supersedes, p.id);
    }
    if (this.tombstonesSyncedTo === appended.start) this.tombstonesSyncedTo = appended.size;
    const start = appended.start;
    // Entries this process signed under the key their kid names, checked at their positions
    // and appended in the transaction just committed: verified here (ADR 0080), so their first
    // read (a consolidation candidate, a search hit) skips repeating the signature check.
    batch.forEach((p, i) => {
      const here = p.signed?.verifiedHere?.();
      if (here !== undefined) {
        this.verified.set(p.id, { mac: here.mac, leafIndex: start + i });
        this.decodedByBytes.set(here.bytes, here.entry);
      }
      p.resolve(start + i);
    });
  }

  /** The view with a batch's statements applied at their final positions (undefined: none). */
  private withStatements(batch: readonly Pending[], start: number): RegistryView | undefined {
    if (!batch.some((p) => p.statement !== undefined)) return undefined;
    const v = this.view.fork();
    batch.forEach((p, i) => {
      if (p.statement !== undefined) v.apply(p.statement, start + i);
    });
    return v;
  }

  /** Wait until every queued write has committed or failed. */
  async drain(): Promise<void> {
    while (this.inflight > 0 || this.pending.length > 0) await this.lastCommit;
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
    const cp = await this.log.checkpoint({
      keyName: this.log.origin,
      publicKey: s.publicKey.raw,
      sign: (m) => s.sign(m),
    });
    // The anchor outside the database: `memwarden audit` finds a log that ends before it.
    if (cp.size > this.anchoredSize) {
      this.anchoredSize = cp.size;
      await this.keys.setAnchor(cp.note);
    }
    return cp;
  }

  /** The latest checkpoint note recorded beside the host's keys (undefined: none). */
  anchoredCheckpoint(): Promise<string | undefined> {
    return this.keys.anchor();
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
    // The leaf hash the entry's own signed bytes commit to (not the stored leaf row), proved
    // against the root of a checkpoint whose signature holds: a proof that does not verify is
    // never served, and the entry is reported unverified from then on (issue 17 finding 7).
    const unprovable = (why: string): MemwardenError => {
      this.unprovable.add(id);
      this.verified.delete(id);
      return new MemwardenError('LOG_PROOF_INVALID', `inclusion proof self-check failed: ${why}`, {
        details: { id, leafIndex: stored.leafIndex, treeSize: cp.size },
      });
    };
    const dec = safeDecodeSignedEntry(stored.bytes);
    if (!dec.ok || dec.value.id !== id) throw unprovable('the stored record does not decode');
    const leafHash = leafHashOf(entryLeafData(dec.value));
    if (!this.verifyCheckpointNote(cp.note))
      throw unprovable('the checkpoint signature does not verify');
    const signed = parseCheckpoint(cp.note.slice(0, cp.note.indexOf('\n\n') + 1));
    if (signed.size !== cp.size || !bytesEqual(signed.root, cp.root))
      throw unprovable('the checkpoint record disagrees with its signed note');
    let hashes: Uint8Array[];
    try {
      hashes = await this.log.inclusionProof(stored.leafIndex, cp.size);
    } catch (e) {
      if (e instanceof MemwardenError && e.code.startsWith('LOG_')) throw unprovable(e.message);
      throw e;
    }
    if (!verifyInclusion(stored.leafIndex, cp.size, leafHash, hashes, cp.root))
      throw unprovable('the proof does not lead to the checkpoint root');
    return {
      leafIndex: stored.leafIndex,
      treeSize: cp.size,
      leafHash,
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

  /**
   * What a stored row's bytes decode to (strict decoding), WITHOUT verifying them: no MAC,
   * signature or inclusion check. Only for a decision that comes out the same whether or not
   * the row verifies — consolidation's "nothing related: ADD" (ADR 0081), which dropping rows
   * cannot change; anything the decision keeps is verified with {@link verifyMany} first.
   * Undefined when the bytes do not decode. Reads the decode of bytes verified before (never
   * adds to that cache).
   */
  unverifiedRecordOf(stored: StoredEntry): SignedEntry | undefined {
    const hit = this.decodedByBytes.get(stored.bytes);
    if (hit !== undefined) return hit;
    const r = safeDecodeSignedEntry(stored.bytes);
    return r.ok ? r.value : undefined;
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
      // Verified before with this MAC and at this log position (a leaf index column edited at
      // rest is not taken from a cache: it is checked again, and fails inclusion).
      const again =
        cached !== undefined && cached.leafIndex === s.leafIndex && bytesEqual(cached.mac, s.mac);
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

    // Key validity and the writer's kind come from the signed registry (ADR 0033), caught up
    // at most once per `keyRecordTtlNs` on a shared store.
    await this.refreshRegistry();
    const view = this.view;
    const signed: FirstCheck[] = [];
    for (const c of todo) {
      const e = c.d.entry;
      // The tier within the writer's signed kind: a `kind` column edited at rest changes nothing.
      const kind = view.kindOf(e.writer);
      if (kind !== undefined && !mayWriteTier(kind, e.tier)) {
        out[c.at] = { ok: false, code: 'ENTRY_INVALID', id: c.stored.id, stage: 'signature' };
        continue;
      }
      const sig = withEntrySigningInput(c.stored.bytes, c.d, (input) =>
        view.verify(e.writer, e.kid, e.ts, c.stored.leafIndex, input, e.sig),
      );
      if (!sig.ok) {
        out[c.at] = { ok: false, code: sig.code, id: c.stored.id, stage: 'signature' };
        continue;
      }
      if (this.unprovable.has(c.stored.id)) {
        out[c.at] = { ok: false, code: 'LOG_PROOF_INVALID', id: c.stored.id, stage: 'inclusion' };
        continue;
      }
      signed.push(c);
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
      this.verified.set(c.stored.id, { mac: c.stored.mac, leafIndex: c.stored.leafIndex });
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

/** What {@link Ledger.liveState} says of a row that is not live. */
export interface LiveState {
  readonly code: ErrorCode;
  readonly reason: string;
  readonly tampered: boolean;
}

/** What {@link Ledger.signedState} says of a row. */
export interface SignedState {
  readonly status: EntryStatus;
  readonly tampered?: string;
  readonly supersededBy?: string;
}

/** Live: undefined; else why not, and whether a column disagreed with the signed records. */
function liveOf(s: SignedState): LiveState | undefined {
  if (s.tampered !== undefined) return { code: 'ENTRY_INVALID', reason: s.tampered, tampered: true };
  if (s.status === 'live') return undefined;
  const reason = s.status === 'superseded' ? `superseded by ${s.supersededBy}` : s.status;
  return { code: 'STORAGE_NOT_FOUND', reason, tampered: false };
}

/** A row a tombstone in the log deletes. */
function deletedState(stored: StoredEntry): SignedState {
  return stored.deleted === true
    ? { status: 'deleted' }
    : { status: 'deleted', tampered: 'a tombstone in the log deletes it, the row says live' };
}

/** A row marked deleted that no tombstone in the log deletes. */
function deletedColumnClaim(stored: StoredEntry): string | undefined {
  return stored.deleted === true ? 'marked deleted without a tombstone in the log' : undefined;
}

/** A stored expiry that is neither the signed one nor a renewal of it. */
function expiryClaim(stored: StoredEntry, entry: SignedEntry): string | undefined {
  if (entry.exp !== undefined)
    return stored.expiresAtNs === undefined || stored.expiresAtNs < entry.exp
      ? 'the stored expiry is neither the signed one nor a renewal of it'
      : undefined;
  return stored.expiresAtNs !== undefined ? 'a never-expiring entry has a stored expiry' : undefined;
}

/** Live or expired by the expiry in force (a renewal after the signed one, else the signed one). */
function expiryState(
  stored: StoredEntry,
  entry: SignedEntry,
  nowNs: bigint,
  tamperedBefore: string | undefined,
): SignedState {
  const claim = expiryClaim(stored, entry);
  const tampered = tamperedBefore ?? claim;
  const expiry =
    entry.exp !== undefined && claim === undefined ? (stored.expiresAtNs as bigint) : entry.exp;
  const status: EntryStatus = expiry !== undefined && expiry <= nowNs ? 'expired' : 'live';
  if (tampered !== undefined) return { status, tampered };
  return status === 'live' ? LIVE : EXPIRED;
}

/** The two untampered answers, shared (every hit of every search asks). */
const LIVE: SignedState = Object.freeze({ status: 'live' });
const EXPIRED: SignedState = Object.freeze({ status: 'expired' });
