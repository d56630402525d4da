/**
 * @module memory/identity/registry
 * The verifier registry (MemLineage §3.3, §4.5): principal → public keys, with registration
 * that never overwrites, explicit signed rotation and revocation, and the one place that
 * decides whether a signature by `kid` counts as the writer's at a given time and log position.
 *
 * Trust decisions made here:
 * - A principal id is derived from its first key (`core/crypto/ids`); registering an existing
 *   id is `PRINCIPAL_ALREADY_REGISTERED` and changes nothing (§4.5: no silent rebinding).
 * - Rotation must be signed by the principal's CURRENT key over a domain-separated statement
 *   ({@link rotationStatement}); the old key closes at the rotation instant.
 * - Revocation closes the key at `atNs` and, if given, at a log size: a leaf at or past that
 *   size never verifies under the key, whatever timestamp a thief backdated it to.
 * - The store is not trusted to keep kid ↔ key consistent: every key read is checked against
 *   its kid (a rebound kid verifies nothing).
 *
 * Caching: validated public keys (KeyObjects) are cached by kid forever — a kid is the hash of
 * its key, so the entry can never go stale. Key *records* (validity, revocation) are re-read
 * from the store by {@link VerifierRegistry.verifyFor} (the write path's check of a submitted
 * entry). The read path ({@link VerifierRegistry.keyRecordsFor} + {@link
 * VerifierRegistry.checkWith}) reuses a record for at most `keyRecordTtlNs` (1 s by default;
 * ADR 0014): a rotation or revocation through this registry drops it at once, one made by
 * another process sharing the store is honoured within that window. The embedded store is
 * locked to one process, so there the cache is exact.
 */
import { utf8 } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import { type Ed25519PublicKey, publicKeyFromRaw, verifyEd25519 } from '../../core/crypto/ed25519.js';
import { isKeyId, keyIdFor, parsePrincipalId, principalIdFor } from '../../core/crypto/ids.js';
import type { PrincipalKind } from '../../core/trust.js';
import type { Clock } from '../../ports/clock.js';
import type { KeyRecord, PrincipalRecord, RegistryStore } from '../../ports/storage.js';

/** Why {@link VerifierRegistry.verifyFor} refused a signature. */
export type RegistryVerifyCode =
  | 'KEY_UNKNOWN'
  | 'KEY_REVOKED'
  | 'KEY_NOT_YET_VALID'
  | 'KEY_EXPIRED'
  | 'PRINCIPAL_UNKNOWN'
  | 'ENTRY_SIGNATURE_INVALID';

/** A verification verdict: a value, never an exception, for attacker-controlled input. */
export type RegistryVerifyResult = { ok: true } | { ok: false; code: RegistryVerifyCode };

/** The current key's consent to a rotation (MemLineage §4.5 `update_key`, made explicit). */
export interface RotationProof {
  /** The rotation instant: old key's `validUntilNs`, new key's `validFromNs`. */
  readonly atNs: bigint;
  /** Ed25519 signature by the principal's current key over {@link rotationStatement}. */
  readonly signature: Uint8Array;
}

/** Options of {@link VerifierRegistry}. */
export interface VerifierRegistryOptions {
  /**
   * How far a rotation instant may lie from the registry clock (ns). Bounds pre-signed
   * far-future rotations and backdated ones. Default 5 minutes.
   */
  readonly maxRotationSkewNs?: bigint;
  /**
   * How long the read path reuses a key record before reading it again (ns); 0 reads it for
   * every batch. Default 1 s (ADR 0014).
   */
  readonly keyRecordTtlNs?: bigint;
}

const DEFAULT_SKEW_NS = 5n * 60n * 1_000_000_000n;
const DEFAULT_KEY_RECORD_TTL_NS = 1_000_000_000n;
const MAX_NAME = 256;
const MAX_REASON = 1024;

/**
 * The bytes a rotation proof signs: `memwarden/rotate/v1\n${principalId}\n${newKid}\n${atNs}`
 * (UTF-8, decimal atNs). The prefix separates it from every other memwarden signature
 * (entries are canonical CBOR maps and cannot start with "m").
 */
export function rotationStatement(principalId: string, newKid: string, atNs: bigint): Uint8Array {
  return utf8.encode(`memwarden/rotate/v1\n${principalId}\n${newKid}\n${atNs.toString(10)}`);
}

function ok(): RegistryVerifyResult {
  return { ok: true };
}
function fail(code: RegistryVerifyCode): RegistryVerifyResult {
  return { ok: false, code };
}

/** The current (open) key of a principal: not rotated away, not revoked; newest first. */
function currentKeyOf(keys: readonly KeyRecord[]): KeyRecord | undefined {
  let best: KeyRecord | undefined;
  for (const k of keys) {
    if (k.validUntilNs !== undefined || k.revokedAtNs !== undefined) continue;
    if (best === undefined || k.validFromNs > best.validFromNs) best = k;
  }
  return best;
}

