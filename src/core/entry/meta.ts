/**
 * @module core/entry/meta
 * Caller metadata in a version 2 entry (ADR 0048): a JSON object, signed as canonical CBOR
 * (RFC 8949 §4.2.1) in memwarden's data model — `null`, `true` / `false`, numbers (a safe
 * integer as a CBOR integer, any other finite number as the shortest exact float), text,
 * arrays and maps with text keys in core deterministic order (encoded key bytes: shorter
 * first, then bytewise). One JSON value has exactly one encoding, and the decoder accepts
 * only that one.
 *
 * Rules (coded `CODEC_*` errors naming `meta` as the field): a plain, non-empty object at the
 * top; keys 1..{@link META_LIMITS.keyChars} code points; at most {@link META_LIMITS.depth}
 * levels of nesting; finite numbers other than −0 (JSON has neither); well-formed strings; at
 * most {@link META_LIMITS.bytes} encoded bytes. Callers normalise first (the Memory API turns
 * −0 into 0 and drops `undefined` properties, as `JSON.stringify` does).
 */
import { CborReader, CborWriter, MT, codecFail, utf8Length } from '../codec/wire.js';

/** A JSON value. */
export type JsonValue =
  null | boolean | number | string | readonly JsonValue[] | { readonly [k: string]: JsonValue };
/** A JSON object (entry metadata). */
export type JsonObject = { readonly [k: string]: JsonValue };

export const META_LIMITS = {
  /** Encoded size of the whole metadata map. */
  bytes: 16 * 1024,
  /** Nesting levels (the top-level object is level 1). */
  depth: 8,
  /** Key length in code points. */
  keyChars: 256,
  /** Items of one array or pairs of one object. */
  items: 1024,
} as const;

const F = 'meta';

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const enc = new TextEncoder();

/** Canonical order of text keys: by UTF-8 length, then bytewise (RFC 8949 §4.2.1). */
export function compareMetaKeys(a: string, b: string): number {
  if (a === b) return 0;
  const x = enc.encode(a);
  const y = enc.encode(b);
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return 0;
}

function isPlainObject(v: object): boolean {
  const p = Object.getPrototypeOf(v) as unknown;
  return p === Object.prototype || p === null;
}

function checkKey(k: string): number {
  const n = utf8Length(k);
  if (n < 0) codecFail('CODEC_INVALID_VALUE', 'metadata key with a lone surrogate', F);
  const cp = codePoints(k);
  if (cp === 0) codecFail('CODEC_INVALID_VALUE', 'empty metadata key', F);
  if (cp > META_LIMITS.keyChars) codecFail('CODEC_OVERSIZE', 'metadata key too long', F);
  return n;
}

function writeValue(w: CborWriter, v: unknown, depth: number): void {
  if (v === null) return w.head(MT.SIMPLE, 22);
  switch (typeof v) {
    case 'boolean':
      return w.head(MT.SIMPLE, v ? 21 : 20);
    case 'number':
      if (!Number.isFinite(v)) codecFail('CODEC_INVALID_VALUE', 'metadata number not finite', F);
      if (Object.is(v, -0)) codecFail('CODEC_INVALID_VALUE', 'metadata number −0', F);
      return w.number(v);
    case 'string': {
      const n = utf8Length(v);
      if (n < 0) codecFail('CODEC_INVALID_VALUE', 'metadata string with a lone surrogate', F);
      if (n > META_LIMITS.bytes) codecFail('CODEC_OVERSIZE', 'metadata too large', F);
      return w.text(v, n);
    }
    case 'object':
      break;
    default:
      codecFail('CODEC_WRONG_TYPE', `metadata value of type ${typeof v}`, F);
  }
  if (depth >= META_LIMITS.depth) codecFail('CODEC_OVERSIZE', 'metadata nested too deeply', F);
  if (Array.isArray(v)) {
    const items = [...(v as unknown[])]; // one snapshot: what is checked is what is written
    if (items.length > META_LIMITS.items) codecFail('CODEC_OVERSIZE', 'metadata array too long', F);
    w.head(MT.ARRAY, items.length);
    for (let i = 0; i < items.length; i++) {
      if (!(i in items)) codecFail('CODEC_WRONG_TYPE', 'metadata array with a hole', F);
      writeValue(w, items[i], depth + 1);
    }
    return;
  }
  writeObject(w, v as object, depth + 1);
}

