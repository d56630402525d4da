/**
 * @module core/entry/entry-decode
 * Strict decoding of the signed entry record, version 1. Every structural rule (one canonical
 * CBOR encoding, RFC 8949 §4.2.1; known keys only; no trailing bytes) and every field rule of
 * `./fields.ts` is checked here, before any caller verifies a signature — so a signature
 * check never runs on bytes that have a second spelling.
 */
import { failed, safely, type SafeResult } from '../errors.js';
import { CborReader, codecFail } from '../codec/wire.js';
import {
  checkBytes,
  checkEntryRelations,
  checkKid,
  checkKind,
  checkLabel,
  checkPrincipal,
  checkRecordType,
  checkText,
  checkTier,
  checkVersion,
  checkWeight,
  readUuid,
} from './fields.js';
import { ENTRY_RANK, ENTRY_REQUIRED_SIGNED, ENTRY_TEXT } from './entry.js';
import { ENTRY_KEYS, LIMITS, type SignedEntry } from './types.js';
import { SourceTiers, TrustLabels } from '../trust.js';
import { ENTRY_SIGNING_DOMAIN } from './signing.js';
import { decodeSignedEntryV2, isV2Record, v2SigningInput } from './entry-v2.js';

type Mutable<T> = { -readonly [P in keyof T]: T[P] };

/**
 * Each schema key's canonical encoding by rank (a text head of one byte — every key is shorter
 * than 24 characters — then its ASCII). Keys are read by matching these bytes against the
 * ranks still allowed after the previous key: a match is exactly "a known key, in canonical
 * order, not a duplicate"; anything else takes the general path for the precise error.
 */
const KEY_BYTES: readonly Uint8Array[] = ENTRY_KEYS.map((k) =>
  Uint8Array.from([0x60 + k.length, ...Array.from(k, (c) => c.charCodeAt(0))]),
);
const NKEYS = ENTRY_KEYS.length;

/** The ranks the `switch` in {@link decodeEntry} is written against (checked at load). */
const RANKS = [
  't',
  'v',
  'id',
  'ns',
  'ts',
  'ctx',
  'exp',
  'kid',
  'rev',
  'sig',
  'src',
  'sup',
  'uri',
  'kind',
  'tier',
  'label',
  'nonce',
  'writer',
  'content',
  'parents',
  'weights',
] as const;
if (RANKS.length !== NKEYS || RANKS.some((k, i) => ENTRY_RANK.get(k) !== i))
  throw new Error('entry-decode: ENTRY_KEYS changed; update RANKS and the decoder switch');

/** Canonical encodings of the closed-vocabulary text values, decoded to shared strings. */
function encodedTexts<T extends string>(values: readonly T[]): { s: T; b: Uint8Array }[] {
  return values.map((v) => {
    if (v.length >= 24 || !/^[\x20-\x7e]*$/.test(v)) throw new Error('not a short ASCII value');
    return {
      s: v,
      b: Uint8Array.from([0x60 + v.length, ...Array.from(v, (c) => c.charCodeAt(0))]),
    };
  });
}
const TIER_TEXT = encodedTexts(SourceTiers);
const LABEL_TEXT = encodedTexts(TrustLabels);
const ENTRY_T_TEXT = encodedTexts([ENTRY_TEXT]);

/** Does `b[at..)` start with `enc`? */
function bytesAt(b: Uint8Array, at: number, enc: Uint8Array): boolean {
  const n = enc.length;
  if (at + n > b.length) return false;
  for (let i = 0; i < n; i++) if (b[at + i] !== enc[i]) return false;
  return true;
}

/**
 * If the next item is the canonical encoding of one of `known`, consume it and return the
 * shared string (no allocation); otherwise leave the position and return undefined (the caller
 * reads it the general way, which then reports the precise error or the same value).
 */
function knownText<T extends string>(
  r: CborReader,
  known: readonly { s: T; b: Uint8Array }[],
): T | undefined {
  for (const k of known) {
    if (bytesAt(r.buf, r.pos, k.b)) {
      r.pos += k.b.length;
      return k.s;
    }
  }
  return undefined;
}

/**
 * Decode a signed entry, enforcing canonical encoding, the schema and every field rule before
 * any signature check. Throws `MemwardenError` with a `CODEC_*` code only: `CODEC_OVERSIZE`,
 * `CODEC_MALFORMED`, `CODEC_NON_CANONICAL` (incl. keys out of order), `CODEC_DUPLICATE_KEY`,
 * `CODEC_TRAILING_BYTES`, `CODEC_UNKNOWN_KEY`, `CODEC_MISSING_KEY`, `CODEC_WRONG_TYPE`,
 * `CODEC_INVALID_VALUE`, `CODEC_UNSUPPORTED_VERSION`.
 */
