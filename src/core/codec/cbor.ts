/**
 * @module core/codec/cbor
 * Generic canonical CBOR: core deterministic encoding (RFC 8949 §4.2.1) over memwarden's data
 * model, through `cbor2` — the only module that imports it (see .dependency-cruiser.cjs).
 *
 * Data model (what `encodeCanonical` accepts and `decodeStrict` returns):
 * - `null`, `true`, `false`;
 * - `number`: a safe integer is a CBOR integer (major 0/1); any other number (fractions, −0,
 *   ±Infinity, NaN, integers beyond 2^53) is the shortest float that keeps it (§4.2.1), NaN
 *   only as `f97e00` (§4.2.2);
 * - `bigint`: a CBOR integer, or bignum tag 2/3 beyond 64 bits (§3.4.3). On decode, integers
 *   that fit a safe JS integer come back as `number`, larger ones as `bigint`;
 * - `string` (well-formed UTF-16, so it has a UTF-8 encoding), `Uint8Array` (exactly, not a
 *   subclass such as Buffer);
 * - arrays, plain objects (string keys) and `Map` (any model keys). A decoded map whose keys are
 *   all text is a null-prototype object (`__proto__` stays an ordinary key), else a `Map`.
 * Everything else — `undefined`, other simple values, tags other than 2/3, Dates, typed arrays
 * other than Uint8Array — is outside the model: `CODEC_WRONG_TYPE`. `undefined` in particular is
 * rejected so that an unset optional field can only be absent (CONVENTIONS: absent ≠ undefined).
 *
 * Strictness: `decodeStrict` accepts exactly the bytes `encodeCanonical` produces — after
 * decoding with cbor2's strict options it re-encodes the value and compares bytes. That catches
 * every rule cbor2 cannot express on decode (map key order is checked this way, so a duplicate
 * and an out-of-order key get distinct codes), at the cost of one encode; the hot entry path
 * does not use this module (see ./wire.ts).
 */
import { decode, encode, cdeEncodeOptions, type DecodeOptions, type TagDecoder } from 'cbor2';
import { bytesEqual } from '../bytes.js';
import { MemwardenError, type ErrorCode } from '../errors.js';
import { utf8Length } from './wire.js';

/** Options for {@link decodeStrict}. */
export interface DecodeStrictOptions {
  /** Largest accepted input, in bytes (larger → `CODEC_OVERSIZE`). Default 1 MiB. */
  readonly maxBytes?: number;
  /** Deepest accepted nesting of arrays/maps (deeper → `CODEC_OVERSIZE`). Default 64. */
  readonly maxDepth?: number;
}

/** Default input limit of {@link decodeStrict}. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;
/** Default nesting limit of {@link decodeStrict} and {@link encodeCanonical}. */
export const DEFAULT_MAX_DEPTH = 64;

const TWO_64 = 1n << 64n;

/** Bignum tags 2/3 (RFC 8949 §3.4.3), preferred form only: no leading zero, beyond 64 bits. */
function bignum(negative: boolean): TagDecoder {
  return ({ contents }) => {
    if (!(contents instanceof Uint8Array))
      throw new MemwardenError('CODEC_WRONG_TYPE', 'bignum content is not a byte string');
    if (contents.length === 0 || contents[0] === 0)
      throw new MemwardenError('CODEC_NON_CANONICAL', 'bignum with leading zero');
    let n = 0n;
    for (const b of contents) n = (n << 8n) | BigInt(b);
    if (n < TWO_64)
      throw new MemwardenError('CODEC_NON_CANONICAL', 'bignum that fits a CBOR integer');
    return negative ? -1n - n : n;
  };
}

const DECODE_OPTIONS: DecodeOptions = {
  cde: true, // rejectStreaming + requirePreferred (§4.2.1)
  sortKeys: null, // key order is checked by re-encoding, so duplicates keep their own code
  rejectDuplicateKeys: true,
  rejectLongFloats: true,
  rejectLongLoundNaN: true,
  rejectSimple: true,
  rejectUndefined: true,
  ignoreGlobalTags: true, // no Date/RegExp/URL construction from untrusted bytes
  tags: new Map([
    [2, bignum(false)],
    [3, bignum(true)],
  ]),
};

const ENCODE_OPTIONS = { ...cdeEncodeOptions, rejectUndefined: true, rejectDuplicateKeys: true };

