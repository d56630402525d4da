/**
 * Fuzz targets for the parsers that read attacker-controlled bytes: the strict CBOR decoder,
 * the entry and tombstone decoders, C2SP signed notes, checkpoints and verifier keys, and the
 * RFC 9162 inclusion / consistency verifiers.
 *
 * Each target takes raw fuzz bytes and either returns an outcome label (for statistics) or
 * throws a `FuzzFinding` when a property fails. Properties:
 * - no crash: only a `MemwardenError` with a code of the target's own family escapes
 *   (never a raw TypeError / RangeError / SyntaxError);
 * - no hang: the fuzz drivers time every input (see ./engine.ts `MAX_MS_PER_INPUT`);
 * - canonical only: whatever a decoder accepts re-encodes to exactly the same bytes / text;
 * - differential: the generic decoder's acceptance is checked against cbor2's own strict
 *   decoder, the entry / tombstone wire codecs against the cbor2 path, the verifiers against
 *   a naive RFC 6962 reference written here;
 * - no forgery: a note / checkpoint verifies only if its text is one this file signed.
 *
 * The same targets run under fast-check (test/fuzz/*.test.ts, seconds, in `npm test`), under
 * the coverage-guided engine (`npm run fuzz`), and over the checked-in corpus (fuzz/corpus/).
 */
import { createHash, createPrivateKey, sign as nodeSign, verify as nodeVerify, createPublicKey } from 'node:crypto';
import { decode as cbor2Decode } from 'cbor2';
import { bytesEqual, toBase64 } from '../../src/core/bytes.js';
import { decodeStrict, encodeCanonical } from '../../src/core/codec/cbor.js';
import { MemwardenError } from '../../src/core/errors.js';
import {
  decodeSignedEntry,
  decodeSignedTombstone,
  encodeSignedEntry,
  encodeSignedTombstone,
} from '../../src/core/entry/index.js';
import { parseUuid } from '../../src/core/entry/uuidv7.js';
import {
  checkConsistency,
  checkInclusion,
  formatCheckpoint,
  formatVerifierKey,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  signCheckpoint,
  signNote,
  verifyCheckpoint,
  verifyConsistency,
  verifyInclusion,
  verifyNote,
} from '../../src/core/merkle/index.js';

/** A property violation (distinct from the coded errors a target expects). */
export class FuzzFinding extends Error {
  override readonly name = 'FuzzFinding';
}

export interface FuzzTarget {
  readonly name: string;
  /** Returns a short outcome label (`ok`, or the rejection code). */
  run(input: Uint8Array): string;
}

function finding(target: string, what: string, cause?: unknown): never {
  throw new FuzzFinding(`${target}: ${what}`, cause === undefined ? undefined : { cause });
}

/** Run `f`; a MemwardenError whose code starts with one of `prefixes` is the expected rejection. */
function coded<T>(target: string, prefixes: readonly string[], f: () => T): { ok: true; value: T } | { ok: false; code: string } {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    if (e instanceof FuzzFinding) throw e;
    if (e instanceof MemwardenError) {
      if (!prefixes.some((p) => e.code.startsWith(p))) finding(target, `unexpected code ${e.code}`, e);
      return { ok: false, code: e.code };
    }
    finding(target, `raw ${(e as Error)?.name ?? typeof e} escaped: ${(e as Error)?.message ?? String(e)}`, e);
  }
}

/** Lenient UTF-8 view of fuzz bytes for the text parsers (invalid sequences become U+FFFD). */
const lenient = new TextDecoder('utf-8', { fatal: false });
export const asText = (b: Uint8Array): string => lenient.decode(b);

// ---- CBOR ---------------------------------------------------------------------------------