export function decodeSignedEntry(bytes: Uint8Array): SignedEntry {
  if (bytes instanceof Uint8Array && isV2Record(bytes)) return decodeSignedEntryV2(bytes);
  return decodeEntry(bytes, undefined);
}

/** Where the `sig` pair sits in the record bytes (filled in by {@link decodeEntry}). */
interface SigSpan {
  start: number;
  end: number;
  /** Offset of the 16 id bytes. */
  id: number;
}

/**
 * `knownId` / `knownNs`: what the caller expects `id` and `ns` to be (a stored row's columns).
 * When the record spells exactly these, the decoded entry holds these strings instead of new
 * copies. Only a saving: any other spelling decodes as usual (and the caller's comparison
 * then fails).
 */
function decodeEntry(
  bytes: Uint8Array,
  span: SigSpan | undefined,
  knownId?: string,
  knownNs?: string,
): SignedEntry {
  if (!(bytes instanceof Uint8Array)) codecFail('CODEC_WRONG_TYPE', 'input is not a Uint8Array');
  if (bytes.length > LIMITS.entryBytes) codecFail('CODEC_OVERSIZE', 'entry too large');
  const r = new CborReader(bytes);
  const n = r.readMapLen();
  // One local per field rather than a dictionary: the result gets one stable hidden class.
  let t: unknown, v: unknown, id: unknown, ns: unknown, ts: unknown, ctx: unknown, kid: unknown;
  let sig: unknown, src: unknown, kind: unknown, tier: unknown, label: unknown, nonce: unknown;
  let writer: unknown, content: unknown, parents: unknown, weights: unknown;
  let exp: bigint | undefined,
    rev: string | undefined,
    sup: string | undefined,
    uri: string | undefined;
  /** The encoded `ns` item (head and text), for a `writer` spelled the same way. */
  let nsAt = -1;
  let nsEnd = -1;
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const keyAt = r.pos;
    let rank = -1;
    for (let c = prev + 1; c < NKEYS; c++) {
      const enc = KEY_BYTES[c] as Uint8Array;
      if (bytesAt(bytes, keyAt, enc)) {
        rank = c;
        r.pos = keyAt + enc.length;
        break;
      }
    }
    if (rank < 0) {
      // Not a schema key allowed here: the general path names the precise error (a key of a
      // higher rank would have matched above, so this never accepts).
      const key = r.readKey();
      const k = ENTRY_RANK.get(key);
      if (k === undefined) codecFail('CODEC_UNKNOWN_KEY', 'unknown entry key', key);
      // Sorted keys make any duplicate adjacent (RFC 8949 §4.2.1, §5.6).
      if (k === prev) codecFail('CODEC_DUPLICATE_KEY', 'duplicate entry key', key);
      if (k < prev) codecFail('CODEC_NON_CANONICAL', 'entry keys out of order', key);
      rank = k;
    }
    prev = rank;
    switch (rank) {
      case 0: // t
        t = knownText(r, ENTRY_T_TEXT);
        if (t === undefined) {
          t = r.readText(16, 't');
          checkRecordType(t, ENTRY_TEXT);
        }
        break;
      case 1: // v
        v = r.readSmallUint('v');
        checkVersion(v);
        break;
      case 2: // id
        id = readUuid(r, 'id', knownId);
        if (span !== undefined) span.id = r.pos - 16;
        break;
      case 3: // ns
        nsAt = r.pos;
        ns = r.readText(LIMITS.nsChars * 4, 'ns', knownNs);
        // ASCII: its UTF-8 length is its length in code points, and it is well-formed.
        if (r.ascii) checkAsciiLength(ns as string, 'ns', 1, LIMITS.nsChars);
        else checkText(ns, 'ns', 1, LIMITS.nsChars);
        nsEnd = r.pos;
        break;
      case 4: // ts
        ts = r.readUint('ts');
        break;
      case 5: // ctx
        ctx = checkBytes(r.readBytes('ctx'), 32, 'ctx');
        break;
      case 6: // exp
        exp = r.readUint('exp');
        break;
      case 7: // kid
        kid = r.readText(16, 'kid');
        checkKid(kid);
        break;
      case 8: // rev
        rev = r.readText(64, 'rev');
        checkPrincipal(rev, 'rev');
        break;
      case 9: // sig
        sig = checkBytes(r.readBytes('sig'), 64, 'sig');
        if (span !== undefined) {
          span.start = keyAt;
          span.end = r.pos;
        }
        break;
      case 10: // src
        src = checkBytes(r.readBytes('src'), 32, 'src');
        break;
      case 11: // sup
        sup = readUuid(r, 'sup');
        break;
      case 12: // uri
        uri = r.readText(LIMITS.uriChars * 4, 'uri');
        checkText(uri, 'uri', 1, LIMITS.uriChars);
        break;
      case 13: // kind
        kind = r.readText(LIMITS.kindChars, 'kind');
        checkKind(kind, LIMITS.kindChars);
        break;
      case 14: // tier
        tier = knownText(r, TIER_TEXT) ?? checkTier(r.readText(32, 'tier'));
        break;
      case 15: // label
        label = knownText(r, LABEL_TEXT) ?? checkLabel(r.readText(32, 'label'));
        break;
      case 16: // nonce
        nonce = checkBytes(r.readBytes('nonce'), 16, 'nonce');
        break;
      case 17: // writer
        // The writer is usually the namespace's principal: the same encoded item (a canonical
        // text already read) is the same string, so share it instead of reading a copy.
        if (nsAt >= 0 && sameItem(bytes, nsAt, nsEnd, r.pos)) {
          writer = ns;
          r.pos += nsEnd - nsAt;
        } else writer = r.readText(64, 'writer');
        checkPrincipal(writer, 'writer');
        break;
      case 18: // content
        content = r.readText(LIMITS.contentBytes, 'content');
        break;
      case 19: {
        // parents
        const m = r.readArrayLen(LIMITS.parents, 'parents');
        const out: string[] = [];
        for (let j = 0; j < m; j++) out.push(readUuid(r, 'parents'));
        parents = out;
        break;
      }
      case 20: {
        // weights
        const m = r.readArrayLen(LIMITS.parents, 'weights');
        const out: number[] = [];
        for (let j = 0; j < m; j++) out.push(checkWeight(r.readNumber('weights')));
        weights = out;
        break;
      }
    }
  }
  r.end();
  const entry = {
    t,
    v,
    id,
    ns,
    writer,
    kid,
    kind,
    content,
    tier,
    label,
    src,
    ctx,
    parents,
    weights,
    ts,
    nonce,
    sig,
  } as Mutable<SignedEntry>;
  // The common case in one pass over the locals; the named check only when one is missing.
  if (
    t === undefined ||
    v === undefined ||
    id === undefined ||
    ns === undefined ||
    ts === undefined ||
    ctx === undefined ||
    kid === undefined ||
    sig === undefined ||
    src === undefined ||
    kind === undefined ||
    tier === undefined ||
    label === undefined ||
    nonce === undefined ||
    writer === undefined ||
    content === undefined ||
    parents === undefined ||
    weights === undefined
  ) {
    for (const k of ENTRY_REQUIRED_SIGNED)
      if (entry[k] === undefined) codecFail('CODEC_MISSING_KEY', 'missing entry key', k);
  }
  // Optional fields stay absent when unset (exactOptionalPropertyTypes).
  if (uri !== undefined) entry.uri = uri;
  if (exp !== undefined) entry.exp = exp;
  if (rev !== undefined) entry.rev = rev;
  if (sup !== undefined) entry.sup = sup;
  checkEntryRelations(entry);
  return entry;
}

