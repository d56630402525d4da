/**
 * @module core/codec/wire
 * Hand-rolled strict CBOR primitives (RFC 8949) for memwarden's fixed record schemas.
 *
 * Why this exists next to `cbor2` (the documented exception to "prefer libraries"): the
 * performance target is encode + decode of a typical entry in ≤ 0.5 × one Ed25519 signature.
 * Measured in one process on the dev box (709-byte entry, 300 chars of content, 2 parents):
 * cbor2 2.3.0 with core-deterministic options ≈400 µs to encode and ≈95 µs to decode (≈480 µs
 * for `decodeStrict`, which re-encodes), against ≈38 µs for one `crypto.sign` — an order of
 * magnitude over budget. With these primitives: encode ≈6.8 µs + decode ≈5.3 µs ≈ 0.29 × sign.
 * The entry and tombstone codecs therefore use this module; `cbor2` stays the generic path
 * (`./cbor.ts`) and the differential-test oracle (test/core/entry/oracle.test.ts).
 *
 * The reader accepts only core deterministic encoding (RFC 8949 §4.2.1) in memwarden's data
 * model (the same model `encodeCanonical` writes):
 * - arguments and lengths in their shortest form (§4.2.1, "preferred serialization" §4.1);
 * - definite lengths only (§4.2.1);
 * - floats in the shortest of f16/f32/f64 that keeps the value, NaN only as `f97e00`, and never
 *   a float whose value is a safe integer (a JS number that is a safe integer is written as a
 *   CBOR integer, so a float spelling of it would be a second encoding of the same value).
 * Map-key order and duplicates are checked by the schema codecs, which know the key ranks.
 */
import { MemwardenError, type ErrorCode } from '../errors.js';
import { fromHalf, isCborInt, toHalfExact } from './float.js';

/** Throw a coded codec error; `field` goes into `details` for logs, never into the code. */
export function codecFail(code: ErrorCode, message: string, field?: string): never {
  throw new MemwardenError(code, message, field === undefined ? undefined : { details: { field } });
}

/** CBOR major types, RFC 8949 §3.1. */
export const MT = {
  UINT: 0,
  NINT: 1,
  BYTES: 2,
  TEXT: 3,
  ARRAY: 4,
  MAP: 5,
  TAG: 6,
  SIMPLE: 7,
} as const;

const TWO_32 = 0x1_0000_0000;

/** 128^7: the length term of a key code, above every character term. */
const KEY_LEN_UNIT = 2 ** 49;

/** The {@link CborReader.readKeyCode} of an ASCII key of 1–7 characters. */
export function keyCode(key: string): number {
  let code = 0;
  let scale = 1;
  for (let i = 0; i < key.length; i++) {
    code += key.charCodeAt(i) * scale;
    scale *= 128;
  }
  return code + key.length * KEY_LEN_UNIT;
}

/** Number of bytes of an initial byte plus argument `arg` in shortest form (RFC 8949 §3). */
export function headSize(arg: number): number {
  return arg < 24 ? 1 : arg < 0x100 ? 2 : arg < 0x10000 ? 3 : arg < TWO_32 ? 5 : 9;
}

/** Encoded size of a uint64 in shortest form. */
export function uintSize(n: bigint): number {
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? 9 : headSize(Number(n));
}

/**
 * CBOR writer emitting preferred (shortest) serialization only. Give it the exact output size
 * when known (the record codecs compute it): the output is then allocated once and returned
 * without a copy — a large-typed-array allocation costs about as much as the rest of the
 * encoding. A wrong size is still correct, just slower (grow, then copy).
 */
export class CborWriter {
  private buf: Uint8Array;
  private pos = 0;

  constructor(size = 256) {
    this.buf = new Uint8Array(size);
  }

