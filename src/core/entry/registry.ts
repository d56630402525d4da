/**
 * @module core/entry/registry
 * The registry statement, version 1 (issue 17, ADR 0033): a signed record of one change to the
 * verifier registry — a principal's first key, a successor key, a revocation, or the adoption
 * of a key record that predates signed statements — appended to the Merkle log like entries
 * and tombstones. The log, not a table, is then the registry's history: the order of key
 * changes relative to writes is the order of their leaves, a revocation's log position is its
 * own leaf index, and a statement cannot be removed, reordered or rolled back without breaking
 * the tree that signed checkpoints commit to.
 *
 * Statements are signed by the host's log key (the key that signs checkpoints) over
 * `"memwarden/registry/v1\n" ‖ canonical(body)`; a successor key also carries the consent of
 * the key it replaces (its signature over the rotation statement, ADR 0004). The record is
 * canonical CBOR through the generic codec (`core/codec/cbor`); the leaf data is
 * `"rg:" ‖ record`, so a leaf carries its whole statement.
 */
import { bytesEqual, concatBytes, toHex } from '../bytes.js';
import { decodeStrict, encodeCanonical } from '../codec/cbor.js';
import {
  isKeyId,
  isPrincipalId,
  keyIdFor,
  parsePrincipalId,
  principalIdFor,
} from '../crypto/ids.js';
import { MemwardenError, type SafeResult, safely } from '../errors.js';
import { type PrincipalKind, isPrincipalKind } from '../trust.js';
import { isUuidV7String } from './uuidv7.js';

/**
 * What a statement does: a signing key (`key`, `revoke`, `adopt`), or a bearer API key
 * (`apikey` issued, `apikey-revoke`; issue 24) — every key change is a statement in the log.
 */
export type RegistryOp = 'key' | 'revoke' | 'adopt' | 'apikey' | 'apikey-revoke';

/** What an API key may do (the scope its secret's prefix also names). */
export type ApiKeyScopeName = 'principal' | 'platform';

/** The signed body of a registry statement. */
export interface RegistryBody {
  readonly t: 'registry';
  readonly v: 1;
  /** UUIDv7 of the statement. */
  readonly id: string;
  /**
   * `key`: a principal's first key (no `prev`) or its successor (`prev` = the current key,
   * `consent` = that key's signature over the rotation statement); valid from `from`.
   * `revoke`: key `kid` revoked at `at` (ns) and at this statement's own log position.
   * `adopt`: a key record as it stood before signed statements existed (legacy store), with
   * every validity field it had.
   */
  readonly op: RegistryOp;
  readonly principal: string;
  /**
   * The signing key's id (`key`, `revoke`, `adopt`); for `apikey` / `apikey-revoke` the API
   * key's short id: the first 16 hex digits of `key`.
   */
  readonly kid: string;
  /** `apikey`, `apikey-revoke`: the SHA-256 of the API key's secret (32 bytes; never the secret). */
  readonly key?: Uint8Array;
  /** `apikey`: what the key may do. */
  readonly scope?: ApiKeyScopeName;
  /** `apikey`, `apikey-revoke`: the principal that made the change (absent: adopted). */
  readonly by?: string;
  /** The principal kind (`key`, `adopt`): must be the kind its id names. */
  readonly kind?: PrincipalKind;
  /** The 32-byte Ed25519 public key (`key`, `adopt`); `kid` is its hash. */
  readonly pk?: Uint8Array;
  /** Valid from (ns): `key`, `adopt`. */
  readonly from?: bigint;
  /** `key`: the key this one succeeds. */
  readonly prev?: string;
  /** `key` with `prev`: Ed25519 signature of `prev` over `rotationStatement(principal, kid, from)`. */
  readonly consent?: Uint8Array;
  /** `adopt`: the end of validity it had (rotation). */
  readonly until?: bigint;
  /** `revoke`, `adopt`: revocation instant (ns). */
  readonly at?: bigint;
  /** `adopt`: the revocation's log size it had. */
  readonly size?: number;
  /** `revoke`, `adopt`: the reason, ≤ 1024 chars. */
  readonly reason?: string;
  /** When the statement was made (ns). */
  readonly ts: bigint;
}

/** A signed registry statement. */
export type SignedRegistryStatement = RegistryBody & { readonly sig: Uint8Array };

