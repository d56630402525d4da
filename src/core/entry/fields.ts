/**
 * @module core/entry/fields
 * Field rules shared by record validation (before signing) and the record decoders (before
 * any signature check), so both apply exactly the same checks. Each check throws a coded
 * `MemwardenError` naming the field in `details.field`:
 * - `CODEC_WRONG_TYPE` — wrong JS / CBOR type;
 * - `CODEC_OVERSIZE` — over a maximum length or count;
 * - `CODEC_INVALID_VALUE` — any other violated constraint;
 * - `CODEC_UNSUPPORTED_VERSION` — `v` other than 1.
 */
import {
  PrincipalKinds,
  isSourceTier,
  isTrustLabel,
  type SourceTier,
  type TrustLabel,
} from '../trust.js';
import { codecFail, utf8Length } from '../codec/wire.js';
import { isUuidStringOfAt, isUuidV7At, uuidBytesOrUndefined, uuidStringAt } from './uuidv7.js';
import type { CborReader } from '../codec/wire.js';
import { RECORD_VERSION } from './types.js';

const PRINCIPAL_RE = new RegExp(`^(?:${PrincipalKinds.join('|')}):[0-9a-f]{32}$`);
const KID_RE = /^[0-9a-f]{16}$/;
const KIND_RE = /^[a-z_]+$/;
const UINT64_MAX = (1n << 64n) - 1n;

/** Number of Unicode code points of a well-formed string (surrogate pairs count once). */
function codePoints(s: string, utf8Len: number): number {
  // Each UTF-8 length class maps back to UTF-16 units; only 4-byte sequences are pairs.
  let pairs = 0;
  if (utf8Len !== s.length)
    for (let i = 0; i < s.length; i++) if ((s.charCodeAt(i) & 0xfc00) === 0xd800) pairs++;
  return s.length - pairs;
}

/**
 * A text field of `min..max` code points (well-formed UTF-16). Returns its UTF-8 length so the
 * encoder need not measure it twice.
 */
export function checkText(v: unknown, field: string, min: number, max: number): number {
  if (typeof v !== 'string') codecFail('CODEC_WRONG_TYPE', 'expected a string', field);
  const n = utf8Length(v);
  if (n < 0) codecFail('CODEC_INVALID_VALUE', 'string with a lone surrogate', field);
  const cp = codePoints(v, n);
  if (cp > max) codecFail('CODEC_OVERSIZE', 'string too long', field);
  if (cp < min) codecFail('CODEC_INVALID_VALUE', 'string too short', field);
  return n;
}

/** Free text limited by its UTF-8 size (entry `content`). Returns the UTF-8 length. */
export function checkUtf8(v: unknown, field: string, maxBytes: number): number {
  if (typeof v !== 'string') codecFail('CODEC_WRONG_TYPE', 'expected a string', field);
  const n = utf8Length(v);
  if (n < 0) codecFail('CODEC_INVALID_VALUE', 'string with a lone surrogate', field);
  if (n > maxBytes) codecFail('CODEC_OVERSIZE', 'text too large', field);
  return n;
}

/** `v` must be exactly 1 (CONVENTIONS: versioned formats). */
export function checkVersion(v: unknown): void {
  if (typeof v !== 'number') codecFail('CODEC_WRONG_TYPE', 'version is not a number', 'v');
  if (v !== RECORD_VERSION)
    codecFail('CODEC_UNSUPPORTED_VERSION', `unsupported record version ${v}`, 'v');
}

/** The record discriminator. */
export function checkRecordType(v: unknown, expected: 'entry' | 'tombstone'): void {
  if (typeof v !== 'string') codecFail('CODEC_WRONG_TYPE', 'record type is not a string', 't');
  if (v !== expected) codecFail('CODEC_INVALID_VALUE', `expected a ${expected} record`, 't');
}

/** A principal id `${kind}:${32 lowercase hex}` (core/trust PrincipalKinds). */
export function checkPrincipal(v: unknown, field: string): void {
  if (typeof v !== 'string') codecFail('CODEC_WRONG_TYPE', 'expected a principal id string', field);
  if (v.length > 64) codecFail('CODEC_OVERSIZE', 'principal id too long', field);
  if (!PRINCIPAL_RE.test(v)) codecFail('CODEC_INVALID_VALUE', 'not a principal id', field);
}

/** A key id: 16 lowercase hex. */
export function checkKid(v: unknown): void {
  if (typeof v !== 'string') codecFail('CODEC_WRONG_TYPE', 'expected a key id string', 'kid');
  if (!KID_RE.test(v)) codecFail('CODEC_INVALID_VALUE', 'not a 16-hex key id', 'kid');
}