  /** Bytes written so far. */
  get offset(): number {
    return this.pos;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  /** Initial byte plus argument in its shortest form (RFC 8949 §3, §4.2.1). `arg` ≤ 2^53−1. */
  head(major: number, arg: number): void {
    // Ensure exactly what this head needs: asking for 9 near the end of an exactly-sized
    // buffer would force a needless grow-and-copy of the whole record.
    this.ensure(arg < 24 ? 1 : arg < 0x100 ? 2 : arg < 0x10000 ? 3 : arg < TWO_32 ? 5 : 9);
    const b = this.buf;
    let p = this.pos;
    const m = major << 5;
    if (arg < 24) b[p++] = m | arg;
    else if (arg < 0x100) {
      b[p++] = m | 24;
      b[p++] = arg;
    } else if (arg < 0x10000) {
      b[p++] = m | 25;
      b[p++] = arg >>> 8;
      b[p++] = arg & 0xff;
    } else if (arg < TWO_32) {
      b[p++] = m | 26;
      p = put32(b, p, arg);
    } else {
      b[p++] = m | 27;
      p = put32(b, p, Math.floor(arg / TWO_32));
      p = put32(b, p, arg >>> 0);
    }
    this.pos = p;
  }

  /** An unsigned integer 0 … 2^64−1 (major type 0), shortest form. */
  uint(n: bigint): void {
    if (n <= BigInt(Number.MAX_SAFE_INTEGER)) return this.head(MT.UINT, Number(n));
    this.ensure(9);
    this.buf[this.pos++] = 0x1b;
    this.pos = put32(this.buf, this.pos, Number(n >> 32n));
    this.pos = put32(this.buf, this.pos, Number(n & 0xffffffffn));
  }

  /** A byte string (major type 2). */
  bytes(b: Uint8Array): void {
    this.head(MT.BYTES, b.length);
    this.raw(b);
  }

  /** A text string (major type 3); `utf8Len` is its UTF-8 length (see `utf8Length`). */
  text(s: string, utf8Len: number): void {
    this.head(MT.TEXT, utf8Len);
    this.ensure(utf8Len);
    if (utf8Len === s.length && utf8Len <= 24) {
      // Short ASCII: a plain loop beats setting up encodeInto.
      const b = this.buf;
      let p = this.pos;
      for (let i = 0; i < utf8Len; i++) b[p++] = s.charCodeAt(i);
      this.pos = p;
    } else {
      this.pos += encoder.encodeInto(s, this.buf.subarray(this.pos, this.pos + utf8Len)).written;
    }
  }

  /** Pre-encoded bytes (e.g. a map key computed once). */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    if (b.length <= 16) {
      const d = this.buf;
      let p = this.pos;
      for (let i = 0; i < b.length; i++) d[p++] = b[i] as number;
      this.pos = p;
    } else {
      this.buf.set(b, this.pos);
      this.pos += b.length;
    }
  }

  /** A JS number in memwarden's model: safe integer → int, else the shortest exact float. */
  number(x: number): void {
    if (isCborInt(x)) return x >= 0 ? this.head(MT.UINT, x) : this.head(MT.NINT, -x - 1);
    const h = toHalfExact(x);
    this.ensure(h >= 0 ? 3 : Math.fround(x) === x ? 5 : 9);
    let n: number;
    if (h >= 0) {
      this.buf[this.pos++] = 0xf9;
      scratch.setUint16(0, h);
      n = 2;
    } else if (Math.fround(x) === x) {
      this.buf[this.pos++] = 0xfa;
      scratch.setFloat32(0, x);
      n = 4;
    } else {
      this.buf[this.pos++] = 0xfb;
      scratch.setFloat64(0, x);
      n = 8;
    }
    for (let i = 0; i < n; i++) this.buf[this.pos++] = scratchBytes[i] as number;
  }

  /** The bytes written (no copy when the initial size was exact). */
  finish(): Uint8Array {
    return this.pos === this.buf.length ? this.buf : this.buf.slice(0, this.pos);
  }
}

function put32(b: Uint8Array, p: number, v: number): number {
  b[p] = v >>> 24;
  b[p + 1] = (v >>> 16) & 0xff;
  b[p + 2] = (v >>> 8) & 0xff;
  b[p + 3] = v & 0xff;
  return p + 4;
}