const enc = new TextEncoder();
/** Signing domain of registry statements, version 1. */
export const REGISTRY_SIGNING_DOMAIN: Uint8Array = enc.encode('memwarden/registry/v1\n');
/** Prefix of a registry leaf's data: `"rg:" ‖ signed record`. */
export const REGISTRY_LEAF_PREFIX: Uint8Array = enc.encode('rg:');
/** Largest encoded statement. */
const MAX_BYTES = 4096;
const MAX_REASON = 1024;

const FIELDS = new Set([
  't',
  'v',
  'id',
  'op',
  'principal',
  'kid',
  'kind',
  'pk',
  'from',
  'prev',
  'consent',
  'until',
  'at',
  'size',
  'reason',
  'ts',
  'sig',
  'key',
  'scope',
  'by',
]);

const bad = (message: string, field?: string): never => {
  throw new MemwardenError('ENTRY_INVALID', `registry statement: ${message}`, {
    ...(field === undefined ? {} : { details: { field } }),
  });
};
const isU64 = (x: unknown): x is bigint => typeof x === 'bigint' && x >= 0n && x < 1n << 64n;

/** Check a statement body (and `sig` when `withSig`) against every rule; throws `ENTRY_INVALID`. */
function check(s: Record<string, unknown>, withSig: boolean): void {
  for (const k of Object.keys(s)) {
    if (!FIELDS.has(k) || (k === 'sig' && !withSig)) bad('unknown field', k);
    if (s[k] === undefined) bad('field is undefined (omit it instead)', k);
  }
  if (s.t !== 'registry') bad('wrong record type', 't');
  if (s.v !== 1) bad('unknown version', 'v');
  if (typeof s.id !== 'string' || !isUuidV7String(s.id)) bad('id must be a UUIDv7', 'id');
  if (
    s.op !== 'key' &&
    s.op !== 'revoke' &&
    s.op !== 'adopt' &&
    s.op !== 'apikey' &&
    s.op !== 'apikey-revoke'
  )
    bad('unknown op', 'op');
  if (!isPrincipalId(s.principal)) bad('malformed principal', 'principal');
  if (!isKeyId(s.kid)) bad('malformed kid', 'kid');
  if (!isU64(s.ts)) bad('ts must be a uint64', 'ts');
  const allowed: Record<RegistryOp, readonly string[]> = {
    key: ['kind', 'pk', 'from', 'prev', 'consent'],
    revoke: ['at', 'reason'],
    adopt: ['kind', 'pk', 'from', 'until', 'at', 'size', 'reason'],
    apikey: ['key', 'scope', 'from', 'by', 'reason'],
    'apikey-revoke': ['key', 'at', 'by', 'reason'],
  };
  const op = s.op as RegistryOp;
  for (const k of [
    'kind',
    'pk',
    'from',
    'prev',
    'consent',
    'until',
    'at',
    'size',
    'reason',
    'key',
    'scope',
    'by',
  ])
    if (k in s && !allowed[op].includes(k)) bad(`field not allowed for ${op}`, k);
  if (op === 'apikey' || op === 'apikey-revoke') {
    if (!(s.key instanceof Uint8Array) || s.key.length !== 32) bad('key must be 32 bytes', 'key');
    if (toHex(s.key as Uint8Array).slice(0, 16) !== s.kid)
      bad("kid is not the API key's short id", 'kid');
    if ('by' in s && !isPrincipalId(s.by)) bad('malformed by', 'by');
  }
  if (op === 'apikey') {
    if (s.scope !== 'principal' && s.scope !== 'platform') bad('unknown scope', 'scope');
    if (!isU64(s.from)) bad('from must be a uint64', 'from');
  }
  if (op === 'apikey-revoke') {
    if (!isU64(s.at)) bad('at must be a uint64', 'at');
    if (!('reason' in s)) bad('a revocation needs a reason', 'reason');
  }
  if (op === 'key' || op === 'adopt') {
    if (!isPrincipalKind(s.kind)) bad('unknown kind', 'kind');
    if (!(s.pk instanceof Uint8Array) || s.pk.length !== 32) bad('pk must be 32 bytes', 'pk');
    if (!isU64(s.from)) bad('from must be a uint64', 'from');
    if (keyIdFor(s.pk as Uint8Array) !== s.kid) bad('kid is not the hash of pk', 'kid');
    if (parsePrincipalId(s.principal).kind !== s.kind) bad('kind differs from the id', 'kind');
  }
  if (op === 'key') {
    const first = !('prev' in s);
    if (first !== !('consent' in s)) bad('prev and consent go together', 'consent');
    if (first && principalIdFor(s.kind as PrincipalKind, s.pk as Uint8Array) !== s.principal)
      bad('a first key must derive the principal id', 'principal');
    if (!first) {
      if (!isKeyId(s.prev) || s.prev === s.kid) bad('malformed prev', 'prev');
      if (!(s.consent instanceof Uint8Array) || s.consent.length !== 64)
        bad('consent must be 64 bytes', 'consent');
    }
  }
  if (op === 'revoke' && !isU64(s.at)) bad('at must be a uint64', 'at');
  if (op === 'adopt') {
    if ('until' in s && !isU64(s.until)) bad('until must be a uint64', 'until');
    if ('at' in s && !isU64(s.at)) bad('at must be a uint64', 'at');
    if ('size' in s && !(Number.isSafeInteger(s.size) && (s.size as number) >= 0))
      bad('size must be a non-negative integer', 'size');
    const r = ['at', 'size', 'reason'].filter((k) => k in s).length;
    if (r !== 0 && r !== 3) bad('revocation fields go together', 'at');
  }
  if ('reason' in s) {
    if (typeof s.reason !== 'string' || s.reason.length > MAX_REASON)
      bad('reason too long', 'reason');
  }
  if (op === 'revoke' && !('reason' in s)) bad('a revocation needs a reason', 'reason');
  if (withSig && !(s.sig instanceof Uint8Array && s.sig.length === 64))
    bad('sig must be 64 bytes', 'sig');
}

