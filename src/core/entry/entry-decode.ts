/**
 * @module core/entry/entry-decode
 * Strict decoding of the signed entry record, version 1. Every structural rule (one canonical
 * CBOR encoding, RFC 8949 §4.2.1; known keys only; no trailing bytes) and every field rule of
 * `./fields.ts` is checked here, before any caller verifies a signature — so a signature
 * check never runs on bytes that have a second spelling.
 */
import { safely, type SafeResult } from '../errors.js';
import { CborReader, codecFail, keyCode } from '../codec/wire.js';
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
import { ENTRY_RANK, ENTRY_REQUIRED_SIGNED, ENTRY_TEXT, type EntryKey } from './entry.js';
import { LIMITS, type SignedEntry } from './types.js';
import { ENTRY_SIGNING_DOMAIN } from './signing.js';

type Mutable<T> = { -readonly [P in keyof T]: T[P] };

/** Key code → key, for the schema's keys (all ASCII, ≤ 7 characters). */
const KEY_BY_CODE: ReadonlyMap<number, string> = new Map(
  [...ENTRY_RANK.keys()].map((k) => [keyCode(k), k]),
);

/**
 * Decode a signed entry, enforcing canonical encoding, the schema and every field rule before
 * any signature check. Throws `MemwardenError` with a `CODEC_*` code only: `CODEC_OVERSIZE`,
 * `CODEC_MALFORMED`, `CODEC_NON_CANONICAL` (incl. keys out of order), `CODEC_DUPLICATE_KEY`,
 * `CODEC_TRAILING_BYTES`, `CODEC_UNKNOWN_KEY`, `CODEC_MISSING_KEY`, `CODEC_WRONG_TYPE`,
 * `CODEC_INVALID_VALUE`, `CODEC_UNSUPPORTED_VERSION`.
 */
export function decodeSignedEntry(bytes: Uint8Array): SignedEntry {
  return decodeEntry(bytes, undefined);
}

/** Where the `sig` pair sits in the record bytes (filled in by {@link decodeEntry}). */
interface SigSpan {
  start: number;
  end: number;
  /** Offset of the 16 id bytes. */
  id: number;
}

function decodeEntry(bytes: Uint8Array, span: SigSpan | undefined): SignedEntry {
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
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const keyAt = r.pos;
    // The fast path reads a schema key without building a string; anything else takes the
    // general path, which reports the precise error.
    const code = r.readKeyCode();
    let key = code < 0 ? undefined : KEY_BY_CODE.get(code);
    if (key === undefined) {
      r.pos = keyAt;
      key = r.readKey();
    }
    const rank = ENTRY_RANK.get(key);
    if (rank === undefined) codecFail('CODEC_UNKNOWN_KEY', 'unknown entry key', key);
    // Sorted keys make any duplicate adjacent (RFC 8949 §4.2.1, §5.6).
    if (rank === prev) codecFail('CODEC_DUPLICATE_KEY', 'duplicate entry key', key);
    if (rank < prev) codecFail('CODEC_NON_CANONICAL', 'entry keys out of order', key);
    prev = rank;
    switch (key as EntryKey) {
      case 't':
        t = r.readText(16, 't');
        checkRecordType(t, ENTRY_TEXT);
        break;
      case 'v':
        v = r.readSmallUint('v');
        checkVersion(v);
        break;
      case 'id':
        id = readUuid(r, 'id');
        if (span !== undefined) span.id = r.pos - 16;
        break;
      case 'ns':
        ns = r.readText(LIMITS.nsChars * 4, 'ns');
        checkText(ns, 'ns', 1, LIMITS.nsChars);
        break;
      case 'ts':
        ts = r.readUint('ts');
        break;
      case 'ctx':
        ctx = checkBytes(r.readBytes('ctx'), 32, 'ctx');
        break;
      case 'exp':
        exp = r.readUint('exp');
        break;
      case 'kid':
        kid = r.readText(16, 'kid');
        checkKid(kid);
        break;
      case 'rev':
        rev = r.readText(64, 'rev');
        checkPrincipal(rev, 'rev');
        break;
      case 'sig':
        sig = checkBytes(r.readBytes('sig'), 64, 'sig');
        if (span !== undefined) {
          span.start = keyAt;
          span.end = r.pos;
        }
        break;
      case 'src':
        src = checkBytes(r.readBytes('src'), 32, 'src');
        break;
      case 'sup':
        sup = readUuid(r, 'sup');
        break;
      case 'uri':
        uri = r.readText(LIMITS.uriChars * 4, 'uri');
        checkText(uri, 'uri', 1, LIMITS.uriChars);
        break;
      case 'kind':
        kind = r.readText(LIMITS.kindChars, 'kind');
        checkKind(kind, LIMITS.kindChars);
        break;
      case 'tier':
        tier = checkTier(r.readText(32, 'tier'));
        break;
      case 'label':
        label = checkLabel(r.readText(32, 'label'));
        break;
      case 'nonce':
        nonce = checkBytes(r.readBytes('nonce'), 16, 'nonce');
        break;
      case 'writer':
        writer = r.readText(64, 'writer');
        checkPrincipal(writer, 'writer');
        break;
      case 'content':
        content = r.readText(LIMITS.contentBytes, 'content');
        break;
      case 'parents': {
        const m = r.readArrayLen(LIMITS.parents, 'parents');
        const out: string[] = [];
        for (let j = 0; j < m; j++) out.push(readUuid(r, 'parents'));
        parents = out;
        break;
      }
      case 'weights': {
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
 */
export function decodeEntryForVerify(bytes: Uint8Array): SafeResult<EntryForVerify> {
  return safely(() => {
    const span: SigSpan = { start: -1, end: -1, id: -1 };
    const entry = decodeEntry(bytes, span);
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
    return { entry, sigStart: span.start, sigEnd: span.end, idAt: span.id };
  }, 'CODEC_MALFORMED');
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
  const pre = ENTRY_SIGNING_DOMAIN.length;
  const n = pre + bytes.length - (d.sigEnd - d.sigStart);
  const out = scratchOf(n);
  out.set(ENTRY_SIGNING_DOMAIN, 0);
  out[pre] = (bytes[0] as number) - 1;
  out.set(bytes.subarray(1, d.sigStart), pre + 1);
  out.set(bytes.subarray(d.sigEnd), pre + d.sigStart);
  return withScratch(out, n, fn);
}

/**
 * Call `fn` with the entry's log leaf data, `entryLeafData(entry)` (16 id bytes ‖ 64-byte
 * sig), copied from the record; the same lifetime rule as {@link withEntrySigningInput}.
 */
export function withEntryLeafData<T>(
  bytes: Uint8Array,
  d: EntryForVerify,
  fn: (leafData: Uint8Array) => T,
): T {
  const out = scratchOf(80);
  for (let i = 0; i < 16; i++) out[i] = bytes[d.idAt + i] as number;
  const sigAt = d.sigEnd - 64;
  for (let i = 0; i < 64; i++) out[16 + i] = bytes[sigAt + i] as number;
  return withScratch(out, 80, fn);
}