/** cbor2's own strict mode (RFC 8949 §4.2.1 as cbor2 implements it), model-independent. */
function cbor2Accepts(b: Uint8Array): boolean {
  try {
    cbor2Decode(b, {
      cde: true,
      rejectDuplicateKeys: true,
      rejectLongFloats: true,
      rejectLongLoundNaN: true,
      ignoreGlobalTags: true,
      sortKeys: null,
      tags: new Map([
        [2, ({ contents }) => contents],
        [3, ({ contents }) => contents],
      ]),
    });
    return true;
  } catch {
    return false;
  }
}

const cbor: FuzzTarget = {
  name: 'cbor',
  run(b) {
    const r = coded('cbor', ['CODEC_'], () => decodeStrict(b, { maxBytes: 64 * 1024 }));
    if (!r.ok) return r.code;
    // Canonical only: the accepted bytes are exactly the canonical encoding of the value.
    const again = encodeCanonical(r.value);
    if (!bytesEqual(again, b)) finding('cbor', 'accepted bytes that do not round-trip');
    // Differential: never accept what cbor2's strict decoder rejects.
    if (!cbor2Accepts(b)) finding('cbor', 'accepted bytes cbor2 strict decoding rejects');
    return 'ok';
  },
};

/** The generic CBOR view of a record (ids as 16-byte byte strings), as in the entry oracle. */
function wireView(r: object): Record<string, unknown> {
  const o: Record<string, unknown> = { ...r };
  for (const k of ['id', 'sup', 'target']) if (typeof o[k] === 'string') o[k] = parseUuid(o[k] as string);
  if (Array.isArray(o.parents)) o.parents = (o.parents as string[]).map(parseUuid);
  return o;
}

const entry: FuzzTarget = {
  name: 'entry',
  run(b) {
    const r = coded('entry', ['CODEC_'], () => decodeSignedEntry(b));
    if (!r.ok) return r.code;
    if (!bytesEqual(encodeSignedEntry(r.value), b)) finding('entry', 'accepted entry does not round-trip');
    // Differential against the cbor2 path: the generic strict decoder must accept the same bytes
    // and agree on the value.
    const g = coded('entry', ['CODEC_'], () => decodeStrict(b));
    if (!g.ok) finding('entry', `wire codec accepted what the cbor2 path rejects (${g.code})`);
    if (!bytesEqual(encodeCanonical(wireView(r.value)), b)) finding('entry', 'wire value differs from cbor2 value');
    return 'ok';
  },
};

const tombstone: FuzzTarget = {
  name: 'tombstone',
  run(b) {
    const r = coded('tombstone', ['CODEC_'], () => decodeSignedTombstone(b));
    if (!r.ok) return r.code;
    if (!bytesEqual(encodeSignedTombstone(r.value), b)) finding('tombstone', 'accepted tombstone does not round-trip');
    const g = coded('tombstone', ['CODEC_'], () => decodeStrict(b));
    if (!g.ok) finding('tombstone', `wire codec accepted what the cbor2 path rejects (${g.code})`);
    if (!bytesEqual(encodeCanonical(wireView(r.value)), b)) finding('tombstone', 'wire value differs from cbor2 value');
    return 'ok';
  },
};

// ---- signed notes, checkpoints, verifier keys --------------------------------------------

/** The fixed fuzzing key (RFC 8032 §7.1 test 1 seed): deterministic signatures, stable corpus. */
const SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
const PRIV = createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), SEED]),
  format: 'der',
  type: 'pkcs8',
});
const PUB_RAW = new Uint8Array(createPublicKey(PRIV).export({ format: 'der', type: 'spki' }).subarray(12));
export const KEY_NAME = 'fuzz.example/log';
export const signFn = (m: Uint8Array): Uint8Array => new Uint8Array(nodeSign(null, m, PRIV));
const verifyFn = (m: Uint8Array, s: Uint8Array): boolean => nodeVerify(null, m, createPublicKey(PRIV), s);
/** Every text this module ever signs: a verified note must carry one of them. */
const signedTexts = new Set<string>();

