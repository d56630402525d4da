/**
 * @module core/crypto/ids
 * Principal ids and key ids, both derived from public keys (MemLineage §4.5: "a principal id
 * (a SHA-256 prefix derived from the public key)"). Deriving rather than choosing ids means a
 * host cannot rebind an existing id to another key without a hash collision.
 *
 * - principal id: `${kind}:${hex(SHA-256(first public key))[0..32]}` (128-bit prefix)
 * - key id (kid): `hex(SHA-256(public key))[0..16]` (64-bit prefix)
 *
 * A principal keeps its id across rotations (it names the first key); each key has its own kid.
 */
import { toHex } from '../bytes.js';
import { MemwardenError } from '../errors.js';
import { isPrincipalKind, type PrincipalKind } from '../trust.js';
import { sha256 } from './sha256.js';
import { ED25519_PUBLIC_KEY_BYTES } from './ed25519.js';

const PRINCIPAL_ID_RE = /^(operator|user|agent|tool|external):([0-9a-f]{32})$/;
const KID_RE = /^[0-9a-f]{16}$/;

function keyHashHex(publicKey: Uint8Array): string {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_BYTES) {
    throw new MemwardenError('KEY_INVALID', 'public key must be 32 bytes');
  }
  return toHex(sha256(publicKey));
}

/** `${kind}:${hex(SHA-256(pk))[0..32]}`. `PRINCIPAL_INVALID` for an unknown kind, `KEY_INVALID` for a bad key. */
export function principalIdFor(kind: PrincipalKind, publicKey: Uint8Array): string {
  if (!isPrincipalKind(kind))
    throw new MemwardenError('PRINCIPAL_INVALID', 'unknown principal kind');
  return `${kind}:${keyHashHex(publicKey).slice(0, 32)}`;
}

/** `hex(SHA-256(pk))[0..16]`. `KEY_INVALID` unless `publicKey` is 32 bytes. */
export function keyIdFor(publicKey: Uint8Array): string {
  return keyHashHex(publicKey).slice(0, 16);
}

/** A principal id split into its parts. */
export interface ParsedPrincipalId {
  readonly kind: PrincipalKind;
  /** 32 lowercase hex chars: the first 128 bits of SHA-256 of the principal's first key. */
  readonly keyHash: string;
}

/**
 * Strictly parse a principal id: a known kind, one colon, exactly 32 lowercase hex digits.
 * Anything else (uppercase, padding, whitespace, non-strings) is `PRINCIPAL_INVALID`.
 */
export function parsePrincipalId(id: unknown): ParsedPrincipalId {
  const m = typeof id === 'string' ? PRINCIPAL_ID_RE.exec(id) : null;
  if (m === null) throw new MemwardenError('PRINCIPAL_INVALID', 'malformed principal id');
  return { kind: m[1] as PrincipalKind, keyHash: m[2] as string };
}

/** True when `id` is a well-formed principal id (see {@link parsePrincipalId}). */
export function isPrincipalId(id: unknown): id is string {
  return typeof id === 'string' && PRINCIPAL_ID_RE.test(id);
}

/** True when `kid` is a well-formed key id: exactly 16 lowercase hex digits. */
export function isKeyId(kid: unknown): kid is string {
  return typeof kid === 'string' && KID_RE.test(kid);
}
