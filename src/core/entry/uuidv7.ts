/**
 * @module core/entry/uuidv7
 * UUIDv7 (RFC 9562 §5.7): 48-bit Unix milliseconds, version 7, 12 bits rand_a, variant 0b10,
 * 62 bits rand_b. Time and randomness are injected (core has no clock or RNG of its own).
 *
 * The string form is canonical lowercase hex `8-4-4-4-12` only: ids are compared as strings
 * by storage, so accepting a second spelling (uppercase, braces, no hyphens) would give one
 * entry two ids.
 */
import { MemwardenError } from '../errors.js';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** Lowercase hex digit values by char code; -1 elsewhere (uppercase is not canonical). */
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) NIBBLE['0123456789abcdef'.charCodeAt(i)] = i;
const MAX_MS = 2 ** 48 - 1;

/** True when `b[off..off+16)` has version 7 and the RFC 9562 variant 0b10 (§4.1, §4.2). */
export function isUuidV7At(b: Uint8Array, off: number): boolean {
  return ((b[off + 6] as number) & 0xf0) === 0x70 && ((b[off + 8] as number) & 0xc0) === 0x80;
}

/** True when `b` is 16 bytes with version 7 and the RFC 9562 variant (§4.1, §4.2). */
export function isUuidV7Bytes(b: Uint8Array): boolean {
  return b.length === 16 && isUuidV7At(b, 0);
}

/**
 * The 16 bytes of a canonical lowercase UUIDv7 string, or undefined. One pass over the
 * characters (this sits on the entry encode path, where a regex plus parseInt cost ~1 µs).
 */
export function uuidBytesOrUndefined(s: string): Uint8Array | undefined {
  if (s.length !== 36) return undefined;
  const out = new Uint8Array(16);
  let j = 0;
  for (let i = 0; i < 36; i += 2) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (s.charCodeAt(i) !== 0x2d) return undefined; // '-'
      i++;
    }
    const hi = NIBBLE[s.charCodeAt(i)] ?? -1;
    const lo = NIBBLE[s.charCodeAt(i + 1)] ?? -1;
    if (hi < 0 || lo < 0) return undefined;
    out[j++] = (hi << 4) | lo;
  }
  return isUuidV7At(out, 0) ? out : undefined;
}

/** True when `s` is a canonical lowercase UUIDv7 string. */
export function isUuidV7String(s: unknown): s is string {
  return typeof s === 'string' && uuidBytesOrUndefined(s) !== undefined;
}

/**
 * A new UUIDv7 string from `nowMs` (integer Unix milliseconds, 0 … 2^48−1) and at least 10
 * bytes of `random`: random[0] low nibble and random[1] fill rand_a, random[2] low 6 bits and
 * random[3..9] fill rand_b (RFC 9562 §5.7). No counter: ordering within one millisecond
 * (RFC 9562 §6.2) is the caller's concern.
 */
export function uuidv7(nowMs: number | bigint, random: Uint8Array): string {
  const ms = typeof nowMs === 'bigint' ? nowMs : Number.isSafeInteger(nowMs) ? BigInt(nowMs) : -1n;
  if (ms < 0n || ms > BigInt(MAX_MS))
    throw new MemwardenError('INPUT_INVALID', 'uuidv7 timestamp out of range');
  if (!(random instanceof Uint8Array) || random.length < 10)
    throw new MemwardenError('INPUT_INVALID', 'uuidv7 needs at least 10 random bytes');
  const b = new Uint8Array(16);
  let t = ms;
  for (let i = 5; i >= 0; i--) {
    b[i] = Number(t & 0xffn);
    t >>= 8n;
  }
  b[6] = 0x70 | ((random[0] as number) & 0x0f);
  b[7] = random[1] as number;
  b[8] = 0x80 | ((random[2] as number) & 0x3f);
  b.set(random.subarray(3, 10), 9);
  return uuidToString(b);
}

/** Parse a canonical lowercase UUIDv7 string into its 16 bytes; anything else → INPUT_INVALID. */
export function parseUuid(s: string): Uint8Array {
  const b = typeof s === 'string' ? uuidBytesOrUndefined(s) : undefined;
  if (b === undefined) throw new MemwardenError('INPUT_INVALID', 'not a canonical UUIDv7 string');
  return b;
}

/** Canonical lowercase string of 16 UUIDv7 bytes; other lengths, versions or variants → INPUT_INVALID. */
export function uuidToString(b: Uint8Array): string {
  if (!(b instanceof Uint8Array) || !isUuidV7Bytes(b))
    throw new MemwardenError('INPUT_INVALID', 'not 16 UUIDv7 bytes');
  return uuidStringAt(b, 0);
}

/** Char codes of the lowercase hex digits, and where each byte's two digits sit in the string. */
const HEX_CODES = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const DIGITS_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * True when `s` is exactly {@link uuidStringAt}`(b, off)` — the canonical lowercase string of
 * those 16 bytes — decided without building it (a reader that already holds the id string,
 * e.g. a stored row's, can keep it).
 */
export function isUuidStringOfAt(s: string, b: Uint8Array, off: number): boolean {
  if (typeof s !== 'string' || s.length !== 36) return false;
  if (
    s.charCodeAt(8) !== 0x2d ||
    s.charCodeAt(13) !== 0x2d ||
    s.charCodeAt(18) !== 0x2d ||
    s.charCodeAt(23) !== 0x2d
  )
    return false;
  for (let i = 0; i < 16; i++) {
    const v = b[off + i] as number;
    const p = DIGITS_AT[i] as number;
    if (s.charCodeAt(p) !== HEX_CODES[v >> 4] || s.charCodeAt(p + 1) !== HEX_CODES[v & 15])
      return false;
  }
  return true;
}

/** Canonical string of the 16 bytes at `b[off..off+16)`; the caller has checked them. */
export function uuidStringAt(b: Uint8Array, off: number): string {
  const h = (i: number): string => HEX[b[off + i] as number] as string;
  return (
    h(0) +
    h(1) +
    h(2) +
    h(3) +
    '-' +
    h(4) +
    h(5) +
    '-' +
    h(6) +
    h(7) +
    '-' +
    h(8) +
    h(9) +
    '-' +
    h(10) +
    h(11) +
    h(12) +
    h(13) +
    h(14) +
    h(15)
  );
}

/** Unix milliseconds encoded in a UUIDv7 (RFC 9562 §5.7 unix_ts_ms). */
export function uuidv7Millis(b: Uint8Array): number {
  if (!isUuidV7Bytes(b)) throw new MemwardenError('INPUT_INVALID', 'not 16 UUIDv7 bytes');
  let ms = 0;
  for (let i = 0; i < 6; i++) ms = ms * 256 + (b[i] as number);
  return ms;
}
