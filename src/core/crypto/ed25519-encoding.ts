/**
 * @module core/crypto/ed25519-encoding
 * Byte-level checks on Ed25519 encodings that OpenSSL does not make for us (RFC 8032 §5.1.2,
 * §5.1.3, §5.1.7). These are the "strict" half of memwarden's verifier; `ed25519.ts` combines
 * them with OpenSSL's (cofactorless) verification equation.
 *
 * Everything on the verify hot path here is plain byte comparison (no BigInt, no allocation).
 * The on-curve test is BigInt field arithmetic (~100 µs) and runs only when a public key is
 * admitted (`publicKeyFromRaw`), never per signature.
 */

/** p = 2^255 − 19, the field prime (RFC 8032 §5.1). */
const P = (1n << 255n) - 19n;
/** d = −121665 / 121666 mod p (RFC 8032 §5.1). */
const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;

/** L = 2^252 + 27742317777372353535851937790883648493, little-endian (RFC 8032 §5.1). */
const L_LE = new Uint8Array([
  0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
]);

/** Exactly 32 bytes, or (with `offset`) 32 bytes at `offset` within `b`. */
function spanOk(b: Uint8Array, offset: number | undefined): boolean {
  if (offset === undefined) return b.length === 32;
  return Number.isSafeInteger(offset) && offset >= 0 && b.length - offset >= 32;
}

/**
 * True when the 32-byte little-endian scalar `s` (or the 32 bytes at `offset` in it) is < L. RFC 8032 §5.1.7 step 1 ("the
 * signature is invalid if S is out of range"); Wycheproof's SignatureMalleability vectors.
 */
export function isScalarBelowOrder(s: Uint8Array, offset?: number): boolean {
  if (!spanOk(s, offset)) return false;
  const o = offset ?? 0;
  for (let i = 31; i >= 0; i--) {
    const a = s[o + i] as number;
    const b = L_LE[i] as number;
    if (a < b) return true;
    if (a > b) return false;
  }
  return false; // s == L
}

/**
 * True when `b` is a canonical point encoding in the sense of RFC 8032 §5.1.3: the 255-bit y
 * is < p (step 1) and the sign bit is not set on a point whose x is 0 (step 4: y = 1 or
 * y = p − 1). Whether y is actually on the curve is a separate question ({@link isOnCurve}).
 *
 * Constant-shape byte comparisons only; safe to call on every signature's R. `offset`: where
 * the 32 bytes start in `b` (then `b` may be longer), so a signature's R needs no view.
 */
export function isCanonicalPointEncoding(b: Uint8Array, offset?: number): boolean {
  if (!spanOk(b, offset)) return false;
  const o = offset ?? 0;
  const last = b[o + 31] as number;
  const top = last & 0x7f;
  const sign = last & 0x80;
  const first = b[o] as number;
  // y >= p ⇔ y ∈ [2^255 − 19, 2^255 − 1] ⇔ bytes 1..30 all 0xff, top 0x7f, b[0] ≥ 0xed.
  let allFF = top === 0x7f;
  for (let i = 1; i < 31 && allFF; i++) if (b[o + i] !== 0xff) allFF = false;
  if (allFF && first >= 0xed) return false;
  if (sign !== 0) {
    // x = 0 exactly when y = 1 or y = p − 1 (= 0x7fff…ffec); "−0" is not a canonical encoding.
    let mid0 = top === 0;
    for (let i = 1; i < 31 && mid0; i++) if (b[o + i] !== 0) mid0 = false;
    if (mid0 && first === 0x01) return false;
    if (allFF && first === 0xec) return false;
  }
  return true;
}

/**
 * The eight points of small order (the torsion subgroup) in canonical encoding, hex. A public
 * key among them lets its holder produce signatures that verify for many messages, so the
 * registry refuses them. Cross-checked against the `low_order_A` keys of the CCTV vectors.
 */
const SMALL_ORDER_HEX = [
  '0100000000000000000000000000000000000000000000000000000000000000', // identity (order 1)
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // (0, −1) (order 2)
  '0000000000000000000000000000000000000000000000000000000000000000', // order 4
  '0000000000000000000000000000000000000000000000000000000000000080', // order 4
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', // order 8
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85', // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa', // order 8
] as const;
const SMALL_ORDER = new Set<string>(SMALL_ORDER_HEX);

/** True when the canonical encoding `b` is one of the eight small-order points. */
export function isSmallOrderEncoding(b: Uint8Array): boolean {
  return (
    b.length === 32 && SMALL_ORDER.has(Buffer.from(b.buffer, b.byteOffset, 32).toString('hex'))
  );
}

function mod(a: bigint): bigint {
  const r = a % P;
  return r >= 0n ? r : r + P;
}

function powMod(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return result;
}

/**
 * True when the encoding `b` decodes to a point on edwards25519 (RFC 8032 §5.1.3 steps 2–3:
 * x² = (y² − 1)/(d·y² + 1) has a square root). Assumes nothing about canonicality; callers
 * check {@link isCanonicalPointEncoding} first.
 */
export function isOnCurve(b: Uint8Array): boolean {
  if (b.length !== 32) return false;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(b[i] as number);
  y &= (1n << 255n) - 1n;
  y = mod(y);
  const y2 = (y * y) % P;
  const u = mod(y2 - 1n);
  const v = mod(D * y2 + 1n);
  // Candidate root x = u·v³·(u·v⁷)^((p−5)/8) (RFC 8032 §5.1.3 step 2).
  const v3 = (v * v * v) % P;
  const v7 = (v3 * v3 * v) % P;
  const x = (((u * v3) % P) * powMod((u * v7) % P, (P - 5n) / 8n)) % P;
  const vx2 = (((v * x) % P) * x) % P;
  // Step 3: v·x² = u → x is a root; v·x² = −u → x·sqrt(−1) is a root; otherwise no root.
  return vx2 === u || vx2 === mod(-u);
}
