/**
 * @module core/entry/entry
 * Validation and canonical encoding of the memory entry record, version 1 (decoding is in
 * `./entry-decode.ts`).
 *
 * Wire form: one CBOR map with text keys in core deterministic order (RFC 8949 §4.2.1; see
 * `ENTRY_KEYS`). Ids are 16-byte bstr, hashes 32-byte bstr, timestamps uint64, weights numbers
 * in memwarden's CBOR model (0 and 1 as integers, others as the shortest exact float). The
 * signed body is that map without `sig`; the signed record is the same map with `sig`.
 *
 * Encoding and decoding use the hand-rolled strict primitives of `core/codec/wire` for speed
 * (see that module for the measurement); the generic cbor2 path is their test oracle.
 */
import { CborWriter, MT, codecFail, headSize, uintSize } from '../codec/wire.js';
import { isCborInt, toHalfExact } from '../codec/float.js';
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
  checkVersion,
  checkWeight,
} from './fields.js';
import { ENTRY_KEYS, LIMITS, type EntryBody, type SignedEntry } from './types.js';
import { ENTRY_SIGNING_DOMAIN } from './signing.js';
import {
  ENTRY_V2_SIGNING_DOMAIN,
  encodeEntryBodyV2,
  encodeSignedEntryV2,
  isV2Body,
  signEntryV2,
  validateEntryBodyV2,
} from './entry-v2.js';

/** An entry map key. */
export type EntryKey = (typeof ENTRY_KEYS)[number];
/** Rank of each key in canonical order (RFC 8949 §4.2.1). */
export const ENTRY_RANK: ReadonlyMap<string, number> = new Map(ENTRY_KEYS.map((k, i) => [k, i]));
const OPTIONAL = new Set<string>(['uri', 'exp', 'rev', 'sup', 'sig']);
/** Keys a signed entry must carry. */
export const ENTRY_REQUIRED_SIGNED: readonly EntryKey[] = ENTRY_KEYS.filter(
  (k) => k === 'sig' || !OPTIONAL.has(k),
);
const K = Object.fromEntries(
  ENTRY_KEYS.map((k) => [
    k,
    Uint8Array.from([0x60 + k.length, ...Array.from(k, (c) => c.charCodeAt(0))]),
  ]),
) as Record<EntryKey, Uint8Array>;
/** The `t` discriminator of entries. */
export const ENTRY_TEXT = 'entry';
/** Map header (≤ 23 pairs) + keys of every required body field + fixed-size values. */
const FIXED_SIZE =
  1 +
  ENTRY_REQUIRED_SIGNED.filter((k) => k !== 'sig').reduce((n, k) => n + K[k].length, 0) +
  (1 + ENTRY_TEXT.length) + // t
  1 + // v
  17 + // id
  2 * 34 + // src, ctx
  17 + // nonce
  17; // kid

function numberSize(x: number): number {
  if (isCborInt(x)) return headSize(x >= 0 ? x : -x - 1);
  return toHalfExact(x) >= 0 ? 3 : Math.fround(x) === x ? 5 : 9;
}

/** A validated body with the wire forms the encoder needs. */
interface Prepared {
  /** A validated snapshot of the caller's object. */
  readonly body: EntryBody;
  /** The validated signature, when encoding the signed record. */
  readonly sig: Uint8Array | undefined;
  readonly id: Uint8Array;
  readonly parents: readonly Uint8Array[];
  readonly sup: Uint8Array | undefined;
  readonly len: {
    ns: number;
    writer: number;
    kind: number;
    content: number;
    uri: number;
    rev: number;
  };
}

