/**
 * @module core/entry/entry-v2
 * The memory entry record, version 2 (ADR 0048): every version 1 field with the same rules,
 * plus five optional fields, all covered by the signature —
 * - `evt` event time (uint64 ns): when what the memory is about happened, distinct from `ts`;
 * - `lid` logical memory id (UUIDv7): the id a caller keeps across updates; present only on a
 *   superseding version (`sup`), absent on a first version (whose `id` is the logical id);
 * - `meta` caller metadata, a canonical CBOR map of a JSON object (`./meta.ts`);
 * - `run` and `agent`: the run / session and agent scopes within the principal (`ns`).
 *
 * Same structure as version 1 (ADR 0002): one CBOR map with text keys in core deterministic
 * order, optional fields absent when unset, a strict decoder run before any signature check.
 * The signature covers `"memwarden/entry/v2\n" ‖ canonical(body)` — its own domain, so a
 * version 2 signature never verifies as version 1 or the reverse. Version 1 records are still
 * read and verified as they were (`./entry.ts`, `./entry-decode.ts` dispatch on `v`).
 *
 * This codec favours clarity over the version 1 codec's hand-tuned speed: it is used for writes
 * that carry one of the new fields (a write without them stays version 1).
 */
import { CborReader, CborWriter, MT, codecFail } from '../codec/wire.js';
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
  checkUint64,
  checkUtf8,
  checkUuid,
  checkWeight,
  readUuid,
} from './fields.js';
import { encodeMeta, readMeta } from './meta.js';
import { LIMITS, RECORD_VERSION_2, type EntryBody, type SignedEntry } from './types.js';

const enc = new TextEncoder();
/** Signing domain of version 2 entry bodies. */
export const ENTRY_V2_SIGNING_DOMAIN: Uint8Array = enc.encode('memwarden/entry/v2\n');

/** Version 2 map keys in core deterministic order (RFC 8949 §4.2.1). */
export const ENTRY_V2_KEYS = [
  't',
  'v',
  'id',
  'ns',
  'ts',
  'ctx',
  'evt',
  'exp',
  'kid',
  'lid',
  'rev',
  'run',
  'sig',
  'src',
  'sup',
  'uri',
  'kind',
  'meta',
  'tier',
  'agent',
  'label',
  'nonce',
  'writer',
  'content',
  'parents',
  'weights',
] as const;
type V2Key = (typeof ENTRY_V2_KEYS)[number];
const RANK: ReadonlyMap<string, number> = new Map(ENTRY_V2_KEYS.map((k, i) => [k, i]));
const OPTIONAL: ReadonlySet<string> = new Set([
  'evt',
  'exp',
  'lid',
  'rev',
  'run',
  'sup',
  'uri',
  'meta',
  'agent',
]);
const KEY_BYTES = new Map<string, Uint8Array>(
  ENTRY_V2_KEYS.map((k) => [k, Uint8Array.from([0x60 + k.length, ...enc.encode(k)])]),
);
/** The version 2 fields (never in a version 1 record). */
export const V2_FIELDS = ['evt', 'lid', 'meta', 'run', 'agent'] as const;

/** Scope text fields: 1..256 code points, like `ns`. */
const SCOPE_CHARS = 256;

/** Does this body ask for version 2? */
export function isV2Body(b: unknown): boolean {
  return typeof b === 'object' && b !== null && (b as { v?: unknown }).v === RECORD_VERSION_2;
}

/** A validated snapshot and the pre-encoded metadata. */
interface PreparedV2 {
  readonly body: SignedEntry;
  readonly meta: Uint8Array | undefined;
}

