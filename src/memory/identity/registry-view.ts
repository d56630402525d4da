/**
 * @module memory/identity/registry-view
 * The verifier registry as the log says it is (issue 17, ADR 0033): principals and keys derived
 * by replaying the signed registry statements (`core/entry/registry`) in log order. Every
 * decision about a writer — its kind, its current key, whether a signature by a key counts at a
 * given time and log position — is taken here, from signed records; the `principals` / `keys`
 * tables are a cache the rest of the system reads for display, never an authority.
 *
 * Statement rules (a statement that breaks one is refused by the ledger before it is appended,
 * and reported by `memwarden audit` if one is found in the log):
 * - `key` without `prev`: a new principal whose id derives from its kind and this first key;
 * - `key` with `prev`: a successor of the principal's current key, consented to by that key
 *   (its signature over `rotationStatement`), starting after it; the old key ends where the new
 *   one starts (ADR 0004);
 * - `revoke`: an unrevoked key; nothing at or past the statement's own leaf, nor signed at or
 *   after `at`, verifies under it;
 * - `adopt`: a key record of a store that predates signed statements, taken as it stood;
 * - `apikey`: a bearer API key (its secret's SHA-256) of a registered principal, issued by it or
 *   an operator (absent `by`: adopted from a store that predates API-key statements);
 * - `apikey-revoke`: an unrevoked API key of that principal, by it or an operator.
 * Every statement must carry the host log key's signature.
 *
 * A store with no statement at all is a legacy store: its view is built from the tables
 * (`fromTables`, unsigned) until a writing process adopts them (`Ledger.open`).
 */
import { bytesEqual, toHex } from '../../core/bytes.js';
import {
  type Ed25519PublicKey,
  publicKeyFromRaw,
  verifyEd25519,
} from '../../core/crypto/ed25519.js';
import { isKeyId, keyIdFor } from '../../core/crypto/ids.js';
import {
  type ApiKeyScopeName,
  type SignedRegistryStatement,
  registrySigningInput,
} from '../../core/entry/index.js';
import type { ErrorCode } from '../../core/errors.js';
import type { PrincipalKind } from '../../core/trust.js';
import type { KeyRecord, PrincipalRecord } from '../../ports/storage.js';
import { type RegistryVerifyResult, rotationStatement } from './registry.js';

/** A principal as the statements define it. */
export interface ViewPrincipal {
  readonly id: string;
  readonly kind: PrincipalKind;
  readonly createdAtNs: bigint;
  /** Its kids, oldest first. */
  readonly keys: readonly string[];
}

/**
 * A bearer API key as the statements define it (issue 24): issued by an `apikey` statement,
 * revoked by an `apikey-revoke`. Authentication and the admin API's key list decide on this,
 * never on the `api_keys` table (a cache for the lookup).
 */
export interface ViewApiKey {
  /** Hex SHA-256 of the secret (the admin API's key id). */
  readonly keyId: string;
  readonly principal: string;
  readonly scope: ApiKeyScopeName;
  readonly createdAtNs: bigint;
  /** Who issued it (absent: adopted from a store that predates API-key statements). */
  readonly issuedBy?: string;
  /** Leaf index of its `apikey` statement. */
  readonly issuedAt: number;
  readonly revokedAtNs?: bigint;
  /** Leaf index of its `apikey-revoke` statement. */
  readonly revokedAt?: number;
  readonly revokedBy?: string;
  readonly revocationReason?: string;
}

/** Why a statement was refused. */
export interface StatementVerdict {
  readonly ok: boolean;
  readonly code?: ErrorCode;
  readonly message?: string;
}

const OK: StatementVerdict = { ok: true };
const refuse = (code: ErrorCode, message: string): StatementVerdict => ({
  ok: false,
  code,
  message,
});

/** Public keys admitted once per kid (a kid is the hash of its key, so this never goes stale). */
const pkCache = new Map<string, Ed25519PublicKey>();
function pkOf(rec: KeyRecord): Ed25519PublicKey | undefined {
  const hit = pkCache.get(rec.kid);
  if (hit !== undefined && hit.equalsRaw(rec.publicKey)) return hit;
  try {
    if (keyIdFor(rec.publicKey) !== rec.kid) return undefined;
    const pk = publicKeyFromRaw(rec.publicKey);
    if (pkCache.size > 100_000) pkCache.clear();
    pkCache.set(rec.kid, pk);
    return pk;
  } catch {
    return undefined;
  }
}

