/**
 * @module core/entry/tombstone
 * The tombstone record, version 1: a signed statement that entry `target` is deleted
 * (MemLineage §3.4). A distinct record type with its own codec; its `t: 'tombstone'`
 * discriminator and its own signing domain keep it from ever being read as an entry.
 * Same wire conventions and strictness as `./entry.ts`.
 */
import { safely, type SafeResult } from '../errors.js';
import { CborReader, CborWriter, MT, codecFail, headSize, uintSize } from '../codec/wire.js';
import {
  checkBytes,
  checkKid,
  checkPrincipal,
  checkRecordType,
  checkText,
  checkUint64,
  checkUuid,
  checkVersion,
  readUuid,
} from './fields.js';
import { LIMITS, TOMBSTONE_KEYS, type SignedTombstone, type TombstoneBody } from './types.js';

type Key = (typeof TOMBSTONE_KEYS)[number];
const RANK = new Map<string, number>(TOMBSTONE_KEYS.map((k, i) => [k, i]));
const K = Object.fromEntries(
  TOMBSTONE_KEYS.map((k) => [
    k,
    Uint8Array.from([0x60 + k.length, ...Array.from(k, (c) => c.charCodeAt(0))]),
  ]),
) as Record<Key, Uint8Array>;
const TOMBSTONE_TEXT = 'tombstone';
const KEYS_SIZE = TOMBSTONE_KEYS.reduce((n, k) => (k === 'sig' ? n : n + K[k].length), 0);

interface Prepared {
  /** A validated snapshot of the caller's object. */
  readonly body: TombstoneBody;
  /** The validated signature, when encoding the signed record. */
  readonly sig: Uint8Array | undefined;
  readonly id: Uint8Array;
  readonly target: Uint8Array;
  readonly reasonLen: number;
}

function prepare(input: TombstoneBody, withSig: boolean): Prepared {
  if (typeof input !== 'object' || input === null)
    codecFail('CODEC_WRONG_TYPE', 'tombstone is not an object');
  // Snapshot once so the bytes written are exactly the values validated.
  const b: Record<string, unknown> = { ...input };
  const body = b as unknown as SignedTombstone;
  for (const k of Object.keys(b)) {
    if (!RANK.has(k)) codecFail('CODEC_UNKNOWN_KEY', 'unknown tombstone field', k);
    if (b[k] === undefined)
      codecFail('CODEC_WRONG_TYPE', 'field is undefined (omit it instead)', k);
  }
  for (const k of TOMBSTONE_KEYS)
    if ((k !== 'sig' || withSig) && !(k in b))
      codecFail('CODEC_MISSING_KEY', 'missing tombstone field', k);
  checkRecordType(body.t, TOMBSTONE_TEXT);
  checkVersion(body.v);
  const id = checkUuid(body.id, 'id');
  const target = checkUuid(body.target, 'target');
  const reasonLen = checkText(body.reason, 'reason', 1, LIMITS.reasonChars);
  checkPrincipal(body.writer, 'writer');
  checkKid(body.kid);
  checkUint64(body.ts, 'ts');
  checkBytes(body.nonce, 16, 'nonce');
  checkRelations(body);
  const sig = withSig ? checkBytes(body.sig, 64, 'sig') : undefined;
  return { body, sig, id, target, reasonLen };
}

function checkRelations(t: { id: string; target: string }): void {
  if (t.id === t.target) codecFail('CODEC_INVALID_VALUE', 'tombstone targets itself', 'target');
}

