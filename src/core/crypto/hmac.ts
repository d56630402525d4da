/**
 * @module core/crypto/hmac
 * HMAC-SHA-256 (RFC 2104, FIPS 198-1) and a keyring of identified MAC keys: SMSR component 1,
 * the cheap per-entry authenticator stored next to every entry (`StoredEntry.macKid/mac`).
 *
 * ## Why the keyring does not use `createHmac`
 * `createHmac(key).update(m).digest()` costs ~3.4 µs per call in Node 20 (500-byte message),
 * mostly fixed per-object overhead. The keyring instead precomputes the RFC 2104 §2 padded keys
 * (K ⊕ ipad, K ⊕ opad) once per key and evaluates H((K⊕opad) ‖ H((K⊕ipad) ‖ m)) with two
 * one-shot `crypto.hash` calls (OpenSSL SHA-256) over per-key reused blocks — the message is
 * copied behind K ⊕ ipad, the inner digest behind K ⊕ opad — so a check allocates no buffer:
 * ~1 µs for a 450-byte entry (it was ~1.9 µs with a `Buffer.concat` per call). The one-shot functions ({@link hmacSha256},
 * {@link verifyHmacSha256}) use `createHmac`, so the two implementations check each other:
 * both run RFC 4231 / Wycheproof, plus a randomized differential test.
 *
 * ## Tag truncation
 * Tags are 32 bytes. Truncated verification (RFC 2104 §5, Wycheproof tagSize 128) is only
 * available through an explicit `tagBytes` option with a floor of 16 bytes; a verifier never
 * infers the length from the tag it was given (that would let an attacker send a 1-byte tag).
 */
import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import { MemwardenError } from '../errors.js';

/** HMAC-SHA-256 output length (bytes). */
export const HMAC_SHA256_BYTES = 32;
/** Shortest truncated tag a verifier accepts (RFC 2104 §5: not less than half the output). */
export const HMAC_MIN_TRUNCATED_BYTES = 16;
/** Shortest key the keyring accepts (RFC 2104 §3: keys shorter than L are discouraged). */
export const MAC_MIN_KEY_BYTES = 32;

const BLOCK = 64; // SHA-256 block size (RFC 2104 §2, B = 64)

/** Largest message the keyring copies into its reused inner block (bigger ones get their own). */
const MAX_SCRATCH = 16 * 1024;

/** Precomputed RFC 2104 state for one key. Not exported: holds key-derived secrets. */
class HmacKey {
  /**
   * (K ⊕ ipad) ‖ [the message, copied in per call]: the inner hash input, reused so a MAC
   * allocates no buffer (`Buffer.concat` per call cost more than the two hashes of an entry).
   */
  private inner: Uint8Array;
  /** (K ⊕ opad) ‖ [32 bytes scratch for the inner digest]. */
  private readonly outer: Uint8Array;

  constructor(key: Uint8Array) {
    // RFC 2104 §2: keys longer than B are first hashed; shorter ones are zero-padded.
    const k = key.length > BLOCK ? (hash('sha256', key, 'buffer') as Buffer) : Buffer.from(key);
    this.inner = new Uint8Array(BLOCK + 1024).fill(0x36, 0, BLOCK);
    this.outer = new Uint8Array(BLOCK + HMAC_SHA256_BYTES).fill(0x5c, 0, BLOCK);
    for (let i = 0; i < k.length; i++) {
      (this.inner as Uint8Array)[i] = 0x36 ^ (k[i] as number);
      (this.outer as Uint8Array)[i] = 0x5c ^ (k[i] as number);
    }
    k.fill(0);
  }