export class RegistryView {
  private readonly principalsById = new Map<string, ViewPrincipal>();
  private readonly keysByKid = new Map<string, KeyRecord>();
  /**
   * Where a key was rotated away: the leaf index of its successor's statement. A record at an
   * earlier position was committed while the key was current, whatever its timestamp (a write
   * signed between the rotation's time and its statement's commit).
   */
  private readonly rotatedAt = new Map<string, number>();
  /** API keys by key id (hex SHA-256 of the secret). */
  private readonly apiKeysById = new Map<string, ViewApiKey>();
  /** Statements applied (0 on a legacy view). */
  statements = 0;
  /** `apikey` / `apikey-revoke` statements applied (0: the store's API keys are not adopted yet). */
  apiKeyStatements = 0;
  /** Changes whenever the view changes (cache key for resolved writers). */
  version = 0;

  /**
   * @param logKey the host's log (checkpoint) public key, which signs every statement
   * @param legacy built from the tables of a store without statements (unsigned)
   */
  constructor(
    private readonly logKey: Uint8Array,
    readonly legacy = false,
  ) {}

  /** A copy to apply a batch's statements to before they commit. */
  fork(): RegistryView {
    const v = new RegistryView(this.logKey, this.legacy);
    for (const [k, p] of this.principalsById) v.principalsById.set(k, p);
    for (const [k, r] of this.keysByKid) v.keysByKid.set(k, r);
    for (const [k, i] of this.rotatedAt) v.rotatedAt.set(k, i);
    for (const [k, a] of this.apiKeysById) v.apiKeysById.set(k, a);
    v.statements = this.statements;
    v.apiKeyStatements = this.apiKeyStatements;
    v.version = this.version;
    return v;
  }

  /** The view of a legacy store: its tables as they are (no signed statement exists yet). */
  static fromTables(
    logKey: Uint8Array,
    principals: readonly PrincipalRecord[],
    keys: ReadonlyMap<string, readonly KeyRecord[]>,
  ): RegistryView {
    const v = new RegistryView(logKey, true);
    for (const p of principals) {
      const ks = [...(keys.get(p.id) ?? [])].sort((a, b) =>
        a.validFromNs < b.validFromNs ? -1 : a.validFromNs > b.validFromNs ? 1 : 0,
      );
      v.principalsById.set(p.id, {
        id: p.id,
        kind: p.kind,
        createdAtNs: p.createdAtNs,
        keys: ks.map((k) => k.kid),
      });
      for (const k of ks) v.keysByKid.set(k.kid, k);
    }
    return v;
  }

  principal(id: string): ViewPrincipal | undefined {
    return this.principalsById.get(id);
  }
  kindOf(id: string): PrincipalKind | undefined {
    return this.principalsById.get(id)?.kind;
  }
  key(kid: string): KeyRecord | undefined {
    return this.keysByKid.get(kid);
  }
  allPrincipals(): ViewPrincipal[] {
    return [...this.principalsById.values()];
  }
  allKeys(): KeyRecord[] {
    return [...this.keysByKid.values()];
  }
  /** An API key by id (hex SHA-256 of its secret), revoked or not. */
  apiKey(keyId: string): ViewApiKey | undefined {
    return this.apiKeysById.get(keyId);
  }
  /** Every API key, in statement order. */
  allApiKeys(): ViewApiKey[] {
    return [...this.apiKeysById.values()];
  }

  /** May `by` change `principal`'s API keys? The principal itself or an operator. */
  private mayAdminister(by: string | undefined, principal: string): boolean {
    return by === undefined || by === principal || this.kindOf(by) === 'operator';
  }

  /** The principal's open key (not rotated away, not revoked), newest first. */
  current(principalId: string): KeyRecord | undefined {
    const p = this.principalsById.get(principalId);
    if (p === undefined) return undefined;
    let best: KeyRecord | undefined;
    for (const kid of p.keys) {
      const k = this.keysByKid.get(kid);
      if (k === undefined || k.validUntilNs !== undefined || k.revokedAtNs !== undefined) continue;
      if (best === undefined || k.validFromNs > best.validFromNs) best = k;
    }
    return best;
  }

  /** Is the statement's signature the host log key's? */
  signedByHost(s: SignedRegistryStatement): boolean {
    try {
      return verifyEd25519(this.logKey, registrySigningInput(s), s.sig);
    } catch {
      return false;
    }
  }