/** Canonical bytes of the body (a `sig` property is ignored). */
export function encodeRegistryBody(body: RegistryBody): Uint8Array {
  const { sig: _s, ...b } = body as SignedRegistryStatement;
  check(b, false);
  return encodeCanonical(b);
}

/** The bytes the host's log key signs. */
export function registrySigningInput(body: RegistryBody): Uint8Array {
  return concatBytes(REGISTRY_SIGNING_DOMAIN, encodeRegistryBody(body));
}

/** Canonical bytes of the signed statement. */
export function encodeRegistryStatement(s: SignedRegistryStatement): Uint8Array {
  check({ ...s }, true);
  return encodeCanonical({ ...s });
}

/** Decode a signed statement strictly (canonical only); throws coded errors only. */
export function decodeRegistryStatement(bytes: Uint8Array): SignedRegistryStatement {
  const v = decodeStrict(bytes, { maxBytes: MAX_BYTES, maxDepth: 2 });
  if (typeof v !== 'object' || v === null || v instanceof Map || Array.isArray(v)) bad('not a map');
  const o = v as Record<string, unknown>;
  // The generic codec returns small integers as numbers; the record's integers are bigints.
  const s: Record<string, unknown> = { ...o };
  for (const k of ['ts', 'from', 'until', 'at'])
    if (typeof s[k] === 'number') s[k] = BigInt(s[k] as number);
  check(s, true);
  return s as unknown as SignedRegistryStatement;
}

/** {@link decodeRegistryStatement} as a result value. */
export function safeDecodeRegistryStatement(
  bytes: Uint8Array,
): SafeResult<SignedRegistryStatement> {
  return safely(() => decodeRegistryStatement(bytes), 'CODEC_MALFORMED');
}

/** Leaf data of a statement: `"rg:" ‖ canonical signed record`. */
export function registryLeafData(s: SignedRegistryStatement): Uint8Array {
  return concatBytes(REGISTRY_LEAF_PREFIX, encodeRegistryStatement(s));
}

/** The statement a registry leaf carries (coded error when it is not one). */
export function registryStatementOfLeaf(data: Uint8Array): SignedRegistryStatement {
  if (!isRegistryLeafData(data)) bad('not a registry leaf');
  return decodeRegistryStatement(data.subarray(REGISTRY_LEAF_PREFIX.length));
}

/** True when leaf data starts with the registry prefix. */
export function isRegistryLeafData(data: Uint8Array): boolean {
  return (
    data.length > REGISTRY_LEAF_PREFIX.length &&
    bytesEqual(data.subarray(0, REGISTRY_LEAF_PREFIX.length), REGISTRY_LEAF_PREFIX)
  );
}
