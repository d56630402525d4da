/**
 * @module adapters/sql/rank
 * Pure ranking helpers shared by every backend: cosine similarity (the in-process fallback when
 * PostgreSQL has no pgvector, and the in-memory backend), a small term-overlap lexical score
 * (the in-memory stand-in for PostgreSQL full text), embedding validation, and an exact,
 * fast text form of `float4` vectors.
 */
import { MemwardenError } from '../../core/errors.js';
import { SourceTiers } from '../../core/trust.js';
import {
  type BrowseQuery,
  EMBEDDING_DIMENSIONS,
  ENTRY_STATUSES,
  type SearchQuery,
} from '../../ports/storage.js';

/** Refuse an embedding the `vector(384)` column (and cosine ranking) cannot hold. */
export function checkEmbedding(v: Float32Array, what = 'embedding'): Float32Array {
  if (!(v instanceof Float32Array) || v.length !== EMBEDDING_DIMENSIONS) {
    throw new MemwardenError(
      'INPUT_INVALID',
      `${what} must be a ${EMBEDDING_DIMENSIONS}-d Float32Array`,
    );
  }
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i]))
      throw new MemwardenError('INPUT_INVALID', `${what} has a non-finite value`);
  }
  return v;
}

/** Cosine similarity in [-1, 1]; 0 when either vector is all zeros (pgvector yields NaN there). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** `Σ v[i]²` in index order: {@link cosine}'s `nb` (and `na`) for `v`, bit for bit. */
export function norm2(v: Float32Array): number {
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const y = v[i]!;
    n += y * y;
  }
  return n;
}

/**
 * {@link cosine}`(a, b)` with both squared norms summed beforehand ({@link norm2}): each of the
 * three sums is accumulated in the same order either way, so the score is the same double —
 * for ranking many rows against one query with the rows' norms kept.
 */