  /** Would `s`, appended at leaf `index`, be a valid change of this state? */
  check(s: SignedRegistryStatement, _index: number): StatementVerdict {
    if (!this.signedByHost(s))
      return refuse('ENTRY_SIGNATURE_INVALID', 'not signed by the host log key');
    const p = this.principalsById.get(s.principal);
    const existing = this.keysByKid.get(s.kid);
    switch (s.op) {
      case 'key': {
        if (existing !== undefined) return refuse('KEY_INVALID', 'key already registered');
        if (s.prev === undefined) {
          if (p !== undefined)
            return refuse('PRINCIPAL_ALREADY_REGISTERED', 'principal already registered');
          return OK;
        }
        if (p === undefined) return refuse('PRINCIPAL_UNKNOWN', 'unknown principal');
        const cur = this.current(s.principal);
        if (cur === undefined) return refuse('KEY_REVOKED', 'no current key to authorise rotation');
        if (cur.kid !== s.prev) return refuse('KEY_INVALID', 'prev is not the current key');
        if ((s.from as bigint) <= cur.validFromNs)
          return refuse('KEY_INVALID', 'rotation instant does not follow the current key');
        const pk = pkOf(cur);
        if (
          pk === undefined ||
          s.consent === undefined ||
          !verifyEd25519(pk, rotationStatement(s.principal, s.kid, s.from as bigint), s.consent)
        )
          return refuse(
            'ENTRY_SIGNATURE_INVALID',
            'rotation consent does not verify under the current key',
          );
        return OK;
      }
      case 'revoke': {
        if (existing === undefined || existing.principalId !== s.principal)
          return refuse('KEY_UNKNOWN', 'unknown key');
        if (existing.revokedAtNs !== undefined) return refuse('KEY_REVOKED', 'key already revoked');
        return OK;
      }
      case 'adopt': {
        if (existing !== undefined)
          return sameRecord(existing, adoptedRecord(s))
            ? OK
            : refuse('KEY_INVALID', 'key already registered');
        if (p !== undefined && p.kind !== s.kind)
          return refuse('PRINCIPAL_INVALID', 'kind differs');
        return OK;
      }
      case 'apikey': {
        if (p === undefined) return refuse('PRINCIPAL_UNKNOWN', 'unknown principal');
        if (this.apiKeysById.has(toHex(s.key as Uint8Array)))
          return refuse('KEY_INVALID', 'API key already registered');
        if (!this.mayAdminister(s.by, s.principal))
          return refuse('AUTH_FORBIDDEN', "only an operator issues another principal's key");
        return OK;
      }
      case 'apikey-revoke': {
        const k = this.apiKeysById.get(toHex(s.key as Uint8Array));
        if (k === undefined || k.principal !== s.principal)
          return refuse('KEY_UNKNOWN', 'unknown API key');
        if (k.revokedAtNs !== undefined) return refuse('KEY_REVOKED', 'API key already revoked');
        if (!this.mayAdminister(s.by, s.principal))
          return refuse('AUTH_FORBIDDEN', "only an operator revokes another principal's key");
        return OK;
      }
    }
  }

  /** Apply a statement {@link check} accepted, at leaf `index`. */
  apply(s: SignedRegistryStatement, index: number): void {
    this.statements++;
    if (s.op === 'apikey' || s.op === 'apikey-revoke') {
      // Bearer keys decide nothing about signatures: the writers' cache key stays.
      this.apiKeyStatements++;
      const keyId = toHex(s.key as Uint8Array);
      if (s.op === 'apikey') {
        this.apiKeysById.set(keyId, {
          keyId,
          principal: s.principal,
          scope: s.scope as ApiKeyScopeName,
          createdAtNs: s.from as bigint,
          ...(s.by === undefined ? {} : { issuedBy: s.by }),
          issuedAt: index,
        });
      } else {
        const k = this.apiKeysById.get(keyId);
        if (k !== undefined)
          this.apiKeysById.set(keyId, {
            ...k,
            revokedAtNs: s.at as bigint,
            revokedAt: index,
            ...(s.by === undefined ? {} : { revokedBy: s.by }),
            revocationReason: s.reason as string,
          });
      }
      return;
    }
    this.version++;
    switch (s.op) {
      case 'key': {
        const rec: KeyRecord = {
          kid: s.kid,
          principalId: s.principal,
          alg: 'ed25519',
          publicKey: s.pk as Uint8Array,
          validFromNs: s.from as bigint,
        };
        this.keysByKid.set(s.kid, rec);
        const p = this.principalsById.get(s.principal);
        if (s.prev !== undefined) {
          const old = this.keysByKid.get(s.prev);
          if (old !== undefined) {
            this.keysByKid.set(old.kid, { ...old, validUntilNs: s.from as bigint });
            this.rotatedAt.set(old.kid, index);
          }
        }
        this.principalsById.set(s.principal, {
          id: s.principal,
          kind: s.kind as PrincipalKind,
          createdAtNs: p?.createdAtNs ?? (s.from as bigint),
          keys: [...(p?.keys ?? []), s.kid],
        });
        return;
      }
      case 'revoke': {
        const k = this.keysByKid.get(s.kid);
        if (k === undefined) return;
        this.keysByKid.set(s.kid, {
          ...k,
          validUntilNs: k.validUntilNs ?? (s.at as bigint),
          revokedAtNs: s.at as bigint,
          revokedAtLogSize: index,
          revocationReason: s.reason as string,
        });
        return;
      }
      case 'adopt': {
        if (this.keysByKid.has(s.kid)) return;
        this.keysByKid.set(s.kid, adoptedRecord(s));
        const p = this.principalsById.get(s.principal);
        this.principalsById.set(s.principal, {
          id: s.principal,
          kind: s.kind as PrincipalKind,
          createdAtNs: p?.createdAtNs ?? (s.from as bigint),
          keys: [...(p?.keys ?? []), s.kid],
        });
        return;
      }
    }
  }