/** cbor2 throws plain Errors; map its (pinned, 2.3.0) messages onto codes. Unknown → malformed. */
const CBOR2_ERRORS: readonly [RegExp, ErrorCode][] = [
  [/^Extra data in input/, 'CODEC_TRAILING_BYTES'],
  [/^Duplicate (map )?key/, 'CODEC_DUPLICATE_KEY'],
  [/^Duplicate or out of order key/, 'CODEC_NON_CANONICAL'],
  [
    /Unexpectedly long|[Ss]hould have been encoded|Invalid NaN|Streaming not supported|could have been/,
    'CODEC_NON_CANONICAL',
  ],
  [/^Unexpected undefined|^Invalid simple value/, 'CODEC_WRONG_TYPE'],
  [/depth/i, 'CODEC_OVERSIZE'],
];

function classify(e: unknown): MemwardenError {
  if (e instanceof MemwardenError) return e;
  const msg = e instanceof Error ? e.message : '';
  for (const [re, code] of CBOR2_ERRORS)
    if (re.test(msg)) return new MemwardenError(code, msg, { cause: e });
  return new MemwardenError('CODEC_MALFORMED', 'malformed CBOR', { cause: e });
}

/** Check that `value` is inside the data model (see module doc); throws coded errors. */
function checkModel(value: unknown, depth: number, maxDepth: number): void {
  switch (typeof value) {
    case 'boolean':
    case 'number':
    case 'bigint':
      return;
    case 'string':
      if (utf8Length(value) < 0)
        throw new MemwardenError('CODEC_INVALID_VALUE', 'string with a lone surrogate');
      return;
    case 'object': {
      if (value === null) return;
      if (value instanceof Uint8Array) {
        if (Object.getPrototypeOf(value) !== Uint8Array.prototype)
          throw new MemwardenError(
            'CODEC_WRONG_TYPE',
            'Uint8Array subclass (e.g. Buffer) is outside the data model',
          );
        return;
      }
      if (depth >= maxDepth) throw new MemwardenError('CODEC_OVERSIZE', 'nesting too deep');
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) checkModel(value[i], depth + 1, maxDepth);
        return;
      }
      if (value instanceof Map) {
        for (const [k, v] of value) {
          checkModel(k, depth + 1, maxDepth);
          checkModel(v, depth + 1, maxDepth);
        }
        return;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) {
        for (const k of Object.keys(value))
          checkModel((value as Record<string, unknown>)[k], depth + 1, maxDepth);
        return;
      }
      throw new MemwardenError('CODEC_WRONG_TYPE', 'object type outside the data model');
    }
    default:
      throw new MemwardenError('CODEC_WRONG_TYPE', `${typeof value} is outside the data model`);
  }
}

/**
 * Core deterministic CBOR (RFC 8949 §4.2.1) of `value`: shortest arguments, definite lengths,
 * map keys sorted bytewise by their encodings. Throws `CODEC_WRONG_TYPE` for values outside
 * the data model, `CODEC_INVALID_VALUE` for ill-formed strings, `CODEC_DUPLICATE_KEY` for Map
 * keys with equal encodings, `CODEC_OVERSIZE` for nesting beyond `maxDepth`.
 */
export function encodeCanonical(value: unknown, maxDepth: number = DEFAULT_MAX_DEPTH): Uint8Array {
  checkModel(value, 0, maxDepth);
  try {
    return encode(value, ENCODE_OPTIONS);
  } catch (e) {
    throw classify(e);
  }
}

/**
 * Decode one data item that must be in core deterministic encoding, with nothing after it.
 * Never throws anything but a coded `MemwardenError`: `CODEC_OVERSIZE` (input over
 * `maxBytes`, nesting over `maxDepth`), `CODEC_MALFORMED` (truncated, not well-formed, bad
 * UTF-8), `CODEC_NON_CANONICAL` (non-shortest integer/length/float, indefinite length,
 * unsorted keys), `CODEC_DUPLICATE_KEY`, `CODEC_TRAILING_BYTES`, `CODEC_WRONG_TYPE` (outside
 * the data model). Guarantee: if it returns `v`, then `encodeCanonical(v)` equals `bytes`.
 */
export function decodeStrict(bytes: Uint8Array, opts: DecodeStrictOptions = {}): unknown {
  if (!(bytes instanceof Uint8Array))
    throw new MemwardenError('CODEC_WRONG_TYPE', 'input is not a Uint8Array');
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (bytes.length > maxBytes) throw new MemwardenError('CODEC_OVERSIZE', 'input too large');
  if (bytes.length === 0) throw new MemwardenError('CODEC_MALFORMED', 'empty input');
  let value: unknown;
  try {
    value = decode(bytes, { ...DECODE_OPTIONS, maxDepth });
  } catch (e) {
    throw classify(e);
  }
  const again = encodeCanonical(value, maxDepth + 1);
  if (!bytesEqual(again, bytes))
    throw new MemwardenError('CODEC_NON_CANONICAL', 'not the canonical encoding');
  return value;
}