function prepare(input: EntryBody, withSig: boolean): Prepared {
  if (typeof input !== 'object' || input === null)
    codecFail('CODEC_WRONG_TYPE', 'entry is not an object');
  // Snapshot once (getters/proxies run a single time), so the bytes written are exactly the
  // values validated: no check-then-use gap between validation and encoding.
  const b: Record<string, unknown> = { ...input };
  if (Array.isArray(b.parents)) b.parents = [...(b.parents as unknown[])];
  if (Array.isArray(b.weights)) b.weights = [...(b.weights as unknown[])];
  const body = b as unknown as SignedEntry;
  for (const k of Object.keys(b)) {
    if (!ENTRY_RANK.has(k)) codecFail('CODEC_UNKNOWN_KEY', 'unknown entry field', k);
    // exactOptionalPropertyTypes: an unset optional field is absent, never undefined.
    if (b[k] === undefined)
      codecFail('CODEC_WRONG_TYPE', 'field is undefined (omit it instead)', k);
  }
  for (const k of ENTRY_REQUIRED_SIGNED)
    if (k !== 'sig' && !(k in b)) codecFail('CODEC_MISSING_KEY', 'missing entry field', k);
  if (withSig && !('sig' in b)) codecFail('CODEC_MISSING_KEY', 'missing entry field', 'sig');
  const sig = withSig ? checkBytes(b.sig, 64, 'sig') : undefined;
  checkRecordType(body.t, ENTRY_TEXT);
  checkVersion(body.v);
  const id = checkUuid(body.id, 'id');
  const ns = checkText(body.ns, 'ns', 1, LIMITS.nsChars);
  checkPrincipal(body.writer, 'writer');
  checkKid(body.kid);
  checkKind(body.kind, LIMITS.kindChars);
  const content = checkUtf8(body.content, 'content', LIMITS.contentBytes);
  checkTier(body.tier);
  checkLabel(body.label);
  checkBytes(body.src, 32, 'src');
  checkBytes(body.ctx, 32, 'ctx');
  const uri = body.uri === undefined ? 0 : checkText(body.uri, 'uri', 1, LIMITS.uriChars);
  if (!Array.isArray(body.parents))
    codecFail('CODEC_WRONG_TYPE', 'parents is not an array', 'parents');
  if (body.parents.length > LIMITS.parents)
    codecFail('CODEC_OVERSIZE', 'too many parents', 'parents');
  const parents = body.parents.map((p) => checkUuid(p, 'parents'));
  if (!Array.isArray(body.weights))
    codecFail('CODEC_WRONG_TYPE', 'weights is not an array', 'weights');
  if (body.weights.length > LIMITS.parents)
    codecFail('CODEC_OVERSIZE', 'too many weights', 'weights');
  for (const w of body.weights) checkWeight(w);
  checkUint64(body.ts, 'ts');
  if (body.exp !== undefined) checkUint64(body.exp, 'exp');
  let rev = 0;
  if (body.rev !== undefined) {
    checkPrincipal(body.rev, 'rev');
    rev = body.rev.length;
  }
  const sup = body.sup === undefined ? undefined : checkUuid(body.sup, 'sup');
  checkBytes(body.nonce, 16, 'nonce');
  checkEntryRelations(body);
  const writer = body.writer.length;
  return {
    body,
    sig,
    id,
    parents,
    sup,
    len: { ns, writer, kind: body.kind.length, content, uri, rev },
  };
}

/** Exact encoded size, so the writer allocates the output once (see CborWriter). */
function size(p: Prepared, sig: Uint8Array | undefined): number {
  const e = p.body;
  const l = p.len;
  const text = (n: number): number => headSize(n) + n;
  let n =
    FIXED_SIZE + text(l.ns) + uintSize(e.ts) + text(l.writer) + text(l.kind) + text(l.content);
  n += text(e.tier.length) + text(e.label.length);
  n += headSize(p.parents.length) + 17 * p.parents.length + headSize(e.weights.length);
  for (const x of e.weights) n += numberSize(x);
  if (e.exp !== undefined) n += K.exp.length + uintSize(e.exp);
  if (e.rev !== undefined) n += K.rev.length + text(l.rev);
  if (e.sup !== undefined) n += K.sup.length + 17;
  if (e.uri !== undefined) n += K.uri.length + text(l.uri);
  if (sig !== undefined) n += K.sig.length + 2 + 64;
  return n;
}

function write(
  p: Prepared,
  sig: Uint8Array | undefined,
  prefix?: Uint8Array,
  at?: { sig: number },
): Uint8Array {
  const e = p.body;
  const optional =
    (e.exp !== undefined ? 1 : 0) +
    (e.rev !== undefined ? 1 : 0) +
    (e.sup !== undefined ? 1 : 0) +
    (e.uri !== undefined ? 1 : 0);
  const w = new CborWriter(size(p, sig) + (prefix?.length ?? 0));
  if (prefix !== undefined) w.raw(prefix);
  w.head(MT.MAP, 16 + optional + (sig === undefined ? 0 : 1));
  // Keys in ENTRY_KEYS order (RFC 8949 §4.2.1).
  w.raw(K.t);
  w.text(ENTRY_TEXT, 5);
  w.raw(K.v);
  w.head(MT.UINT, 1);
  w.raw(K.id);
  w.bytes(p.id);
  w.raw(K.ns);
  w.text(e.ns, p.len.ns);
  w.raw(K.ts);
  w.uint(e.ts);
  w.raw(K.ctx);
  w.bytes(e.ctx);
  if (e.exp !== undefined) {
    w.raw(K.exp);
    w.uint(e.exp);
  }
  w.raw(K.kid);
  w.text(e.kid, 16);
  if (e.rev !== undefined) {
    w.raw(K.rev);
    w.text(e.rev, p.len.rev);
  }
  if (sig !== undefined) {
    w.raw(K.sig);
    w.bytes(sig);
  } else if (at !== undefined) {
    at.sig = w.offset; // where `sig` belongs in canonical key order
  }
  w.raw(K.src);
  w.bytes(e.src);
  if (p.sup !== undefined) {
    w.raw(K.sup);
    w.bytes(p.sup);
  }
  if (e.uri !== undefined) {
    w.raw(K.uri);
    w.text(e.uri, p.len.uri);
  }
  w.raw(K.kind);
  w.text(e.kind, p.len.kind);
  w.raw(K.tier);
  w.text(e.tier, e.tier.length);
  w.raw(K.label);
  w.text(e.label, e.label.length);
  w.raw(K.nonce);
  w.bytes(e.nonce);
  w.raw(K.writer);
  w.text(e.writer, p.len.writer);
  w.raw(K.content);
  w.text(e.content, p.len.content);
  w.raw(K.parents);
  w.head(MT.ARRAY, p.parents.length);
  for (const id of p.parents) w.bytes(id);
  w.raw(K.weights);
  w.head(MT.ARRAY, e.weights.length);
  for (const x of e.weights) w.number(x);
  return w.finish();
}

