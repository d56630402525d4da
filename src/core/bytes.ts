/**
 * @module core/bytes
 * Byte helpers shared by the codec, crypto and log. Hex and base64 parsing are strict: they
 * reject anything but canonical lowercase-or-uppercase hex / standard padded base64.
 */
import { timingSafeEqual } from 'node:crypto';
import { MemwardenError } from './errors.js';

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;
const B64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

export function fromHex(s: string): Uint8Array {
  if (!HEX_RE.test(s)) throw new MemwardenError('INPUT_INVALID', 'not a hex string');
  return new Uint8Array(Buffer.from(s, 'hex'));
}

export function toBase64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

export function fromBase64(s: string): Uint8Array {
  if (!B64_RE.test(s)) throw new MemwardenError('INPUT_INVALID', 'not standard base64');
  const out = new Uint8Array(Buffer.from(s, 'base64'));
  // RFC 4648 §3.5: the pad bits of the last group must be zero, else `AB==` and `AA==` would
  // both spell [0x00] (one value, two encodings — found by test/fuzz, the `note` target).
  if (toBase64(out) !== s) throw new MemwardenError('INPUT_INVALID', 'non-canonical base64');
  return out;
}

export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Byte equality in time independent of where the inputs differ (for MACs and API keys). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}

/** Plain byte equality for public values (hashes, roots). */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export const utf8 = {
  encode: (s: string): Uint8Array => new TextEncoder().encode(s),
  /** Strict: invalid UTF-8 is an error, never replacement characters. */
  decode: (b: Uint8Array): string => new TextDecoder('utf-8', { fatal: true }).decode(b),
};
