/**
 * @module core/crypto/ed25519
 * Ed25519 (RFC 8032, pure variant) over node:crypto / OpenSSL, with memwarden's strict
 * verification policy made explicit (MemLineage §3.3: every entry carries an Ed25519
 * signature; failure drops the entry before its trust label is consulted).
 *
 * ## Verification policy (pinned by test/core/crypto/ed25519-cctv.test.ts)
 *
 * OpenSSL 3.0's `ossl_ed25519_verify` (what `crypto.verify(null, …)` runs) already:
 * - rejects S ≥ L (RFC 8032 §5.1.7; Wycheproof SignatureMalleability);
 * - rejects a non-canonical R, because it re-encodes [S]B − [k]A and compares bytes;
 * - uses the cofactorless equation [S]B = R + [k]A, so signatures that only hold with the
 *   cofactor (CCTV `low_order_residue`) are rejected;
 * - does NOT reject a non-canonical public key A (it reduces y mod p): 36 CCTV vectors.
 *
 * memwarden adds, in JS, before calling OpenSSL: exact lengths (32-byte A, 64-byte signature),
 * canonical A and canonical R (RFC 8032 §5.1.3 decoding rules, required by §5.1.7) and S < L.
 * Result on the CCTV edge-case corpus: a signature is accepted iff it carries none of the flags
 * `non_canonical_A`, `non_canonical_R`, `low_order_residue`. Low-order A or R by themselves are
 * accepted by {@link verifyEd25519} (RFC 8032 permits them), but {@link publicKeyFromRaw} — the
 * only way a key enters the registry — refuses small-order and off-curve keys, so a registered
 * key is never low-order. Wycheproof: 151/151 as expected (there are no "acceptable" vectors).
 *
 * KeyObjects are cached inside {@link Ed25519PublicKey} and {@link Ed25519Signer}: importing raw
 * bytes costs ~12 µs (JWK path) and admitting a key (on-curve check) ~0.2 ms, against ~100 µs
 * for a verification on the reference machine.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as nodeSign,
  verify as nodeVerify,
  type KeyObject,
} from 'node:crypto';
import { MemwardenError } from '../errors.js';
import {
  isCanonicalPointEncoding,
  isOnCurve,
  isScalarBelowOrder,
  isSmallOrderEncoding,
} from './ed25519-encoding.js';

/** Byte lengths fixed by RFC 8032 §5.1.5–5.1.6. */
export const ED25519_SEED_BYTES = 32;
export const ED25519_PUBLIC_KEY_BYTES = 32;
export const ED25519_SIGNATURE_BYTES = 64;

/** PKCS#8 OneAsymmetricKey DER prefix for a raw 32-byte seed (RFC 8410 §7). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * Structural twin of `ports/clock` RandomSource (core may not import ports; the
 * dependency-cruiser rule `core-is-pure`). Any RandomSource satisfies it.
 */
export interface SeedSource {
  randomBytes(n: number): Uint8Array;
}

/** A freshly generated key pair. Keep `seed` secret; it is the private key. */
export interface Ed25519KeyPair {
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
}