const scratchBytes = new Uint8Array(8);
const scratch = new DataView(scratchBytes.buffer);
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** `String.prototype.isWellFormed` (ES2024, Node ≥ 20) — not yet in this project's TS lib. */
function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/**
 * UTF-8 length of `s`, or -1 when `s` holds a lone surrogate (it has no UTF-8 encoding and
 * TextEncoder would silently substitute U+FFFD, breaking decode(encode(x)) = x).
 */
export function utf8Length(s: string): number {
  if (!isWellFormed(s)) return -1;
  return Buffer.byteLength(s, 'utf8');
}

/** Strict reader over one buffer. Every failure is a coded `MemwardenError`. */
export class CborReader {
  pos = 0;
  /** Major type and argument of the last `head()`; `big` is set when the argument exceeds 2^53−1. */
  major = 0;
  arg = 0;
  big: bigint | undefined = undefined;

  /**
   * Whether the last {@link readText} was all ASCII (so its UTF-8 length, UTF-16 length and
   * code point count are equal, and it is well-formed).
   */
  ascii = false;

  /** A Buffer view of `buf` for latin1 slicing of ASCII text (made on first use). */
  private view: Buffer | undefined;

  constructor(readonly buf: Uint8Array) {}

  private need(n: number): void {
    if (n > this.buf.length - this.pos) codecFail('CODEC_MALFORMED', 'truncated input');
  }

  private u32(p: number): number {
    const b = this.buf;
    return (
      (((b[p] as number) << 24) >>> 0) +
      (((b[p + 1] as number) << 16) | ((b[p + 2] as number) << 8) | (b[p + 3] as number))
    );
  }

  /** Read an initial byte and argument, enforcing shortest form and definite length (§4.2.1). */
  head(): void {
    this.need(1);
    const b = this.buf;
    const ib = b[this.pos++] as number;
    const major = ib >> 5;
    const info = ib & 31;
    this.major = major;
    this.big = undefined;
    if (info < 24) {
      this.arg = info;
      return;
    }
    // Major type 7 uses 25/26/27 for floats, whose width is checked by readNumber.
    const short = major !== MT.SIMPLE;
    if (info === 24) {
      this.need(1);
      this.arg = b[this.pos++] as number;
      if (short && this.arg < 24) codecFail('CODEC_NON_CANONICAL', 'integer not in shortest form');
    } else if (info === 25) {
      this.need(2);
      this.arg = ((b[this.pos] as number) << 8) | (b[this.pos + 1] as number);
      this.pos += 2;
      if (short && this.arg < 0x100)
        codecFail('CODEC_NON_CANONICAL', 'integer not in shortest form');
    } else if (info === 26) {
      this.need(4);
      this.arg = this.u32(this.pos);
      this.pos += 4;
      if (short && this.arg < 0x10000)
        codecFail('CODEC_NON_CANONICAL', 'integer not in shortest form');
    } else if (info === 27) {
      this.need(8);
      const hi = this.u32(this.pos);
      const lo = this.u32(this.pos + 4);
      this.pos += 8;
      if (short && hi === 0) codecFail('CODEC_NON_CANONICAL', 'integer not in shortest form');
      this.arg = hi * TWO_32 + lo;
      // One BigInt read from the 8 bytes (rather than four built from the halves).
      if (hi >= 0x200000) {
        for (let i = 0; i < 8; i++) scratchBytes[i] = b[this.pos - 8 + i] as number;
        this.big = scratch.getBigUint64(0);
      }
    } else if (info === 31 && major >= MT.BYTES && major <= MT.MAP) {
      codecFail('CODEC_NON_CANONICAL', 'indefinite length');
    } else {
      // 28–30 are reserved; 31 on major 0/1/6 or a stray "break" is not well-formed (§3).
      codecFail('CODEC_MALFORMED', 'reserved or unexpected additional information');
    }
  }