/** An entry kind: 1..64 of [a-z_]. */
export function checkKind(v: unknown, max: number): void {
  if (typeof v !== 'string') codecFail('CODEC_WRONG_TYPE', 'expected a kind string', 'kind');
  if (v.length > max) codecFail('CODEC_OVERSIZE', 'kind too long', 'kind');
  if (!KIND_RE.test(v)) codecFail('CODEC_INVALID_VALUE', 'kind must be 1..64 of [a-z_]', 'kind');
}

export function checkTier(v: unknown): SourceTier {
  if (typeof v !== 'string') codecFail('CODEC_WRONG_TYPE', 'expected a tier string', 'tier');
  if (!isSourceTier(v)) codecFail('CODEC_INVALID_VALUE', 'unknown source tier', 'tier');
  return v;
}

export function checkLabel(v: unknown): TrustLabel {
  if (typeof v !== 'string') codecFail('CODEC_WRONG_TYPE', 'expected a label string', 'label');
  if (!isTrustLabel(v)) codecFail('CODEC_INVALID_VALUE', 'unknown trust label', 'label');
  return v;
}

/** A byte string of exactly `n` bytes. */
export function checkBytes(v: unknown, n: number, field: string): Uint8Array {
  if (!(v instanceof Uint8Array)) codecFail('CODEC_WRONG_TYPE', 'expected bytes', field);
  if (v.length !== n) codecFail('CODEC_INVALID_VALUE', `expected ${n} bytes`, field);
  return v;
}

/** A canonical UUIDv7 string; returns its 16 bytes (the wire form). */
export function checkUuid(v: unknown, field: string): Uint8Array {
  if (typeof v !== 'string') codecFail('CODEC_WRONG_TYPE', 'expected a UUID string', field);
  const b = uuidBytesOrUndefined(v);
  if (b === undefined) codecFail('CODEC_INVALID_VALUE', 'not a canonical UUIDv7', field);
  return b;
}

/**
 * Read a 16-byte UUIDv7 bstr (version and variant checked); returns the canonical string —
 * `known` itself when it is exactly that string (no new string built).
 */
export function readUuid(r: CborReader, field: string, known?: string): string {
  const at = r.readFixedBytes(16, field);
  if (!isUuidV7At(r.buf, at)) codecFail('CODEC_INVALID_VALUE', 'not UUIDv7 bytes', field);
  if (known !== undefined && isUuidStringOfAt(known, r.buf, at)) return known;
  return uuidStringAt(r.buf, at);
}

/** A uint64 as bigint. */
export function checkUint64(v: unknown, field: string): bigint {
  if (typeof v !== 'bigint') codecFail('CODEC_WRONG_TYPE', 'expected a bigint', field);
  if (v < 0n || v > UINT64_MAX) codecFail('CODEC_INVALID_VALUE', 'not a uint64', field);
  return v;
}

/** An edge weight: a finite number in [0, 1] (−0 is not a second zero). */
export function checkWeight(v: unknown): number {
  if (typeof v !== 'number') codecFail('CODEC_WRONG_TYPE', 'expected a number', 'weights');
  if (!(v >= 0 && v <= 1) || Object.is(v, -0))
    codecFail('CODEC_INVALID_VALUE', 'weight outside [0, 1]', 'weights');
  return v;
}

/** Relations between entry fields (same rules before signing and after decoding). */
export function checkEntryRelations(r: {
  id: string;
  parents: readonly string[];
  weights: readonly number[];
  ts: bigint;
  exp?: bigint;
  sup?: string;
}): void {
  if (r.weights.length !== r.parents.length)
    codecFail('CODEC_INVALID_VALUE', 'weights and parents differ in length', 'weights');
  if (r.exp !== undefined && r.exp <= r.ts)
    codecFail('CODEC_INVALID_VALUE', 'expiry not after ts', 'exp');
  if (r.sup !== undefined && r.sup === r.id)
    codecFail('CODEC_INVALID_VALUE', 'entry supersedes itself', 'sup');
  for (let i = 0; i < r.parents.length; i++) {
    const p = r.parents[i];
    if (p === r.id) codecFail('CODEC_INVALID_VALUE', 'entry is its own parent', 'parents');
    for (let j = 0; j < i; j++)
      if (r.parents[j] === p) codecFail('CODEC_INVALID_VALUE', 'duplicate parent', 'parents');
  }
}
