/**
 * @module core/entry/entry-decode
 * Strict decoding of the signed entry record, version 1. Every structural rule (one canonical
 * CBOR encoding, RFC 8949 §4.2.1; known keys only; no trailing bytes) and every field rule of
 * `./fields.ts` is checked here, before any caller verifies a signature — so a signature
 * check never runs on bytes that have a second spelling.
 */
import { safely, type SafeResult } from '../errors.js';
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
import { ENTRY_RANK, ENTRY_REQUIRED_SIGNED, ENTRY_TEXT, type EntryKey } from './entry.js';
import { LIMITS, type SignedEntry } from './types.js';
import { ENTRY_SIGNING_DOMAIN } from './signing.js';

type Mutable<T> = { -readonly [P in keyof T]: T[P] };

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
    const key = r.readKey();
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
  for (const k of ENTRY_REQUIRED_SIGNED)
    if (entry[k] === undefined) codecFail('CODEC_MISSING_KEY', 'missing entry key', k);
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

/** A strictly decoded entry and the exact bytes its signature covers. */
export interface EntryForVerify {
  readonly entry: SignedEntry;
  /** `ENTRY_SIGNING_DOMAIN ‖ body bytes`: what `entry.sig` must verify over. */
  readonly signedInput: Uint8Array;
}

/**
 * {@link decodeSignedEntry}, plus the signing input cut out of the record bytes instead of
 * re-encoding the body: the record is the body map with one more pair (`sig`), and strict
 * decoding has just proved the bytes are the one canonical encoding, so removing that pair
 * (and decrementing the one-byte map head: at most 21 pairs, RFC 8949 §3.1) yields exactly
 * `encodeEntryBody(entry)` (equality is tested). The read path's first verification uses it.
 */
export function decodeEntryForVerify(bytes: Uint8Array): SafeResult<EntryForVerify> {
  return safely(() => {
    const span: SigSpan = { start: -1, end: -1 };
    const entry = decodeEntry(bytes, span);
    const head = bytes[0] as number;
    // A map (major 5) of 2…23 pairs in a one-byte head; the decoder guarantees it, checked anyway.
    if (span.start < 1 || head <= 0xa1 || head > 0xb7)
      codecFail('CODEC_MALFORMED', 'unexpected entry map head');
    const pre = ENTRY_SIGNING_DOMAIN.length;
    const cut = span.end - span.start;
    const out = new Uint8Array(pre + bytes.length - cut);
    out.set(ENTRY_SIGNING_DOMAIN, 0);
    out[pre] = head - 1;
    out.set(bytes.subarray(1, span.start), pre + 1);
    out.set(bytes.subarray(span.end), pre + span.start);
    return { entry, signedInput: out };
  }, 'CODEC_MALFORMED');
}