function view(b: Uint8Array): Buffer {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function copy(b: Uint8Array): Uint8Array {
  return new Uint8Array(b);
}

/**
 * KeyObject for 32 raw public-key bytes. JWK (RFC 8037 §2, OKP/Ed25519) rather than SPKI DER:
 * in Node 20 / OpenSSL 3.0 the DER decoder path costs ~115 µs per import, JWK ~12 µs, for the
 * same key. Neither validates the point; {@link publicKeyFromRaw} does that itself.
 */
function rawPublicKeyObject(raw: Uint8Array): KeyObject {
  const x = view(raw).toString('base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
}

function rawFromPublicKeyObject(k: KeyObject): Uint8Array {
  // SPKI DER for Ed25519 is a fixed 12-byte prefix (RFC 8410 §4) followed by the 32 raw bytes.
  const der = k.export({ format: 'der', type: 'spki' });
  return new Uint8Array(der.subarray(der.length - ED25519_PUBLIC_KEY_BYTES));
}

/**
 * A validated Ed25519 public key with its cached OpenSSL KeyObject. Create with
 * {@link publicKeyFromRaw}; instances are immutable and safe to share and cache.
 */
export class Ed25519PublicKey {
  /** @internal use {@link publicKeyFromRaw}. */
  constructor(
    private readonly rawBytes: Uint8Array,
    /** @internal */ readonly keyObject: KeyObject,
  ) {}

  /** A copy of the 32 raw key bytes (RFC 8032 §5.1.5 encoding). */
  get raw(): Uint8Array {
    return copy(this.rawBytes);
  }

  /** Compare against raw bytes without copying (public data: plain comparison). */
  equalsRaw(other: Uint8Array): boolean {
    if (other.length !== ED25519_PUBLIC_KEY_BYTES) return false;
    for (let i = 0; i < ED25519_PUBLIC_KEY_BYTES; i++)
      if (other[i] !== this.rawBytes[i]) return false;
    return true;
  }
}

/**
 * Admit a raw public key. Throws `KEY_INVALID` unless it is exactly 32 bytes, a canonical
 * encoding (RFC 8032 §5.1.3), a point on the curve, and not one of the 8 small-order points.
 * (A mixed-order key — torsion component on a large-order point — is not detected; with the
 * cofactorless equation it cannot forge anything for its non-holder.) Costs ~0.1 ms: do it once
 * per key, then cache.
 */
export function publicKeyFromRaw(raw: Uint8Array): Ed25519PublicKey {
  if (!(raw instanceof Uint8Array) || raw.length !== ED25519_PUBLIC_KEY_BYTES) {
    throw new MemwardenError('KEY_INVALID', 'Ed25519 public key must be 32 bytes');
  }
  if (!isCanonicalPointEncoding(raw)) {
    throw new MemwardenError('KEY_INVALID', 'non-canonical Ed25519 public key encoding');
  }
  if (isSmallOrderEncoding(raw)) {
    throw new MemwardenError('KEY_INVALID', 'small-order Ed25519 public key');
  }
  if (!isOnCurve(raw)) {
    throw new MemwardenError('KEY_INVALID', 'Ed25519 public key is not a curve point');
  }
  let ko: KeyObject;
  try {
    ko = rawPublicKeyObject(raw);
  } catch (e) {
    throw new MemwardenError('KEY_INVALID', 'OpenSSL refused the Ed25519 public key', { cause: e });
  }
  return new Ed25519PublicKey(copy(raw), ko);
}

/**
 * Holds a private key as a cached KeyObject and signs with it. The seed is not retained as
 * bytes and is never exposed again.
 */
export class Ed25519Signer {
  /** @internal use {@link signerFromSeed}. */
  constructor(
    private readonly privateKey: KeyObject,
    /** The matching public key (validated, cached). */
    readonly publicKey: Ed25519PublicKey,
  ) {}

  /** RFC 8032 §5.1.6 signature R ‖ S (64 bytes) over `msg`. Deterministic. */
  sign(msg: Uint8Array): Uint8Array {
    const sig = nodeSign(null, view(msg), this.privateKey);
    return new Uint8Array(sig.buffer, sig.byteOffset, sig.byteLength);
  }
}

/** Build a signer from a 32-byte seed (RFC 8032 §5.1.5 private key). `KEY_INVALID` otherwise. */
export function signerFromSeed(seed: Uint8Array): Ed25519Signer {
  if (!(seed instanceof Uint8Array) || seed.length !== ED25519_SEED_BYTES) {
    throw new MemwardenError('KEY_INVALID', 'Ed25519 seed must be 32 bytes');
  }
  const der = Buffer.concat([PKCS8_PREFIX, view(seed)]);
  let priv: KeyObject;
  try {
    priv = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } finally {
    der.fill(0); // the DER copy holds the seed; do not leave it for the GC
  }
  const pubObj = createPublicKey(priv);
  // A public key derived by OpenSSL from a seed is always valid; skip the ~0.1 ms admission.
  return new Ed25519Signer(priv, new Ed25519PublicKey(rawFromPublicKeyObject(pubObj), pubObj));
}

/** The public key for `seed` (RFC 8032 §5.1.5). */
export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  return signerFromSeed(seed).publicKey.raw;
}

/**
 * Generate a key pair. With `random`, the seed is `random.randomBytes(32)` (deterministic under
 * test); otherwise OpenSSL's CSPRNG via `generateKeyPairSync('ed25519')`.
 */
export function generateKeyPair(random?: SeedSource): Ed25519KeyPair {
  if (random !== undefined) {
    const seed = random.randomBytes(ED25519_SEED_BYTES);
    if (seed.length !== ED25519_SEED_BYTES) {
      throw new MemwardenError('KEY_INVALID', 'random source returned the wrong length');
    }
    return { seed: copy(seed), publicKey: publicKeyFromSeed(seed) };
  }
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pk8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  const seed = new Uint8Array(pk8.subarray(pk8.length - ED25519_SEED_BYTES));
  pk8.fill(0);
  return { seed, publicKey: rawFromPublicKeyObject(publicKey) };
}

/**
 * Strict RFC 8032 §5.1.7 verification (policy in the module header). Returns false — never
 * throws — for any malformed input: wrong lengths, non-canonical A or R, S ≥ L, off-curve
 * key, or a signature that does not verify.
 *
 * Pass an {@link Ed25519PublicKey} on hot paths; a raw key is parsed (and its KeyObject built)
 * on every call.
 */
export function verifyEd25519(
  publicKey: Ed25519PublicKey | Uint8Array,
  msg: Uint8Array,
  sig: Uint8Array,
): boolean {
  try {
    if (!(msg instanceof Uint8Array) || !(sig instanceof Uint8Array)) return false;
    if (sig.length !== ED25519_SIGNATURE_BYTES) return false;
    // RFC 8032 §5.1.7 step 1: R must decode (canonically), S must be < L.
    // (Checked in place: no views allocated on the read path's hottest call.)
    if (!isCanonicalPointEncoding(sig, 0)) return false;
    if (!isScalarBelowOrder(sig, 32)) return false;
    let ko: KeyObject;
    if (publicKey instanceof Ed25519PublicKey) {
      ko = publicKey.keyObject;
    } else {
      if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_BYTES)
        return false;
      // OpenSSL would accept a non-canonical A (y ≥ p, reduced); RFC 8032 §5.1.3 does not.
      if (!isCanonicalPointEncoding(publicKey)) return false;
      ko = rawPublicKeyObject(publicKey);
    }
    // node:crypto takes any ArrayBufferView: no Buffer wrapper per call.
    return nodeVerify(null, msg, ko, sig);
  } catch {
    // Attacker input never escapes as an exception: an unparsable key is simply "not valid".
    return false;
  }
}