export function cosineNormed(a: Float32Array, na: number, b: Float32Array, nb: number): number {
  if (a.length !== b.length) return cosine(a, b);
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Lower-cased word tokens (letters and digits), as PostgreSQL's `simple` configuration splits them. */
export function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Lexical score of `doc` for the words of `query` (any of them): 0 when no word matches, else
 * raw/(raw+1) ∈ (0, 1) with raw = Σ over matched words of (1 + ln tf) / (1 + ln |doc|) — a
 * term-frequency score damped by length, squashed the way `ts_rank(…, 32)` squashes.
 */
export function lexicalScore(queryTerms: ReadonlySet<string>, doc: string): number {
  if (queryTerms.size === 0) return 0;
  const counts = new Map<string, number>();
  const toks = tokens(doc);
  for (const t of toks) if (queryTerms.has(t)) counts.set(t, (counts.get(t) ?? 0) + 1);
  if (counts.size === 0) return 0;
  let raw = 0;
  for (const tf of counts.values()) raw += 1 + Math.log(tf);
  raw /= 1 + Math.log(toks.length);
  return raw / (raw + 1);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * The text form of a float4 vector using C99 hexadecimal floats (`0x1.8p-3`): exact for every
 * float4, and several times cheaper for the server to parse than decimals (strtof on decimal
 * input dominated PGlite insert time: ~1.3 µs per value in WebAssembly). Both pgvector's
 * `vector_in` and PostgreSQL's `float4in` parse with `strtof`, which accepts this form.
 * `open`/`close` pick the literal: `[` `]` for `vector`, `{` `}` for `real[]`.
 */
export function float4Literal(v: Float32Array, open: '[' | '{', close: ']' | '}'): string {
  const bits = new Uint32Array(v.buffer, v.byteOffset, v.length);
  const out = new Array<string>(v.length);
  for (let i = 0; i < v.length; i++) {
    const b = bits[i]!;
    const sign = b >>> 31 ? '-' : '';
    const e = (b >>> 23) & 0xff;
    const m = (b & 0x7fffff) << 1; // 23 mantissa bits → 24 bits = 6 hex digits
    if (e === 0 && m === 0) {
      out[i] = `${sign}0`;
      continue;
    }
    const digits = HEX[m >>> 16]! + HEX[(m >>> 8) & 0xff]! + HEX[m & 0xff]!;
    out[i] = e === 0 ? `${sign}0x0.${digits}p-126` : `${sign}0x1.${digits}p${e - 127}`;
  }
  return open + out.join(',') + close;
}

/** A float4 vector from a `vector` (text `[…]`) or `real[]` (number array or text `{…}`) column. */
export function float4Out(v: unknown): Float32Array {
  if (Array.isArray(v)) return Float32Array.from(v, Number);
  if (typeof v === 'string' && v.length >= 2) {
    const body = v.slice(1, -1).trim();
    return body === '' ? new Float32Array(0) : Float32Array.from(body.split(','), Number);
  }
  throw new MemwardenError('STORAGE_FAILED', 'unexpected column value: expected a vector');
}

/** The shared argument checks of `searchEntries`. */
export function checkSearchQuery(q: SearchQuery): void {
  if (!Number.isSafeInteger(q.limit) || q.limit < 1 || q.limit > 1000)
    throw new MemwardenError('INPUT_INVALID', 'search limit must be an integer in 1..1000');
  if (q.embedding === undefined && q.text === undefined)
    throw new MemwardenError('INPUT_INVALID', 'search needs an embedding or a text');
  if (q.embedding !== undefined) checkEmbedding(q.embedding, 'query embedding');
  if (typeof q.nowNs !== 'bigint') throw new MemwardenError('INPUT_INVALID', 'search needs nowNs');
}

/** The shared argument checks of `findEntriesBy`: at least one key. */
export function checkFindBy(opts: { uri?: string; srcHash?: string }): void {
  if (opts.uri === undefined && opts.srcHash === undefined)
    throw new MemwardenError('INPUT_INVALID', 'findEntriesBy needs a uri or a srcHash');
}

/** The shared argument checks of `listEntriesFor`. */
export function checkPage(opts: { limit: number; offset?: number }): void {
  if (!Number.isSafeInteger(opts.limit) || opts.limit < 0 || opts.limit > 10_000)
    throw new MemwardenError('INPUT_INVALID', 'limit must be an integer in 0..10000');
  if (opts.offset !== undefined && (!Number.isSafeInteger(opts.offset) || opts.offset < 0))
    throw new MemwardenError('INPUT_INVALID', 'offset must be a non-negative integer');
}

/** PostgreSQL's type oid of `float4` (the element type in a binary `real[]`). */
const FLOAT4_OID = 700;

/**
 * The binary send format of a `real[]` (PostgreSQL `array_recv`: ndim, has-nulls flag,
 * element oid, then per dimension its length and lower bound, then per element an int32
 * length and the big-endian float4). For a driver that passes byte arrays as binary
 * parameters (`pg`): the server copies the floats instead of parsing text, and the client
 * builds no string — the write path's largest per-entry cost on the server backend.
 */
export function float4ArrayBinary(v: Float32Array): Uint8Array {
  const out = new Uint8Array(20 + 8 * v.length);
  const dv = new DataView(out.buffer);
  dv.setInt32(0, 1); // ndim
  dv.setInt32(4, 0); // no nulls
  dv.setInt32(8, FLOAT4_OID);
  dv.setInt32(12, v.length);
  dv.setInt32(16, 1); // lower bound
  for (let i = 0, o = 20; i < v.length; i++, o += 8) {
    dv.setInt32(o, 4);
    dv.setFloat32(o + 4, v[i]!);
  }
  return out;
}

/** The binary send format of a pgvector `vector` (`vector_recv`: int16 dim, int16 unused, float4s). */
export function vectorBinary(v: Float32Array): Uint8Array {
  const out = new Uint8Array(4 + 4 * v.length);
  const dv = new DataView(out.buffer);
  dv.setInt16(0, v.length);
  dv.setInt16(2, 0);
  for (let i = 0; i < v.length; i++) dv.setFloat32(4 + 4 * i, v[i]!);
  return out;
}

/** The shared argument checks of `scanEntries`; returns the normalised keyset start. */
export function checkScan(opts: { afterLeafIndex?: number; limit: number }): number {
  if (!Number.isSafeInteger(opts.limit) || opts.limit < 1 || opts.limit > 10_000)
    throw new MemwardenError('INPUT_INVALID', 'scan limit must be an integer in 1..10000');
  const after = opts.afterLeafIndex ?? -1;
  if (!Number.isSafeInteger(after) || after < -1)
    throw new MemwardenError('INPUT_INVALID', 'afterLeafIndex must be an integer >= -1');
  return after;
}

/** Longest `text` filter of `browseEntries`. */
export const MAX_BROWSE_TEXT = 512;

const badBrowse = (what: string): MemwardenError =>
  new MemwardenError('INPUT_INVALID', `browseEntries: ${what}`);

/** A filter string the database can hold: non-empty, bounded, no NUL. */
function browseString(v: unknown, what: string, max: number): void {
  if (typeof v !== 'string' || v.length === 0 || v.length > max || v.includes('\0'))
    throw badBrowse(`${what} must be a string of 1..${max} chars without NUL`);
}

/** The shared argument checks of `browseEntries` (before any query runs). */
export function checkBrowse(q: BrowseQuery): void {
  if (!Number.isSafeInteger(q.limit) || q.limit < 1 || q.limit > 1000)
    throw badBrowse('limit must be an integer in 1..1000');
  if (typeof q.nowNs !== 'bigint') throw badBrowse('nowNs is required');
  if (
    q.beforeLeafIndex !== undefined &&
    (!Number.isSafeInteger(q.beforeLeafIndex) || q.beforeLeafIndex < 0)
  )
    throw badBrowse('beforeLeafIndex must be a non-negative integer');
  if (q.owner !== undefined) browseString(q.owner, 'owner', 256);
  if (q.uri !== undefined) browseString(q.uri, 'uri', 2048);
  if (q.text !== undefined) browseString(q.text, 'text', MAX_BROWSE_TEXT);
  for (const k of q.kinds ?? []) browseString(k, 'a kind', 64);
  for (const t of q.tiers ?? [])
    if (!(SourceTiers as readonly string[]).includes(t)) throw badBrowse('unknown tier');
  for (const st of q.statuses ?? [])
    if (!ENTRY_STATUSES.includes(st)) throw badBrowse('unknown status');
  for (const [v, what] of [
    [q.createdFromNs, 'createdFromNs'],
    [q.createdBeforeNs, 'createdBeforeNs'],
  ] as const) {
    if (v !== undefined && (typeof v !== 'bigint' || v < -(2n ** 63n) || v > 2n ** 63n - 1n))
      throw badBrowse(`${what} must be a bigint in the int8 range`);
  }
}

/** Lower-case ASCII letters only: the text filter's case folding on every backend. */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

const badVector = (): MemwardenError =>
  new MemwardenError('STORAGE_FAILED', 'unexpected column value: expected a binary vector');

/** `n` big-endian float4s at `src[offset…]` as a fresh Float32Array (exact bit patterns). */
export function float4FromBigEndian(src: Uint8Array, offset: number, n: number): Float32Array {
  if (offset < 0 || offset + 4 * n > src.length) throw badVector();
  const out = new Float32Array(n);
  const dv = new DataView(src.buffer, src.byteOffset + offset, 4 * n);
  for (let i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i);
  return out;
}

/** A float4 vector from pgvector's binary send format (`vector_send`: int16 dim, int16 unused, float4s). */
export function float4FromVectorSend(
  b: Uint8Array,
  offset = 0,
  length = b.length - offset,
): Float32Array {
  if (length < 4) throw badVector();
  const dim = new DataView(b.buffer, b.byteOffset + offset, 4).getInt16(0);
  if (dim < 0 || length !== 4 + 4 * dim) throw badVector();
  return float4FromBigEndian(b, offset + 4, dim);
}

/**
 * A float4 vector from the binary send format of a one-dimensional `real[]` without NULLs
 * (`array_send`, the inverse of {@link float4ArrayBinary}).
 */
export function float4FromArraySend(b: Uint8Array): Float32Array {
  if (b.length < 12) throw badVector();
  const dv = new DataView(b.buffer, b.byteOffset, b.length);
  const ndim = dv.getInt32(0);
  if (ndim === 0 && b.length === 12) return new Float32Array(0);
  if (ndim !== 1 || dv.getInt32(4) !== 0 || dv.getInt32(8) !== FLOAT4_OID || b.length < 20)
    throw badVector();
  const n = dv.getInt32(12);
  if (n < 0 || b.length !== 20 + 8 * n) throw badVector();
  const out = new Float32Array(n);
  for (let i = 0, o = 20; i < n; i++, o += 8) {
    if (dv.getInt32(o) !== 4) throw badVector();
    out[i] = dv.getFloat32(o + 4);
  }
  return out;
}