function prepare(input: EntryBody, withSig: boolean): PreparedV2 {
  if (typeof input !== 'object' || input === null)
    codecFail('CODEC_WRONG_TYPE', 'entry is not an object');
  const b: Record<string, unknown> = { ...input };
  if (Array.isArray(b.parents)) b.parents = [...(b.parents as unknown[])];
  if (Array.isArray(b.weights)) b.weights = [...(b.weights as unknown[])];
  for (const k of Object.keys(b)) {
    if (!RANK.has(k)) codecFail('CODEC_UNKNOWN_KEY', 'unknown entry field', k);
    if (b[k] === undefined)
      codecFail('CODEC_WRONG_TYPE', 'field is undefined (omit it instead)', k);
  }
  if (!withSig) delete b.sig;
  for (const k of ENTRY_V2_KEYS) {
    if (k === 'sig' ? withSig && !('sig' in b) : !OPTIONAL.has(k) && !(k in b))
      codecFail('CODEC_MISSING_KEY', 'missing entry field', k);
  }
  const body = b as unknown as SignedEntry;
  if (withSig) checkBytes(b.sig, 64, 'sig');
  checkRecordType(body.t, 'entry');
  if (typeof body.v !== 'number') codecFail('CODEC_WRONG_TYPE', 'version is not a number', 'v');
  if (body.v !== RECORD_VERSION_2)
    codecFail('CODEC_UNSUPPORTED_VERSION', `unsupported record version ${body.v}`, 'v');
  checkUuid(body.id, 'id');
  checkText(body.ns, 'ns', 1, LIMITS.nsChars);
  checkPrincipal(body.writer, 'writer');
  checkKid(body.kid);
  checkKind(body.kind, LIMITS.kindChars);
  checkUtf8(body.content, 'content', LIMITS.contentBytes);
  checkTier(body.tier);
  checkLabel(body.label);
  checkBytes(body.src, 32, 'src');
  checkBytes(body.ctx, 32, 'ctx');
  if (body.uri !== undefined) checkText(body.uri, 'uri', 1, LIMITS.uriChars);
  if (!Array.isArray(body.parents))
    codecFail('CODEC_WRONG_TYPE', 'parents is not an array', 'parents');
  if (body.parents.length > LIMITS.parents)
    codecFail('CODEC_OVERSIZE', 'too many parents', 'parents');
  for (const p of body.parents) checkUuid(p, 'parents');
  if (!Array.isArray(body.weights))
    codecFail('CODEC_WRONG_TYPE', 'weights is not an array', 'weights');
  if (body.weights.length > LIMITS.parents)
    codecFail('CODEC_OVERSIZE', 'too many weights', 'weights');
  for (const w of body.weights) checkWeight(w);
  checkUint64(body.ts, 'ts');
  if (body.exp !== undefined) checkUint64(body.exp, 'exp');
  if (body.rev !== undefined) checkPrincipal(body.rev, 'rev');
  if (body.sup !== undefined) checkUuid(body.sup, 'sup');
  checkBytes(body.nonce, 16, 'nonce');
  if (body.evt !== undefined) checkUint64(body.evt, 'evt');
  if (body.lid !== undefined) checkUuid(body.lid, 'lid');
  if (body.run !== undefined) checkText(body.run, 'run', 1, SCOPE_CHARS);
  if (body.agent !== undefined) checkText(body.agent, 'agent', 1, SCOPE_CHARS);
  const meta = body.meta === undefined ? undefined : encodeMeta(body.meta);
  checkEntryRelations(body);
  checkV2Relations(body);
  return { body, meta };
}

/** Relations of the version 2 fields (before signing and after decoding alike). */
function checkV2Relations(e: { id: string; sup?: string; lid?: string }): void {
  if (e.lid !== undefined && e.sup === undefined)
    codecFail('CODEC_INVALID_VALUE', 'a logical id only on a superseding version', 'lid');
  if (e.lid !== undefined && e.lid === e.id)
    codecFail('CODEC_INVALID_VALUE', 'logical id equals the version id', 'lid');
}

function write(p: PreparedV2, withSig: boolean, prefix?: Uint8Array): Uint8Array {
  const e = p.body;
  const present = ENTRY_V2_KEYS.filter((k) =>
    k === 'sig' ? withSig : e[k as keyof SignedEntry] !== undefined,
  );
  const w = new CborWriter(
    512 + (prefix?.length ?? 0) + e.content.length * 3 + (p.meta?.length ?? 0),
  );
  if (prefix !== undefined) w.raw(prefix);
  w.head(MT.MAP, present.length);
  for (const k of present) {
    w.raw(KEY_BYTES.get(k) as Uint8Array);
    writeField(w, p, k);
  }
  return w.finish();
}

function text(w: CborWriter, s: string): void {
  w.text(s, Buffer.byteLength(s, 'utf8'));
}