function writeObject(w: CborWriter, o: object, depth: number): void {
  if (!isPlainObject(o)) codecFail('CODEC_WRONG_TYPE', 'metadata object is not a plain object', F);
  const pairs = Object.entries(o);
  if (pairs.length > META_LIMITS.items) codecFail('CODEC_OVERSIZE', 'metadata object too large', F);
  const lens = new Map<string, number>();
  for (const [k] of pairs) lens.set(k, checkKey(k));
  pairs.sort((a, b) => compareMetaKeys(a[0], b[0]));
  w.head(MT.MAP, pairs.length);
  for (const [k, v] of pairs) {
    w.text(k, lens.get(k) as number);
    writeValue(w, v, depth);
  }
}

/** Validate and encode metadata: the canonical CBOR map (ready to be a map value). */
export function encodeMeta(meta: unknown): Uint8Array {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
    codecFail('CODEC_WRONG_TYPE', 'metadata must be an object', F);
  if (Object.keys(meta).length === 0)
    codecFail('CODEC_INVALID_VALUE', 'empty metadata (omit the field instead)', F);
  const w = new CborWriter(128);
  writeObject(w, meta, 1);
  const out = w.finish();
  if (out.length > META_LIMITS.bytes) codecFail('CODEC_OVERSIZE', 'metadata too large', F);
  return out;
}

function readValue(r: CborReader, depth: number): JsonValue {
  const b = r.buf[r.pos];
  if (b === 0xf6) {
    r.pos++;
    return null;
  }
  if (b === 0xf5 || b === 0xf4) {
    r.pos++;
    return b === 0xf5;
  }
  if (b === undefined) codecFail('CODEC_MALFORMED', 'truncated input', F);
  const major = b >> 5;
  if (major === MT.UINT || major === MT.NINT || b === 0xf9 || b === 0xfa || b === 0xfb) {
    const x = r.readNumber(F);
    if (!Number.isFinite(x) || Object.is(x, -0))
      codecFail('CODEC_INVALID_VALUE', 'metadata number not finite or −0', F);
    return x;
  }
  if (major === MT.TEXT) return r.readText(META_LIMITS.bytes, F);
  if (depth >= META_LIMITS.depth) codecFail('CODEC_OVERSIZE', 'metadata nested too deeply', F);
  if (major === MT.ARRAY) {
    const n = r.readArrayLen(META_LIMITS.items, F);
    const out: JsonValue[] = [];
    for (let i = 0; i < n; i++) out.push(readValue(r, depth + 1));
    return out;
  }
  if (major === MT.MAP) return readObject(r, depth + 1);
  return codecFail('CODEC_WRONG_TYPE', 'metadata item outside the JSON data model', F);
}

function readObject(r: CborReader, depth: number): JsonObject {
  const n = r.readMapLen();
  if (n > META_LIMITS.items) codecFail('CODEC_OVERSIZE', 'metadata object too large', F);
  const pairs: [string, JsonValue][] = [];
  let prev: string | undefined;
  for (let i = 0; i < n; i++) {
    const key = r.readText(META_LIMITS.keyChars * 4, F);
    checkKey(key);
    if (prev !== undefined) {
      const c = compareMetaKeys(prev, key);
      if (c === 0) codecFail('CODEC_DUPLICATE_KEY', 'duplicate metadata key', F);
      if (c > 0) codecFail('CODEC_NON_CANONICAL', 'metadata keys out of order', F);
    }
    prev = key;
    pairs.push([key, readValue(r, depth)]);
  }
  // fromEntries defines own data properties (a `__proto__` key stays a key).
  return Object.fromEntries(pairs);
}

/** Read the metadata map at the reader's position (strict: the one canonical encoding). */
export function readMeta(r: CborReader): JsonObject {
  const start = r.pos;
  const b = r.buf[start];
  if (b === undefined || b >> 5 !== MT.MAP)
    codecFail('CODEC_WRONG_TYPE', 'metadata must be a map', F);
  const out = readObject(r, 1);
  if (Object.keys(out).length === 0)
    codecFail('CODEC_INVALID_VALUE', 'empty metadata (omit the field instead)', F);
  if (r.pos - start > META_LIMITS.bytes) codecFail('CODEC_OVERSIZE', 'metadata too large', F);
  return out;
}

/** Decode a standalone metadata encoding (tests, tooling). */
export function decodeMeta(bytes: Uint8Array): JsonObject {
  const r = new CborReader(bytes);
  const out = readMeta(r);
  r.end();
  return out;
}

/** Deep equality of two JSON values (numbers by value, objects by their key sets). */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as readonly JsonValue[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as JsonObject;
  const bo = b as JsonObject;
  const ka = Object.keys(ao);
  if (ka.length !== Object.keys(bo).length) return false;
  return ka.every((k) => Object.hasOwn(bo, k) && jsonEqual(ao[k], bo[k]));
}
