/**
 * The entry decoder as it was before the first-verification work of issue 3 (rank lookup per
 * key through two maps, every text field read as a fresh string): kept verbatim as the
 * reference of a differential test. The production decoder (src/core/entry/entry-decode.ts)
 * must accept exactly the same bytes, with the same value, and reject the rest with the same
 * error code.
 */
import { CborReader, codecFail, keyCode } from '../../../src/core/codec/wire.js';
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
} from '../../../src/core/entry/fields.js';
import {
  ENTRY_RANK,
  ENTRY_REQUIRED_SIGNED,
  ENTRY_TEXT,
  type EntryKey,
} from '../../../src/core/entry/entry.js';
import { LIMITS, type SignedEntry } from '../../../src/core/entry/types.js';

type Mutable<T> = { -readonly [P in keyof T]: T[P] };

const KEY_BY_CODE: ReadonlyMap<number, string> = new Map(
  [...ENTRY_RANK.keys()].map((k) => [keyCode(k), k]),
);

/** Where the `sig` pair and the id bytes sit (filled in when given). */
export interface ReferenceSpan {
  start: number;
  end: number;
  id: number;
}

export function referenceDecodeEntry(bytes: Uint8Array, span?: ReferenceSpan): SignedEntry {
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