function writeField(w: CborWriter, p: PreparedV2, k: V2Key): void {
  const e = p.body;
  switch (k) {
    case 't':
      return text(w, 'entry');
    case 'v':
      return w.head(MT.UINT, RECORD_VERSION_2);
    case 'id':
      return w.bytes(checkUuid(e.id, 'id'));
    case 'lid':
      return w.bytes(checkUuid(e.lid, 'lid'));
    case 'sup':
      return w.bytes(checkUuid(e.sup, 'sup'));
    case 'ts':
      return w.uint(e.ts);
    case 'evt':
      return w.uint(e.evt as bigint);
    case 'exp':
      return w.uint(e.exp as bigint);
    case 'ctx':
      return w.bytes(e.ctx);
    case 'src':
      return w.bytes(e.src);
    case 'nonce':
      return w.bytes(e.nonce);
    case 'sig':
      return w.bytes(e.sig);
    case 'meta':
      return w.raw(p.meta as Uint8Array);
    case 'parents':
      w.head(MT.ARRAY, e.parents.length);
      for (const id of e.parents) w.bytes(checkUuid(id, 'parents'));
      return;
    case 'weights':
      w.head(MT.ARRAY, e.weights.length);
      for (const x of e.weights) w.number(x);
      return;
    default:
      return text(w, e[k] as string);
  }
}

/** Check a version 2 body against every rule the decoder applies (coded errors). */
export function validateEntryBodyV2(body: EntryBody): void {
  prepare(body, false);
}

/** Canonical bytes of a version 2 body (the map without `sig`). */
export function encodeEntryBodyV2(body: EntryBody): Uint8Array {
  return write(prepare(body, false), false);
}

/** Canonical bytes of a signed version 2 record. */
export function encodeSignedEntryV2(entry: SignedEntry): Uint8Array {
  return write(prepare(entry, true), true);
}

/** Validate, sign `"memwarden/entry/v2\n" ‖ body`, and encode the record. */
export function signEntryV2(
  body: EntryBody,
  signer: { sign(msg: Uint8Array): Uint8Array },
): { entry: SignedEntry; bodyBytes: Uint8Array; bytes: Uint8Array } {
  const p = prepare(body, false);
  const input = write(p, false, ENTRY_V2_SIGNING_DOMAIN);
  const bodyBytes = input.subarray(ENTRY_V2_SIGNING_DOMAIN.length);
  const sig = signer.sign(input);
  if (!(sig instanceof Uint8Array) || sig.length !== 64)
    codecFail('CODEC_INVALID_VALUE', 'signature must be 64 bytes');
  const entry = { ...p.body, sig } as SignedEntry;
  return { entry, bodyBytes, bytes: write({ body: entry, meta: p.meta }, true) };
}

/** Where the signed parts sit in a version 2 record (see `decodeEntryForVerify`). */
export interface V2Span {
  start: number;
  end: number;
  id: number;
}

/**
 * Strictly decode a signed version 2 record: canonical CBOR, known keys in order, no
 * duplicates, every field rule, the relations — before any signature check.
 */
export function decodeSignedEntryV2(bytes: Uint8Array, span?: V2Span): SignedEntry {
  if (!(bytes instanceof Uint8Array)) codecFail('CODEC_WRONG_TYPE', 'input is not a Uint8Array');
  if (bytes.length > LIMITS.entryBytes) codecFail('CODEC_OVERSIZE', 'entry too large');
  const r = new CborReader(bytes);
  const n = r.readMapLen();
  const e: Record<string, unknown> = {};
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const keyAt = r.pos;
    const key = r.readKey();
    const rank = RANK.get(key);
    if (rank === undefined) codecFail('CODEC_UNKNOWN_KEY', 'unknown entry key', key);
    if (rank === prev) codecFail('CODEC_DUPLICATE_KEY', 'duplicate entry key', key);
    if (rank < prev) codecFail('CODEC_NON_CANONICAL', 'entry keys out of order', key);
    prev = rank;
    e[key] = readField(r, key as V2Key, span, keyAt);
  }
  r.end();
  for (const k of ENTRY_V2_KEYS)
    if (!OPTIONAL.has(k) && e[k] === undefined)
      codecFail('CODEC_MISSING_KEY', 'missing entry key', k);
  const entry = e as unknown as SignedEntry;
  checkEntryRelations(entry);
  checkV2Relations(entry);
  return entry;
}