  /**
   * Does a signature by `kid` count as `writer`'s, made at `ts` and committed at leaf
   * `leafIndex`? The rules of ADR 0004 over the signed state: key known and bound to its kid,
   * owned by the writer, the writer registered, not revoked at that position or time, `ts` in
   * the key's window. `msg`/`sig` undefined: the window only (the commit's check of an entry
   * the host has just signed itself).
   */
  verify(
    writer: string,
    kid: string,
    ts: bigint,
    leafIndex: number | undefined,
    msg?: Uint8Array,
    sig?: Uint8Array,
  ): RegistryVerifyResult {
    const rec = isKeyId(kid) ? this.keysByKid.get(kid) : undefined;
    if (rec === undefined) return { ok: false, code: 'KEY_UNKNOWN' };
    const pk = pkOf(rec);
    if (pk === undefined || rec.principalId !== writer) return { ok: false, code: 'KEY_UNKNOWN' };
    if (!this.principalsById.has(writer)) return { ok: false, code: 'PRINCIPAL_UNKNOWN' };
    if (rec.revokedAtLogSize !== undefined) {
      const li = leafIndex;
      if (li === undefined || !Number.isSafeInteger(li) || li < 0 || li >= rec.revokedAtLogSize)
        return { ok: false, code: 'KEY_REVOKED' };
    }
    if (typeof ts !== 'bigint') return { ok: false, code: 'KEY_NOT_YET_VALID' };
    // Revoked by a statement at `revokedAtLogSize`: a record before it in the log was committed
    // while the key was valid (its timestamp may pass the revocation's, which is taken when the
    // revocation is decided, before its statement commits — the same race as a rotation's);
    // at or after it, nothing verifies (above). Only a revocation without a log position (a
    // legacy table row) is judged by its time alone.
    if (
      rec.revokedAtNs !== undefined &&
      rec.revokedAtLogSize === undefined &&
      ts >= rec.revokedAtNs
    )
      return { ok: false, code: 'KEY_REVOKED' };
    if (ts < rec.validFromNs) return { ok: false, code: 'KEY_NOT_YET_VALID' };
    if (rec.validUntilNs !== undefined && ts >= rec.validUntilNs) {
      // Rotated away by a statement at `at`: a record before it in the log was committed while
      // the key was current (its timestamp may pass the rotation's, which is taken before the
      // statement commits); at or after it, the commit re-signed it or it is expired. A key
      // closed by its revocation (no rotation) is bounded by the revocation's position alike.
      const at =
        this.rotatedAt.get(kid) ??
        (rec.revokedAtLogSize !== undefined && rec.validUntilNs === rec.revokedAtNs
          ? rec.revokedAtLogSize
          : undefined);
      const li = leafIndex;
      if (at === undefined || li === undefined || !Number.isSafeInteger(li) || li < 0 || li >= at)
        return { ok: false, code: 'KEY_EXPIRED' };
    }
    if (msg === undefined || sig === undefined) return { ok: true };
    return verifyEd25519(pk, msg, sig)
      ? { ok: true }
      : { ok: false, code: 'ENTRY_SIGNATURE_INVALID' };
  }
}

/** The key record an `adopt` statement states. */
export function adoptedRecord(s: SignedRegistryStatement): KeyRecord {
  return {
    kid: s.kid,
    principalId: s.principal,
    alg: 'ed25519',
    publicKey: s.pk as Uint8Array,
    validFromNs: s.from as bigint,
    ...(s.until === undefined ? {} : { validUntilNs: s.until }),
    ...(s.at === undefined ? {} : { revokedAtNs: s.at }),
    ...(s.size === undefined ? {} : { revokedAtLogSize: s.size }),
    ...(s.reason === undefined ? {} : { revocationReason: s.reason }),
  };
}

/** Do two key records state the same key and validity? */
export function sameRecord(a: KeyRecord, b: KeyRecord): boolean {
  return (
    a.kid === b.kid &&
    a.principalId === b.principalId &&
    a.alg === b.alg &&
    bytesEqual(a.publicKey, b.publicKey) &&
    a.validFromNs === b.validFromNs &&
    a.validUntilNs === b.validUntilNs &&
    a.revokedAtNs === b.revokedAtNs &&
    a.revokedAtLogSize === b.revokedAtLogSize &&
    a.revocationReason === b.revocationReason
  );
}