/** A signed note over `text` with the fuzzing key (recorded as legitimately signed). */
export function fuzzSignNote(text: string): string {
  signedTexts.add(text);
  return signNote(text, KEY_NAME, signFn, PUB_RAW);
}

/** A signed checkpoint with the fuzzing key (recorded as legitimately signed). */
export function fuzzSignCheckpoint(origin: string, size: number, root: Uint8Array, extensions: string[] = []): string {
  const cp = { origin, size, root, extensions };
  signedTexts.add(formatCheckpoint(cp));
  return signCheckpoint(cp, KEY_NAME, signFn, PUB_RAW);
}
export const VKEY = formatVerifierKey(KEY_NAME, PUB_RAW);

const note: FuzzTarget = {
  name: 'note',
  run(b) {
    const s = asText(b);
    const r = coded('note', ['LOG_CHECKPOINT_MALFORMED'], () => parseNote(s));
    if (r.ok) {
      // Exact: the parse determines the note (text, then one canonical line per signature).
      const lines = r.value.signatures.map(
        (g) => `\u2014 ${g.keyName} ${toBase64(new Uint8Array([...g.keyId, ...g.signature]))}\n`,
      );
      if (`${r.value.text}\n${lines.join('')}` !== s) finding('note', 'parsed note does not re-serialize to its input');
    }
    const v = coded('note', ['LOG_CHECKPOINT_'], () => verifyNote(s, KEY_NAME, PUB_RAW, verifyFn));
    if (v.ok && !signedTexts.has(v.value)) finding('note', 'verified a text this key never signed');
    return v.ok ? 'verified' : r.ok ? `parsed/${v.code}` : r.code;
  },
};

const checkpoint: FuzzTarget = {
  name: 'checkpoint',
  run(b) {
    const s = asText(b);
    // The body parser alone, over the whole input as if it were note text.
    const p = coded('checkpoint', ['LOG_CHECKPOINT_MALFORMED'], () => parseCheckpoint(s));
    if (p.ok && formatCheckpoint(p.value) !== s) finding('checkpoint', 'parsed checkpoint does not re-format to its input');
    const v = coded('checkpoint', ['LOG_CHECKPOINT_'], () => verifyCheckpoint(s, KEY_NAME, PUB_RAW, verifyFn, 'fuzz.example/log'));
    if (v.ok && !signedTexts.has(formatCheckpoint(v.value))) finding('checkpoint', 'verified a checkpoint this key never signed');
    return v.ok ? 'verified' : p.ok ? `parsed/${v.code}` : v.code;
  },
};

const vkey: FuzzTarget = {
  name: 'vkey',
  run(b) {
    const s = asText(b);
    const r = coded('vkey', ['KEY_INVALID'], () => parseVerifierKey(s));
    if (!r.ok) return r.code;
    if (formatVerifierKey(r.value.keyName, r.value.publicKey) !== s) finding('vkey', 'parsed verifier key does not re-format to its input');
    return 'ok';
  },
};

// ---- Merkle proofs against a naive RFC 6962 reference -------------------------------------

const sha = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const nLeaf = (d: Uint8Array): Uint8Array => sha(Uint8Array.of(0), d);
const nNode = (l: Uint8Array, r: Uint8Array): Uint8Array => sha(Uint8Array.of(1), l, r);
const split = (n: number): number => {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
};
/** MTH over leaf hashes (RFC 6962 §2.1). */
function mth(h: readonly Uint8Array[]): Uint8Array {
  if (h.length === 1) return h[0] as Uint8Array;
  const k = split(h.length);
  return nNode(mth(h.slice(0, k)), mth(h.slice(k)));
}
/** PATH(m, D[n]) (§2.1.1). */
function path(m: number, h: readonly Uint8Array[]): Uint8Array[] {
  if (h.length <= 1) return [];
  const k = split(h.length);
  return m < k ? [...path(m, h.slice(0, k)), mth(h.slice(k))] : [...path(m - k, h.slice(k)), mth(h.slice(0, k))];
}
/** PROOF(m, D[n]) (§2.1.2). */
function subproof(m: number, h: readonly Uint8Array[], b: boolean): Uint8Array[] {
  if (m === h.length) return b ? [] : [mth(h)];
  const k = split(h.length);
  return m <= k
    ? [...subproof(m, h.slice(0, k), b), mth(h.slice(k))]
    : [...subproof(m - k, h.slice(k), false), mth(h.slice(0, k))];
}