/** Check a body against every rule the decoder applies; throws coded errors. Use before signing. */
export function validateEntryBody(body: EntryBody): void {
  if (isV2Body(body)) return validateEntryBodyV2(body);
  prepare(body, false);
}

/**
 * Canonical bytes of the entry body — the map without `sig` — i.e. what is signed (through
 * `signingInput`). A `sig` property on the argument is ignored, so a decoded `SignedEntry` can
 * be passed directly to recompute its signed bytes.
 */
export function encodeEntryBody(body: EntryBody): Uint8Array {
  if (isV2Body(body)) return encodeEntryBodyV2(body);
  return write(prepare(body, false), undefined);
}

/** Canonical bytes of the signed entry record (body fields plus `sig`). */
export function encodeSignedEntry(entry: SignedEntry): Uint8Array {
  if (isV2Body(entry)) return encodeSignedEntryV2(entry);
  const p = prepare(entry, true);
  return write(p, p.sig);
}

/** The result of {@link signEntry}: the record, the signed body bytes and the record bytes. */
export interface SignedEncoding {
  readonly entry: SignedEntry;
  readonly bodyBytes: Uint8Array;
  readonly bytes: Uint8Array;
}

/**
 * The write path's single pass: validate once, encode the body directly behind the signing
 * domain (`signingInput` without a copy), sign that with `signer`, and encode the signed
 * record.
 */
export function signEntry(
  body: EntryBody,
  signer: { sign(msg: Uint8Array): Uint8Array },
): SignedEncoding {
  if (isV2Body(body)) return signEntryV2(body, signer);
  const p = prepare(body, false);
  const at = { sig: -1 };
  const input = write(p, undefined, ENTRY_SIGNING_DOMAIN, at); // "memwarden/entry/v1\n" ‖ body
  const pre = ENTRY_SIGNING_DOMAIN.length;
  const bodyBytes = input.subarray(pre);
  const sig = signer.sign(input);
  if (!(sig instanceof Uint8Array) || sig.length !== 64) {
    throw codecFail('CODEC_INVALID_VALUE', 'signature must be 64 bytes');
  }
  // The record is the body with one more map pair: splice `sig` in at its canonical position
  // instead of encoding everything again. The map has at most 21 pairs, so its head is one
  // byte both before and after (RFC 8949 §3.1). Equality with encodeSignedEntry is tested.
  const cut = at.sig - pre;
  const sigPair = K.sig.length + 2 + 64;
  const bytes = new Uint8Array(bodyBytes.length + sigPair);
  bytes[0] = (bodyBytes[0] as number) + 1;
  bytes.set(bodyBytes.subarray(1, cut), 1);
  bytes.set(K.sig, cut);
  bytes[cut + K.sig.length] = 0x58;
  bytes[cut + K.sig.length + 1] = 64;
  bytes.set(sig, cut + K.sig.length + 2);
  bytes.set(bodyBytes.subarray(cut), cut + sigPair);
  return { entry: { ...p.body, sig }, bodyBytes, bytes };
}

/**
 * What an entry's signature covers, by its version: `"memwarden/entry/v1\n" ‖ body` or, for a
 * version 2 record, `"memwarden/entry/v2\n" ‖ body` (ADR 0048).
 */
export function entrySigningInput(body: EntryBody): Uint8Array {
  const bodyBytes = encodeEntryBody(body);
  const domain = isV2Body(body) ? ENTRY_V2_SIGNING_DOMAIN : ENTRY_SIGNING_DOMAIN;
  const out = new Uint8Array(domain.length + bodyBytes.length);
  out.set(domain);
  out.set(bodyBytes, domain.length);
  return out;
}