/** Principal registry and signature verifier over the {@link RegistryStore} port. */
export class VerifierRegistry {
  private readonly keyCache = new Map<string, Ed25519PublicKey>();
  /** Principals are never deleted by the port, so "exists" can be cached. */
  private readonly knownPrincipals = new Set<string>();
  private readonly maxSkewNs: bigint;
  private readonly recordTtlNs: bigint;
  /** Key records for the read path, with the clock reading when each was read. */
  private readonly records = new Map<string, { readonly rec: KeyRecord; readonly at: bigint }>();
  /** Key record objects whose key was validated against their kid (records are immutable). */
  private readonly checkedRecords = new WeakMap<KeyRecord, Ed25519PublicKey>();

  constructor(
    private readonly store: RegistryStore,
    private readonly clock: Clock,
    opts?: VerifierRegistryOptions,
  ) {
    this.maxSkewNs = opts?.maxRotationSkewNs ?? DEFAULT_SKEW_NS;
    this.recordTtlNs = opts?.keyRecordTtlNs ?? DEFAULT_KEY_RECORD_TTL_NS;
  }

  /**
   * Register a principal whose id derives from `publicKey`; the key becomes valid now.
   * Throws `KEY_INVALID` (bad key), `INPUT_INVALID` (bad name), `PRINCIPAL_ALREADY_REGISTERED`
   * if the id — or the key's kid — already exists. Never overwrites anything.
   */
  async register(
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
    const now = this.clock.nowNs();
    if (
      (await this.store.getPrincipal(id)) !== undefined ||
      (await this.store.getKey(kid)) !== undefined
    ) {
      throw new MemwardenError('PRINCIPAL_ALREADY_REGISTERED', 'principal already registered', {
        details: { id },
      });
    }
    const principal: PrincipalRecord = { id, kind, name, createdAtNs: now };
    const key: KeyRecord = {
      kid,
      principalId: id,
      alg: 'ed25519',
      publicKey: pk.raw,
      validFromNs: now,
    };
    try {
      await this.store.insertPrincipal(principal, key);
    } catch (e) {
      // Lost a race with a concurrent registration of the same key: same verdict.
      if (e instanceof MemwardenError && e.code === 'STORAGE_CONFLICT') {
        throw new MemwardenError('PRINCIPAL_ALREADY_REGISTERED', 'principal already registered', {
          cause: e,
          details: { id },
        });
      }
      throw e;
    }
    this.keyCache.set(kid, pk);
    this.knownPrincipals.add(id);
    return principal;
  }