/** Reads structured values out of the fuzz bytes (zero once exhausted). */
class Cursor {
  private i = 0;
  constructor(private readonly b: Uint8Array) {}
  get left(): number {
    return this.b.length - this.i;
  }
  u8(): number {
    return this.i < this.b.length ? (this.b[this.i++] as number) : 0;
  }
  u16(): number {
    return (this.u8() << 8) | this.u8();
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let j = 0; j < n; j++) out[j] = this.u8();
    return out;
  }
  /** An index-like number: mostly small, sometimes hostile (huge, negative, fractional, NaN). */
  num(): number {
    const t = this.u8();
    switch (t % 16) {
      case 0:
        return [Number.MAX_SAFE_INTEGER, 2 ** 53, 2 ** 32, 2 ** 31, -1, 0.5, NaN, Infinity, -0, 2 ** 63][this.u8() % 10] as number;
      case 1:
        return this.u16() * 65536 + this.u16();
      default:
        return this.u16() % 300;
    }
  }
}

const mutate = (hashes: Uint8Array[], c: Cursor): { list: Uint8Array[]; changed: boolean } => {
  // XOR masks / truncation / insertion, each driven by the input; report whether anything changed.
  const list: Uint8Array[] = hashes.map((h) => h.slice());
  let changed = false;
  const ops = c.u8() % 4;
  for (let k = 0; k < ops && c.left > 0; k++) {
    const op = c.u8() % 4;
    const at = list.length === 0 ? 0 : c.u8() % list.length;
    const el = list[at];
    if (op === 0 && el !== undefined && el.length > 0) {
      const i = c.u8() % el.length;
      el[i] = (el[i] as number) ^ (c.u8() | 1);
      changed = true;
    } else if (op === 1 && list.length > 0) {
      list.splice(at, 1);
      changed = true;
    } else if (op === 2) {
      list.splice(at, 0, c.bytes(32));
      changed = true;
    } else if (op === 3 && list.length > 0) {
      list[at] = (list[at] as Uint8Array).slice(0, c.u8() % 40);
      changed = (list[at] as Uint8Array).length !== 32 || changed;
    }
  }
  return { list, changed };
};

const leavesFor = (n: number, salt: number): Uint8Array[] =>
  Array.from({ length: n }, (_, i) => nLeaf(Uint8Array.of(salt, i & 0xff, i >> 8)));

/**
 * Structure-aware: a real tree of 1–300 leaves, a real proof from the naive reference, then
 * hostile edits (indices, sizes, masks, truncations). `verifyInclusion` must never throw and must
 * return true exactly when nothing relevant was changed; `checkInclusion` throws only LOG_ codes.
 */