function write(p: Prepared, sig: Uint8Array | undefined): Uint8Array {
  const t = p.body;
  const text = (n: number): number => headSize(n) + n;
  let size = 1 + KEYS_SIZE + text(TOMBSTONE_TEXT.length) + 1 + 17 + uintSize(t.ts) + 17 + 17;
  size += text(p.reasonLen) + 17 + text(t.writer.length);
  if (sig !== undefined) size += K.sig.length + 66;
  // Exact size: the writer allocates once and returns its buffer without a copy.
  const w = new CborWriter(size);
  w.head(MT.MAP, sig === undefined ? 9 : 10);
  // Keys in TOMBSTONE_KEYS order (RFC 8949 §4.2.1).
  w.raw(K.t);
  w.text(TOMBSTONE_TEXT, TOMBSTONE_TEXT.length);
  w.raw(K.v);
  w.head(MT.UINT, 1);
  w.raw(K.id);
  w.bytes(p.id);
  w.raw(K.ts);
  w.uint(t.ts);
  w.raw(K.kid);
  w.text(t.kid, 16);
  if (sig !== undefined) {
    w.raw(K.sig);
    w.bytes(sig);
  }
  w.raw(K.nonce);
  w.bytes(t.nonce);
  w.raw(K.reason);
  w.text(t.reason, p.reasonLen);
  w.raw(K.target);
  w.bytes(p.target);
  w.raw(K.writer);
  w.text(t.writer, t.writer.length);
  return w.finish();
}

/** Check a tombstone body against every rule the decoder applies. Use before signing. */
export function validateTombstoneBody(body: TombstoneBody): void {
  prepare(body, false);
}

/** Canonical bytes of the tombstone body (without `sig`; a `sig` property is ignored). */
export function encodeTombstoneBody(body: TombstoneBody): Uint8Array {
  return write(prepare(body, false), undefined);
}

/** Canonical bytes of the signed tombstone record. */
export function encodeSignedTombstone(t: SignedTombstone): Uint8Array {
  const p = prepare(t, true);
  return write(p, p.sig);
}

/** Decode a signed tombstone with the same strictness as entries; throws `CODEC_*` errors only. */
export function decodeSignedTombstone(bytes: Uint8Array): SignedTombstone {
  if (!(bytes instanceof Uint8Array)) codecFail('CODEC_WRONG_TYPE', 'input is not a Uint8Array');
  if (bytes.length > LIMITS.tombstoneBytes) codecFail('CODEC_OVERSIZE', 'tombstone too large');
  const r = new CborReader(bytes);
  const n = r.readMapLen();
  const f: Record<string, unknown> = {};
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const key = r.readKey();
    const rank = RANK.get(key);
    if (rank === undefined) codecFail('CODEC_UNKNOWN_KEY', 'unknown tombstone key', key);
    if (rank === prev) codecFail('CODEC_DUPLICATE_KEY', 'duplicate tombstone key', key);
    if (rank < prev) codecFail('CODEC_NON_CANONICAL', 'tombstone keys out of order', key);
    prev = rank;
    f[key] = readField(r, key as Key);
  }
  r.end();
  for (const k of TOMBSTONE_KEYS)
    if (!(k in f)) codecFail('CODEC_MISSING_KEY', 'missing tombstone key', k);
  const t = f as unknown as SignedTombstone;
  checkRelations(t);
  return t;
}

function readField(r: CborReader, key: Key): unknown {
  switch (key) {
    case 't': {
      const t = r.readText(16, 't');
      checkRecordType(t, TOMBSTONE_TEXT);
      return t;
    }
    case 'v': {
      const v = r.readSmallUint('v');
      checkVersion(v);
      return v;
    }
    case 'id':
    case 'target':
      return readUuid(r, key);
    case 'ts':
      return r.readUint('ts');
    case 'kid': {
      const s = r.readText(16, 'kid');
      checkKid(s);
      return s;
    }
    case 'sig':
      return checkBytes(r.readBytes('sig'), 64, 'sig');
    case 'nonce':
      return checkBytes(r.readBytes('nonce'), 16, 'nonce');
    case 'reason': {
      const s = r.readText(LIMITS.reasonChars * 4, 'reason');
      checkText(s, 'reason', 1, LIMITS.reasonChars);
      return s;
    }
    case 'writer': {
      const s = r.readText(64, 'writer');
      checkPrincipal(s, 'writer');
      return s;
    }
  }
}

/** {@link decodeSignedTombstone} as a result value; never throws. */
export function safeDecodeSignedTombstone(bytes: Uint8Array): SafeResult<SignedTombstone> {
  return safely(() => decodeSignedTombstone(bytes), 'CODEC_MALFORMED');
}