/** Are the bytes at `at` the same as `b[start..end)`? */
function sameItem(b: Uint8Array, start: number, end: number, at: number): boolean {
  const n = end - start;
  if (at + n > b.length) return false;
  for (let i = 0; i < n; i++) if (b[at + i] !== b[start + i]) return false;
  return true;
}

/** `checkText` for a string known to be ASCII (code points = UTF-16 units = UTF-8 bytes). */
function checkAsciiLength(v: string, field: string, min: number, max: number): void {
  if (v.length > max) codecFail('CODEC_OVERSIZE', 'string too long', field);
  if (v.length < min) codecFail('CODEC_INVALID_VALUE', 'string too short', field);
}

/** {@link decodeSignedEntry} as a result value; never throws. */
export function safeDecodeSignedEntry(bytes: Uint8Array): SafeResult<SignedEntry> {
  return safely(() => decodeSignedEntry(bytes), 'CODEC_MALFORMED');
}

/** A strictly decoded entry and where its signed parts sit in the record bytes. */
export interface EntryForVerify {
  readonly entry: SignedEntry;
  /** Offsets of the `sig` map pair (key and value) in the record. */
  readonly sigStart: number;
  readonly sigEnd: number;
  /** Offset of the 16 id bytes in the record. */
  readonly idAt: number;
}

/**
 * {@link decodeSignedEntry}, plus where the signed parts sit, so the signing input can be cut
 * out of the record bytes instead of re-encoding the body ({@link withEntrySigningInput}).
 * `expect` (a stored row: its `id` and `owner` columns) only saves copies: when the record's
 * `id` / `ns` are exactly those strings the entry shares them; the result is the same value
 * either way, and comparing it with the row is still the caller's check.
 */