function readField(r: CborReader, k: V2Key, span: V2Span | undefined, keyAt: number): unknown {
  switch (k) {
    case 't': {
      const t = r.readText(16, 't');
      checkRecordType(t, 'entry');
      return t;
    }
    case 'v': {
      const v = r.readSmallUint('v');
      if (v !== RECORD_VERSION_2)
        codecFail('CODEC_UNSUPPORTED_VERSION', `unsupported record version ${v}`, 'v');
      return v;
    }
    case 'id': {
      const id = readUuid(r, 'id');
      if (span !== undefined) span.id = r.pos - 16;
      return id;
    }
    case 'lid':
    case 'sup':
      return readUuid(r, k);
    case 'ns': {
      const ns = r.readText(LIMITS.nsChars * 4, 'ns');
      checkText(ns, 'ns', 1, LIMITS.nsChars);
      return ns;
    }
    case 'run':
    case 'agent': {
      const s = r.readText(SCOPE_CHARS * 4, k);
      checkText(s, k, 1, SCOPE_CHARS);
      return s;
    }
    case 'ts':
    case 'evt':
    case 'exp':
      return r.readUint(k);
    case 'ctx':
    case 'src':
      return checkBytes(r.readBytes(k), 32, k);
    case 'nonce':
      return checkBytes(r.readBytes(k), 16, k);
    case 'sig': {
      const sig = checkBytes(r.readBytes('sig'), 64, 'sig');
      if (span !== undefined) {
        span.start = keyAt;
        span.end = r.pos;
      }
      return sig;
    }
    case 'kid': {
      const kid = r.readText(16, 'kid');
      checkKid(kid);
      return kid;
    }
    case 'rev':
    case 'writer': {
      const p = r.readText(64, k);
      checkPrincipal(p, k);
      return p;
    }
    case 'uri': {
      const uri = r.readText(LIMITS.uriChars * 4, 'uri');
      checkText(uri, 'uri', 1, LIMITS.uriChars);
      return uri;
    }
    case 'kind': {
      const kind = r.readText(LIMITS.kindChars, 'kind');
      checkKind(kind, LIMITS.kindChars);
      return kind;
    }
    case 'meta':
      return readMeta(r);
    case 'tier':
      return checkTier(r.readText(32, 'tier'));
    case 'label':
      return checkLabel(r.readText(32, 'label'));
    case 'content':
      return r.readText(LIMITS.contentBytes, 'content');
    case 'parents': {
      const m = r.readArrayLen(LIMITS.parents, 'parents');
      const out: string[] = [];
      for (let j = 0; j < m; j++) out.push(readUuid(r, 'parents'));
      return out;
    }
    case 'weights': {
      const m = r.readArrayLen(LIMITS.parents, 'weights');
      const out: number[] = [];
      for (let j = 0; j < m; j++) out.push(checkWeight(r.readNumber('weights')));
      return out;
    }
  }
}

/**
 * The signing input of a version 2 record decoded with a span, cut out of its bytes: the
 * domain, the map head for one pair fewer (its length may shrink from two bytes to one at
 * 24 pairs), then the record without the `sig` pair.
 */
export function v2SigningInput(
  bytes: Uint8Array,
  span: { start: number; end: number },
): Uint8Array {
  const headLen = bytes[0] === 0xb8 ? 2 : 1;
  const pairs = headLen === 1 ? (bytes[0] as number) - 0xa0 : (bytes[1] as number);
  const w = new CborWriter(ENTRY_V2_SIGNING_DOMAIN.length + bytes.length);
  w.raw(ENTRY_V2_SIGNING_DOMAIN);
  w.head(MT.MAP, pairs - 1);
  w.raw(bytes.subarray(headLen, span.start));
  w.raw(bytes.subarray(span.end));
  return w.finish();
}

/** Is this record (by its leading bytes) a version 2 entry? `t` then `v` lead every entry map. */
export function isV2Record(bytes: Uint8Array): boolean {
  const at = bytes[0] === 0xb8 ? 2 : 1;
  // "t" "entry" "v" 2: 61 74 65 65 6e 74 72 79 61 76 02
  const want = [0x61, 0x74, 0x65, 0x65, 0x6e, 0x74, 0x72, 0x79, 0x61, 0x76, 0x02];
  if (bytes.length < at + want.length) return false;
  for (let i = 0; i < want.length; i++) if (bytes[at + i] !== want[i]) return false;
  return true;
}