  /**
   * H((K⊕opad) ‖ H((K⊕ipad) ‖ data)) as a 'latin1' string, one char per byte: Node 20's
   * string output of `crypto.hash` is cheaper than allocating a Buffer per digest.
   */
  private digestLatin1(data: Uint8Array): string {
    const n = BLOCK + data.length;
    let buf = this.inner;
    if (n > buf.length) {
      buf = new Uint8Array(Math.max(n, 2 * buf.length));
      buf.set(this.inner.subarray(0, BLOCK));
      if (n <= BLOCK + MAX_SCRATCH) this.inner = buf;
    }
    buf.set(data, BLOCK);
    const inner = hash('sha256', buf.subarray(0, n), 'binary');
    const o = this.outer;
    for (let i = 0; i < HMAC_SHA256_BYTES; i++) o[BLOCK + i] = inner.charCodeAt(i);
    return hash('sha256', o, 'binary');
  }

  tag(data: Uint8Array): Uint8Array {
    const d = this.digestLatin1(data);
    const out = new Uint8Array(HMAC_SHA256_BYTES);
    for (let i = 0; i < HMAC_SHA256_BYTES; i++) out[i] = d.charCodeAt(i);
    return out;
  }

  /**
   * Compare the leftmost `tagBytes` bytes in constant time: every byte is XOR-accumulated, no
   * branch or early exit depends on the tag's contents (the same construction as
   * `crypto.timingSafeEqual`, without a Buffer to fill and a native call per tag).
   */
  verify(data: Uint8Array, tag: Uint8Array, tagBytes: number): boolean {
    if (tag.length !== tagBytes) return false;
    const d = this.digestLatin1(data);
    let diff = 0;
    for (let i = 0; i < tagBytes; i++) diff |= d.charCodeAt(i) ^ (tag[i] as number);
    return diff === 0;
  }
}

function assertBytes(x: unknown, what: string): asserts x is Uint8Array {
  if (!(x instanceof Uint8Array))
    throw new MemwardenError('INPUT_INVALID', `${what} must be bytes`);
}

function checkTagBytes(tagBytes: number): void {
  if (
    !Number.isInteger(tagBytes) ||
    tagBytes < HMAC_MIN_TRUNCATED_BYTES ||
    tagBytes > HMAC_SHA256_BYTES
  ) {
    throw new MemwardenError('INPUT_INVALID', `tagBytes must be an integer in [16, 32]`);
  }
}

/**
 * HMAC-SHA-256(key, data), 32 bytes (RFC 2104 with H = SHA-256, RFC 4231). Any key length.
 * One-shot: uses `createHmac` (cheaper than precomputing pads for a single use). Repeated use
 * of one key belongs in a {@link MacKeyring}.
 */
export function hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array {
  assertBytes(key, 'key');
  assertBytes(data, 'data');
  const d = createHmac('sha256', key).update(data).digest();
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

/**
 * Constant-time check of `tag` against HMAC-SHA-256(key, data). Full 32-byte tags by default;
 * `opts.tagBytes` (16..32) explicitly opts into a truncated tag (its leftmost bytes, RFC 2104
 * §5). A tag of any other length is false; a bad `tagBytes` is `INPUT_INVALID` (caller bug).
 */
export function verifyHmacSha256(
  key: Uint8Array,
  data: Uint8Array,
  tag: Uint8Array,
  opts?: { tagBytes?: number },
): boolean {
  const tagBytes = opts?.tagBytes ?? HMAC_SHA256_BYTES;
  checkTagBytes(tagBytes);
  if (
    !(key instanceof Uint8Array) ||
    !(data instanceof Uint8Array) ||
    !(tag instanceof Uint8Array)
  ) {
    return false;
  }
  if (tag.length !== tagBytes) return false;
  const d = createHmac('sha256', key).update(data).digest();
  return timingSafeEqual(d.subarray(0, tagBytes), tag);
}

/** A tag and the id of the key that made it (`StoredEntry.macKid` / `mac`). */
export interface MacTag {
  readonly kid: string;
  readonly tag: Uint8Array;
}

/** Outcome of {@link MacKeyring.check}: a value, never an exception, for attacker input. */
export type MacCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: 'MAC_KEY_UNKNOWN' | 'MAC_KEY_RETIRED' | 'MAC_INVALID' };