export function decodeEntryForVerify(
  bytes: Uint8Array,
  expect?: { readonly id: string; readonly owner: string },
): SafeResult<EntryForVerify> {
  // `safely` without its closure: this runs once per entry of every first verification.
  try {
    const span: SigSpan = { start: -1, end: -1, id: -1 };
    if (bytes instanceof Uint8Array && isV2Record(bytes)) {
      const entry = decodeSignedEntryV2(bytes, span);
      if (span.start < 1 || span.end - span.start !== 70 || span.id < 1)
        codecFail('CODEC_MALFORMED', 'unexpected entry layout');
      return { ok: true, value: { entry, sigStart: span.start, sigEnd: span.end, idAt: span.id } };
    }
    const entry = decodeEntry(bytes, span, expect?.id, expect?.owner);
    const head = bytes[0] as number;
    // A map (major 5) of 2…23 pairs in a one-byte head; the decoder guarantees it, checked anyway.
    if (
      span.start < 1 ||
      span.end - span.start !== 70 ||
      span.id < 1 ||
      head <= 0xa1 ||
      head > 0xb7
    )
      codecFail('CODEC_MALFORMED', 'unexpected entry layout');
    return { ok: true, value: { entry, sigStart: span.start, sigEnd: span.end, idAt: span.id } };
  } catch (e) {
    return failed(e, 'CODEC_MALFORMED');
  }
}

/** Scratch for signing inputs and leaf data: JS is single-threaded and it never escapes `fn`. */
let scratch = new Uint8Array(1024);
let busy = false;

function scratchOf(n: number): Uint8Array {
  if (busy) return new Uint8Array(n); // a nested call gets its own
  if (scratch.length < n) scratch = new Uint8Array(Math.max(n, 2 * scratch.length));
  return scratch;
}

function withScratch<T>(buf: Uint8Array, n: number, fn: (view: Uint8Array) => T): T {
  const own = buf === scratch;
  if (own) busy = true;
  try {
    return fn(buf.subarray(0, n));
  } finally {
    if (own) busy = false;
  }
}

/**
 * Call `fn` with the bytes `d.entry.sig` must verify over — `ENTRY_SIGNING_DOMAIN ‖ body` —
 * cut out of the record `bytes` (as decoded into `d`): the record is the body map with one
 * more pair (`sig`), and strict decoding has proved the bytes are the one canonical encoding,
 * so removing that pair and decrementing the one-byte map head (at most 21 pairs, RFC 8949
 * §3.1) yields exactly `encodeEntryBody(entry)` (equality is tested). The view lives in a
 * reused buffer: valid only while `fn` runs; copy it to keep it.
 */
export function withEntrySigningInput<T>(
  bytes: Uint8Array,
  d: EntryForVerify,
  fn: (input: Uint8Array) => T,
): T {
  // Version 2 (ADR 0048): its own domain, and a map head that may shrink by a byte.
  if (d.entry.v === 2) return fn(v2SigningInput(bytes, { start: d.sigStart, end: d.sigEnd }));
  const pre = ENTRY_SIGNING_DOMAIN.length;
  const n = pre + bytes.length - (d.sigEnd - d.sigStart);
  const out = scratchOf(n);
  out.set(ENTRY_SIGNING_DOMAIN, 0);
  out[pre] = (bytes[0] as number) - 1;
  out.set(bytes.subarray(1, d.sigStart), pre + 1);
  out.set(bytes.subarray(d.sigEnd), pre + d.sigStart);
  return withScratch(out, n, fn);
}

/** Scratch for {@link withEntryLeafData}, the same rules as `scratch`. */
const leafScratch = new Uint8Array(80);
let leafBusy = false;

/**
 * Call `fn` with the entry's log leaf data, `entryLeafData(entry)` (16 id bytes ‖ 64-byte
 * sig), copied from the record; the same lifetime rule as {@link withEntrySigningInput}.
 */
export function withEntryLeafData<T>(
  bytes: Uint8Array,
  d: EntryForVerify,
  fn: (leafData: Uint8Array) => T,
): T {
  // A buffer of exactly the leaf data's size: no view to cut per call.
  const own = !leafBusy;
  const out = own ? leafScratch : new Uint8Array(80);
  for (let i = 0; i < 16; i++) out[i] = bytes[d.idAt + i] as number;
  const sigAt = d.sigEnd - 64;
  for (let i = 0; i < 64; i++) out[16 + i] = bytes[sigAt + i] as number;
  if (!own) return fn(out);
  leafBusy = true;
  try {
    return fn(out);
  } finally {
    leafBusy = false;
  }
}