const inclusion: FuzzTarget = {
  name: 'inclusion',
  run(b) {
    const c = new Cursor(b);
    const n = 1 + (c.u16() % 300);
    const leaves = leavesFor(n, c.u8());
    const m = c.u16() % n;
    const root = mth(leaves);
    const honest = path(m, leaves);
    const mode = c.u8() % 4;
    let idx = m;
    let size = n;
    let leaf = leaves[m] as Uint8Array;
    let rt = root;
    let proof = honest;
    let changed = false;
    if (mode === 1) {
      idx = c.num();
      size = c.num();
      changed = idx !== m || size !== n;
    } else if (mode === 2) {
      const e = mutate(honest, c);
      proof = e.list;
      changed = e.changed;
    } else if (mode === 3) {
      leaf = c.bytes(c.u8() % 2 === 0 ? 32 : c.u8() % 64);
      rt = c.u8() % 2 === 0 ? root : c.bytes(32);
      changed = !bytesEqual(leaf, leaves[m] as Uint8Array) || !bytesEqual(rt, root);
    }
    let got: boolean;
    try {
      got = verifyInclusion(idx, size, leaf, proof, rt);
    } catch (e) {
      finding('inclusion', 'verifyInclusion threw', e);
    }
    coded('inclusion', ['LOG_'], () => checkInclusion(idx, size, leaf, proof, rt));
    // With the true position, the proof verifies exactly when leaf, root and proof are the true
    // ones. (Another (index, size) may legitimately verify: the verifier cannot know the tree
    // that size would have, so mode 1 is checked for "no crash" only.)
    if (mode !== 1) {
      const expected = !changed || sameInclusion(leaf, proof, rt, leaves[m] as Uint8Array, honest, root);
      if (got !== expected) finding('inclusion', `verifyInclusion returned ${got}, reference says ${expected}`);
    }
    return got ? 'verified' : 'rejected';
  },
};

function sameInclusion(leaf: Uint8Array, proof: Uint8Array[], rt: Uint8Array, trueLeaf: Uint8Array, truePath: Uint8Array[], root: Uint8Array): boolean {
  return bytesEqual(leaf, trueLeaf) && bytesEqual(rt, root) && truePath.length === proof.length && truePath.every((h, i) => bytesEqual(h, proof[i] as Uint8Array));
}

const consistency: FuzzTarget = {
  name: 'consistency',
  run(b) {
    const c = new Cursor(b);
    const n = 1 + (c.u16() % 300);
    const leaves = leavesFor(n, c.u8());
    const m = 1 + (c.u16() % n);
    const r1 = mth(leaves.slice(0, m));
    const r2 = mth(leaves);
    const honest = m === n ? [] : subproof(m, leaves, true);
    const mode = c.u8() % 4;
    let s1 = m;
    let s2 = n;
    let a = r1;
    let z = r2;
    let proof = honest;
    if (mode === 1) {
      s1 = c.num();
      s2 = c.num();
    } else if (mode === 2) {
      proof = mutate(honest, c).list;
    } else if (mode === 3) {
      a = c.u8() % 2 === 0 ? r1 : c.bytes(c.u8() % 2 === 0 ? 32 : c.u8() % 64);
      z = c.u8() % 2 === 0 ? r2 : c.bytes(32);
    }
    let got: boolean;
    try {
      got = verifyConsistency(s1, s2, proof, a, z);
    } catch (e) {
      finding('consistency', 'verifyConsistency threw', e);
    }
    coded('consistency', ['LOG_'], () => checkConsistency(s1, s2, proof, a, z));
    // Reference, with the true sizes (mode 1 alters them and is checked for "no crash" only:
    // the verifier cannot know what other sizes' trees would be): for m < n the claim holds iff
    // both roots are the true ones and the proof is exactly PROOF(m, D[n]) (RFC 6962 §2.1.2);
    // for m = n iff the proof is empty and the two roots are equal bytes (module policy).
    if (mode !== 1) {
      const same = (x: Uint8Array[], y: Uint8Array[]): boolean => x.length === y.length && x.every((h, i) => bytesEqual(h, y[i] as Uint8Array));
      const expected = m === n ? proof.length === 0 && bytesEqual(a, z) : bytesEqual(a, r1) && bytesEqual(z, r2) && same(proof, honest);
      if (got !== expected) finding('consistency', `verifyConsistency returned ${got}, reference says ${expected}`);
    }
    return got ? 'verified' : 'rejected';
  },
};

export const TARGETS: Readonly<Record<string, FuzzTarget>> = {
  cbor,
  entry,
  tombstone,
  note,
  checkpoint,
  vkey,
  inclusion,
  consistency,
};