/** The verdicts, shared (frozen): `check` runs per stored entry read and allocates none. */
const MAC_OK: MacCheck = Object.freeze({ ok: true });
const MAC_UNKNOWN: MacCheck = Object.freeze({ ok: false, code: 'MAC_KEY_UNKNOWN' });
const MAC_RETIRED: MacCheck = Object.freeze({ ok: false, code: 'MAC_KEY_RETIRED' });
const MAC_BAD: MacCheck = Object.freeze({ ok: false, code: 'MAC_INVALID' });

const KID_RE = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * Identified HMAC keys. `tag` uses the newest active key; `verify`/`check` accept tags under any
 * active key, so old entries stay valid until their key is retired. A retired key verifies
 * nothing (its tags must be re-made under a current key before retirement). Keys are copied in
 * and never exposed.
 */
export class MacKeyring {
  private readonly keys = new Map<string, HmacKey>();
  private readonly retired = new Set<string>();
  /** Active kids in insertion order; the last is current. */
  private active: string[] = [];

  /**
   * Add a key. `kid` is 1–64 chars of `[A-Za-z0-9_.:-]`; the key at least 32 bytes
   * (`KEY_INVALID`). Reusing a kid — even a retired one — is `MAC_KEY_CONFLICT`.
   */
  add(kid: string, key: Uint8Array): void {
    if (typeof kid !== 'string' || !KID_RE.test(kid)) {
      throw new MemwardenError('INPUT_INVALID', 'MAC key id must match [A-Za-z0-9_.:-]{1,64}');
    }
    if (!(key instanceof Uint8Array) || key.length < MAC_MIN_KEY_BYTES) {
      throw new MemwardenError(
        'KEY_INVALID',
        `MAC key must be at least ${MAC_MIN_KEY_BYTES} bytes`,
      );
    }
    if (this.keys.has(kid)) {
      throw new MemwardenError('MAC_KEY_CONFLICT', 'MAC key id already used', { details: { kid } });
    }
    this.keys.set(kid, new HmacKey(key));
    this.active.push(kid);
  }

  /** Retire `kid`: it tags and verifies nothing from now on. `MAC_KEY_UNKNOWN` if never added. */
  retire(kid: string): void {
    if (!this.keys.has(kid))
      throw new MemwardenError('MAC_KEY_UNKNOWN', 'unknown MAC key id', { details: { kid } });
    this.retired.add(kid);
    this.active = this.active.filter((k) => k !== kid);
  }

  /** The kid `tag` would use now, or undefined when no key is active. */
  currentKid(): string | undefined {
    return this.active[this.active.length - 1];
  }

  /** Active kids, oldest first. */
  activeKids(): string[] {
    return [...this.active];
  }

  /** Tag `data` with the current key. `MAC_KEY_UNKNOWN` when no key is active. */
  tag(data: Uint8Array): MacTag {
    assertBytes(data, 'data');
    const kid = this.currentKid();
    const key = kid === undefined ? undefined : this.keys.get(kid);
    if (kid === undefined || key === undefined) {
      throw new MemwardenError('MAC_KEY_UNKNOWN', 'no active MAC key');
    }
    return { kid, tag: key.tag(data) };
  }

  /** Why a tag does or does not verify. Full 32-byte tags only. Never throws. */
  check(kid: string, data: Uint8Array, tag: Uint8Array): MacCheck {
    const key = this.keys.get(kid);
    if (key === undefined) return MAC_UNKNOWN;
    if (this.retired.has(kid)) return MAC_RETIRED;
    if (!(data instanceof Uint8Array) || !(tag instanceof Uint8Array)) return MAC_BAD;
    return key.verify(data, tag, HMAC_SHA256_BYTES) ? MAC_OK : MAC_BAD;
  }

  /** True when `tag` is a valid 32-byte tag of `data` under the active key `kid`. */
  verify(kid: string, data: Uint8Array, tag: Uint8Array): boolean {
    return this.check(kid, data, tag).ok;
  }
}