  /**
   * Rotate `principalId` to `newPublicKey` at `proof.atNs`, authorised by the current key's
   * signature over {@link rotationStatement}. Entries signed by the old key before `atNs` stay
   * verifiable; later ones fail with `KEY_EXPIRED`.
   *
   * Errors: `PRINCIPAL_INVALID` / `PRINCIPAL_UNKNOWN`; `KEY_REVOKED` when no current key is
   * left; `KEY_INVALID` for a bad or already-known new key, or an `atNs` outside
   * (current.validFromNs, now ± skew]; `ENTRY_SIGNATURE_INVALID` for a bad proof.
   *
   * Not atomic over the bare port (insert new key, then close old one); run it inside
   * `StorageBackend.transaction` when wiring.
   */
  async rotate(
    principalId: string,
    newPublicKey: Uint8Array,
    proof: RotationProof,
  ): Promise<KeyRecord> {
    parsePrincipalId(principalId);
    if ((await this.store.getPrincipal(principalId)) === undefined) {
      throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal', {
        details: { principalId },
      });
    }
    const newPk = publicKeyFromRaw(newPublicKey);
    const newKid = keyIdFor(newPublicKey);
    if ((await this.store.getKey(newKid)) !== undefined) {
      throw new MemwardenError('KEY_INVALID', 'new key is already registered', {
        details: { kid: newKid },
      });
    }
    const current = currentKeyOf(await this.store.keysOf(principalId));
    if (current === undefined) {
      throw new MemwardenError('KEY_REVOKED', 'principal has no current key to authorise rotation');
    }
    const at = proof.atNs;
    const now = this.clock.nowNs();
    if (
      typeof at !== 'bigint' ||
      at <= current.validFromNs ||
      at > now + this.maxSkewNs ||
      at < now - this.maxSkewNs
    ) {
      throw new MemwardenError('KEY_INVALID', 'rotation instant out of range', {
        details: { atNs: String(at) },
      });
    }
    const currentPk = this.publicKeyFor(current);
    const stmt = rotationStatement(principalId, newKid, at);
    if (currentPk === undefined || !verifyEd25519(currentPk, stmt, proof.signature)) {
      throw new MemwardenError(
        'ENTRY_SIGNATURE_INVALID',
        'rotation proof does not verify under the current key',
      );
    }
    const record: KeyRecord = {
      kid: newKid,
      principalId,
      alg: 'ed25519',
      publicKey: newPk.raw,
      validFromNs: at,
    };
    await this.store.insertKey(record);
    await this.store.closeKey(current.kid, { validUntilNs: at });
    this.records.delete(current.kid);
    this.keyCache.set(newKid, newPk);
    return record;
  }

  /**
   * Revoke `kid`: nothing signed at or after `atNs` verifies, nor (with `logSize`) any leaf at
   * index ≥ `logSize`. Also closes the key's validity at `atNs` unless rotation already did.
   * Errors: `KEY_UNKNOWN`; `KEY_REVOKED` if already revoked; `INPUT_INVALID` for bad options.
   */
  async revoke(
    kid: string,
    reason: string,
    opts: { atNs: bigint; logSize?: number },
  ): Promise<void> {
    if (typeof reason !== 'string' || reason.length > MAX_REASON) {
      throw new MemwardenError(
        'INPUT_INVALID',
        `revocation reason must be a string of ≤ ${MAX_REASON} chars`,
      );
    }
    if (typeof opts.atNs !== 'bigint' || opts.atNs < 0n) {
      throw new MemwardenError('INPUT_INVALID', 'atNs must be a non-negative bigint');
    }
    if (opts.logSize !== undefined && !(Number.isSafeInteger(opts.logSize) && opts.logSize >= 0)) {
      throw new MemwardenError('INPUT_INVALID', 'logSize must be a non-negative integer');
    }
    const rec = isKeyId(kid) ? await this.store.getKey(kid) : undefined;
    if (rec === undefined)
      throw new MemwardenError('KEY_UNKNOWN', 'unknown key id', { details: { kid } });
    if (rec.revokedAtNs !== undefined) {
      throw new MemwardenError('KEY_REVOKED', 'key already revoked', { details: { kid } });
    }
    const patch: {
      validUntilNs?: bigint;
      revokedAtNs: bigint;
      revokedAtLogSize?: number;
      revocationReason: string;
    } = { revokedAtNs: opts.atNs, revocationReason: reason };
    if (rec.validUntilNs === undefined) patch.validUntilNs = opts.atNs;
    if (opts.logSize !== undefined) patch.revokedAtLogSize = opts.logSize;
    this.records.delete(kid);
    try {
      await this.store.closeKey(kid, patch);
    } finally {
      this.records.delete(kid);
    }
  }

  /**
   * Drop cached key records (all, or those of `kids`): after a rotation or revocation made
   * through another registry instance on the same store (e.g. inside a transaction).
   */
  forgetKeys(kids?: Iterable<string>): void {
    if (kids === undefined) this.records.clear();
    else for (const k of kids) this.records.delete(k);
  }

  /** The stored record of `kid`, or undefined (also for a malformed kid). */
  async resolveKey(kid: string): Promise<KeyRecord | undefined> {
    return isKeyId(kid) ? this.store.getKey(kid) : undefined;
  }

  /**
   * Does `sig` over `msg` count as `writerPrincipalId`'s signature made at `signedAtNs`
   * (and, on the read path, committed at log position `opts.leafIndex`)? Checks in order:
   * key known and consistent with its kid (`KEY_UNKNOWN`), owned by the writer (`KEY_UNKNOWN`),
   * writer registered (`PRINCIPAL_UNKNOWN`), log-position revocation (`KEY_REVOKED` — also when
   * the key has a revocation log size and no `leafIndex` is given: fail closed), time
   * revocation (`KEY_REVOKED`), `signedAtNs` ∈ [validFrom, validUntil) (`KEY_NOT_YET_VALID` /
   * `KEY_EXPIRED`), then the strict Ed25519 check (`ENTRY_SIGNATURE_INVALID`). Never throws
   * on bad input.
   */
  async verifyFor(
    writerPrincipalId: string,
    kid: string,
    signedAtNs: bigint,
    msg: Uint8Array,
    sig: Uint8Array,
    opts?: { leafIndex?: number },
  ): Promise<RegistryVerifyResult> {
    if (!isKeyId(kid)) return fail('KEY_UNKNOWN');
    const rec = await this.store.getKey(kid);
    if (rec === undefined) return fail('KEY_UNKNOWN');
    this.records.set(kid, { rec, at: this.clock.nowNs() });
    if (rec.principalId === writerPrincipalId) await this.learnPrincipal(writerPrincipalId);
    return this.checkWith(rec, writerPrincipalId, kid, signedAtNs, msg, sig, opts?.leafIndex);
  }

  /**
   * The key records of `kids` for the read path (one store read per record not cached or older
   * than `keyRecordTtlNs`), with their principals' registration looked up, ready for
   * {@link checkWith}. Unknown and malformed kids are absent from the result.
   */
  async keyRecordsFor(kids: Iterable<string>): Promise<Map<string, KeyRecord>> {
    const out = new Map<string, KeyRecord>();
    let now: bigint | undefined;
    for (const kid of kids) {
      if (out.has(kid) || !isKeyId(kid)) continue;
      now ??= this.clock.nowNs();
      const hit = this.records.get(kid);
      let rec: KeyRecord | undefined;
      if (hit !== undefined && now - hit.at < this.recordTtlNs && now >= hit.at) rec = hit.rec;
      else {
        rec = await this.store.getKey(kid);
        if (rec === undefined) {
          this.records.delete(kid);
          continue;
        }
        this.records.set(kid, { rec, at: now });
      }
      await this.learnPrincipal(rec.principalId);
      out.set(kid, rec);
    }
    return out;
  }

  /**
   * {@link keyRecordsFor} when every record is cached, fresh and its principal known — the
   * steady state of a reader — without an await; undefined when any of them needs a read.
   */
  cachedKeyRecords(kids: Iterable<string>): Map<string, KeyRecord> | undefined {
    const out = new Map<string, KeyRecord>();
    let now: bigint | undefined;
    for (const kid of kids) {
      if (out.has(kid)) continue;
      const hit = this.records.get(kid);
      if (hit === undefined) return undefined;
      now ??= this.clock.nowNs();
      if (now - hit.at >= this.recordTtlNs || now < hit.at) return undefined;
      if (!this.knownPrincipals.has(hit.rec.principalId)) return undefined;
      out.set(kid, hit.rec);
    }
    return out;
  }

  /**
   * The rules of {@link verifyFor} over an already read key record (`undefined`: not found),
   * synchronously. The writer's registration must have been looked up (by {@link verifyFor} or
   * {@link keyRecordsFor}); an unknown one is `PRINCIPAL_UNKNOWN`.
   */
  checkWith(
    rec: KeyRecord | undefined,
    writerPrincipalId: string,
    kid: string,
    signedAtNs: bigint,
    msg: Uint8Array,
    sig: Uint8Array,
    leafIndex?: number,
  ): RegistryVerifyResult {
    if (rec === undefined || rec.kid !== kid) return fail('KEY_UNKNOWN');
    const pk = this.publicKeyFor(rec);
    if (pk === undefined || rec.principalId !== writerPrincipalId) return fail('KEY_UNKNOWN');
    if (!this.knownPrincipals.has(writerPrincipalId)) return fail('PRINCIPAL_UNKNOWN');
    if (rec.revokedAtLogSize !== undefined) {
      const li = leafIndex;
      if (li === undefined || !Number.isSafeInteger(li) || li < 0 || li >= rec.revokedAtLogSize) {
        return fail('KEY_REVOKED');
      }
    }
    if (typeof signedAtNs !== 'bigint') return fail('KEY_NOT_YET_VALID');
    if (rec.revokedAtNs !== undefined && signedAtNs >= rec.revokedAtNs) return fail('KEY_REVOKED');
    if (signedAtNs < rec.validFromNs) return fail('KEY_NOT_YET_VALID');
    if (rec.validUntilNs !== undefined && signedAtNs >= rec.validUntilNs)
      return fail('KEY_EXPIRED');
    return verifyEd25519(pk, msg, sig) ? ok() : fail('ENTRY_SIGNATURE_INVALID');
  }

  /** Principals are never deleted by the port, so a registered one is remembered. */
  private async learnPrincipal(id: string): Promise<void> {
    if (this.knownPrincipals.has(id)) return;
    if ((await this.store.getPrincipal(id)) !== undefined) this.knownPrincipals.add(id);
  }

  /**
   * The cached, validated key for `rec`, or undefined when the stored key is unusable or does
   * not hash to its kid (a store that rebinds a kid gets no signature accepted).
   */
  private publicKeyFor(rec: KeyRecord): Ed25519PublicKey | undefined {
    // A record object already checked (the read cache hands out the same one per batch).
    const seen = this.checkedRecords.get(rec);
    if (seen !== undefined) return seen;
    const pk = this.publicKeyOf(rec);
    if (pk !== undefined) this.checkedRecords.set(rec, pk);
    return pk;
  }

  private publicKeyOf(rec: KeyRecord): Ed25519PublicKey | undefined {
    const cached = this.keyCache.get(rec.kid);
    if (cached !== undefined && cached.equalsRaw(rec.publicKey)) return cached;
    if (rec.alg !== 'ed25519') return undefined;
    try {
      if (keyIdFor(rec.publicKey) !== rec.kid) return undefined;
      const pk = publicKeyFromRaw(rec.publicKey);
      this.keyCache.set(rec.kid, pk);
      return pk;
    } catch {
      return undefined;
    }
  }
}
