/**
 * @module adapters/sql/codec
 * Row value mapping shared by both drivers. The drivers disagree on types (`pg` returns
 * `bytea` as Buffer and `int8` as a decimal string; PGlite returns Uint8Array and JS bigint),
 * so every read goes through these helpers and every result is a fresh, exact value.
 */
import { MemwardenError } from '../../core/errors.js';

const corrupt = (what: string): MemwardenError =>
  new MemwardenError('STORAGE_FAILED', `unexpected column value: ${what}`);

/** A fresh `Uint8Array` copy (never a Buffer, never aliased to driver memory). */
export function bytesOut(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return new Uint8Array(v);
  throw corrupt('expected bytea');
}

/** An exact bigint from an `int8` column. */
export function bigOut(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw corrupt('expected int8');
}

/** Optional bigint: SQL NULL → undefined. */
export function bigOutOpt(v: unknown): bigint | undefined {
  return v === null || v === undefined ? undefined : bigOut(v);
}

/** A log index or size: an `int8` that must fit a safe JS number. */
export function numOut(v: unknown): number {
  const b = bigOut(v);
  if (b > BigInt(Number.MAX_SAFE_INTEGER) || b < BigInt(Number.MIN_SAFE_INTEGER))
    throw corrupt('index beyond 2^53');
  return Number(b);
}

export function strOut(v: unknown): string {
  if (typeof v === 'string') return v;
  throw corrupt('expected text');
}

/** Bigint parameters travel as decimal text: both drivers accept it and no precision is lost. */
export function bigIn(v: bigint | undefined): string | null {
  return v === undefined ? null : v.toString();
}

/** Bytes parameters: a copy, so the driver never holds the caller's array. */
export function bytesIn(v: Uint8Array): Uint8Array {
  return v.slice();
}