  private expect(major: number, field: string | undefined): void {
    this.head();
    if (this.major !== major)
      codecFail('CODEC_WRONG_TYPE', `expected CBOR major type ${major}`, field);
  }

  /** A length that must fit in what is left of the input (each item takes ≥ `unit` bytes). */
  private length(unit: number): number {
    if (this.big !== undefined || this.arg * unit > this.buf.length - this.pos)
      codecFail('CODEC_MALFORMED', 'length exceeds input');
    return this.arg;
  }

  /** A byte string, copied out of the input. */
  readBytes(field?: string): Uint8Array {
    this.expect(MT.BYTES, field);
    const n = this.length(1);
    // A plain copy, whatever `buf` is (a Buffer's `slice` would be a view sharing its memory).
    const out = new Uint8Array(n);
    const b = this.buf;
    const p = this.pos;
    if (n <= 64) for (let i = 0; i < n; i++) out[i] = b[p + i] as number;
    else out.set(b.subarray(p, p + n));
    this.pos = p + n;
    return out;
  }

  /**
   * A byte string of exactly `n` bytes, left in place: returns its offset in `buf` (no copy).
   * Another length → `CODEC_INVALID_VALUE`.
   */
  readFixedBytes(n: number, field?: string): number {
    this.expect(MT.BYTES, field);
    const len = this.length(1);
    if (len !== n) codecFail('CODEC_INVALID_VALUE', `expected ${n} bytes`, field);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  /**
   * A UTF-8 text string of at most `maxBytes` encoded bytes (longer → CODEC_OVERSIZE). When
   * `known` is an ASCII string equal to the text, it is returned itself (no new string).
   */
  readText(maxBytes: number, field?: string, known?: string): string {
    this.expect(MT.TEXT, field);
    const n = this.length(1);
    if (n > maxBytes) codecFail('CODEC_OVERSIZE', 'text too long', field);
    const b = this.buf;
    const start = this.pos;
    const end = start + n;
    this.pos = end;
    if (known !== undefined && known.length === n) {
      let same = true;
      for (let i = 0; i < n && same; i++) {
        const c = known.charCodeAt(i);
        same = c < 0x80 && c === b[start + i];
      }
      if (same) {
        this.ascii = true;
        return known;
      }
    }
    // ASCII (the common case: ids, kinds, tiers, most content) is its own UTF-8 and latin1
    // spelling, so one native latin1 slice replaces the strict UTF-8 decoder.
    for (let i = start; i < end; i++) {
      if ((b[i] as number) >= 0x80) {
        this.ascii = false;
        return decodeUtf8(b.subarray(start, end), field);
      }
    }
    this.ascii = true;
    if (n <= 8) {
      let s = '';
      for (let i = start; i < end; i++) s += String.fromCharCode(b[i] as number);
      return s;
    }
    this.view ??= Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    return this.view.toString('latin1', start, end);
  }

  /**
   * A map key of 1–7 ASCII characters as a number (length·2^49 + Σ byte·128^i: exact, and
   * distinct for distinct keys — NUL bytes included), read without building a string; -1 (position unchanged) for anything else,
   * which the caller then reads with {@link readKey} for the precise error.
   */
  readKeyCode(): number {
    const at = this.pos;
    const b = this.buf;
    const ib = b[at];
    // A text head with the length in the initial byte (major 3, length < 24).
    if (ib === undefined || ib >> 5 !== MT.TEXT) return -1;
    const n = ib & 31;
    if (n === 0 || n > 7 || at + 1 + n > b.length) return -1;
    let code = 0;
    let scale = 1;
    for (let i = at + 1; i <= at + n; i++) {
      const c = b[i] as number;
      if (c >= 0x80) return -1;
      code += c * scale;
      scale *= 128;
    }
    this.pos = at + 1 + n;
    return code + n * KEY_LEN_UNIT;
  }

  /** An unsigned integer (major type 0) as a bigint, 0 … 2^64−1. */
  readUint(field?: string): bigint {
    this.expect(MT.UINT, field);
    return this.big ?? BigInt(this.arg);
  }

  /** A small unsigned integer (major type 0) as a number; larger than 2^53−1 → CODEC_INVALID_VALUE. */
  readSmallUint(field?: string): number {
    this.expect(MT.UINT, field);
    if (this.big !== undefined) codecFail('CODEC_INVALID_VALUE', 'integer out of range', field);
    return this.arg;
  }

  /** Header of an array; at most `max` items (more → CODEC_OVERSIZE). */
  readArrayLen(max: number, field?: string): number {
    this.expect(MT.ARRAY, field);
    const n = this.length(1);
    if (n > max) codecFail('CODEC_OVERSIZE', 'array too long', field);
    return n;
  }

  /** Header of a map: the number of key/value pairs. */
  readMapLen(): number {
    this.expect(MT.MAP, undefined);
    return this.length(2);
  }

  /** A map key that must be a text string (anything else cannot be a schema key). */
  readKey(): string {
    const at = this.pos;
    this.head();
    if (this.major !== MT.TEXT) codecFail('CODEC_UNKNOWN_KEY', 'non-text map key');
    if (this.length(1) > 64) codecFail('CODEC_UNKNOWN_KEY', 'map key longer than any schema key');
    this.pos = at;
    return this.readText(64, 'key');
  }

  /** A JS number in memwarden's model: integer (major 0/1) or canonical float (§4.2.1). */
  readNumber(field?: string): number {
    this.need(1);
    const ib = this.buf[this.pos] as number;
    if (ib === 0xf9 || ib === 0xfa || ib === 0xfb) {
      const n = ib === 0xf9 ? 2 : ib === 0xfa ? 4 : 8;
      this.pos++;
      this.need(n);
      for (let i = 0; i < n; i++) scratchBytes[i] = this.buf[this.pos + i] as number;
      this.pos += n;
      let v: number;
      if (n === 2) {
        const h = scratch.getUint16(0);
        v = fromHalf(h);
        if (v !== v && h !== 0x7e00) codecFail('CODEC_NON_CANONICAL', 'non-canonical NaN', field);
      } else if (n === 4) {
        v = scratch.getFloat32(0);
        if (toHalfExact(v) >= 0)
          codecFail('CODEC_NON_CANONICAL', 'float not in shortest form', field);
      } else {
        v = scratch.getFloat64(0);
        if (v !== v || Math.fround(v) === v)
          codecFail('CODEC_NON_CANONICAL', 'float not in shortest form', field);
      }
      if (isCborInt(v))
        codecFail('CODEC_NON_CANONICAL', 'integral float must be an integer', field);
      return v;
    }
    this.head();
    if (this.major !== MT.UINT && this.major !== MT.NINT)
      codecFail('CODEC_WRONG_TYPE', 'expected a number', field);
    // −2^53 is not a safe integer, so in the JS model it is a float: nint arguments stop one short.
    const limit = this.major === MT.UINT ? Number.MAX_SAFE_INTEGER : Number.MAX_SAFE_INTEGER - 1;
    if (this.big !== undefined || this.arg > limit)
      codecFail('CODEC_WRONG_TYPE', 'integer beyond the JS number range', field);
    return this.major === MT.UINT ? this.arg : -this.arg - 1;
  }

  /** Require that the whole input was consumed (RFC 8949 §5.1: one data item, no trailer). */
  end(): void {
    if (this.pos !== this.buf.length)
      codecFail('CODEC_TRAILING_BYTES', 'trailing bytes after the data item');
  }
}

function decodeUtf8(b: Uint8Array, field: string | undefined): string {
  try {
    return decoder.decode(b);
  } catch (e) {
    throw new MemwardenError('CODEC_MALFORMED', 'invalid UTF-8', {
      cause: e,
      ...(field === undefined ? {} : { details: { field } }),
    });
  }
}
