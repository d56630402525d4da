import { describe, expect, it } from 'vitest';
import { isMemwardenError } from '../../../src/core/errors.js';
import {
  generateKeyPair,
  publicKeyFromRaw,
  publicKeyFromSeed,
  signerFromSeed,
  verifyEd25519,
} from '../../../src/core/crypto/ed25519.js';
import {
  isCanonicalPointEncoding,
  isOnCurve,
  isScalarBelowOrder,
  isSmallOrderEncoding,
} from '../../../src/core/crypto/ed25519-encoding.js';
import { hex, loadVectors } from './vectors.js';

interface Rfc8032 {
  vectors: {
    name: string;
    secretKey: string;
    publicKey: string;
    message: string;
    signature: string;
  }[];
}
interface Wycheproof {
  numberOfTests: number;
  testGroups: {
    publicKey: { pk: string };
    tests: {
      tcId: number;
      msg: string;
      sig: string;
      result: 'valid' | 'invalid' | 'acceptable';
      flags: string[];
    }[];
  }[];
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isMemwardenError(e) ? e.code : 'NOT_CODED';
  }
  return undefined;
}

const P = (1n << 255n) - 19n;
const L = (1n << 252n) + 27742317777372353535851937790883648493n;
function le32(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}

describe('RFC 8032 §7.1 test vectors', () => {
  const { vectors } = loadVectors<Rfc8032>('ed25519/rfc8032_7_1.json');
  it('has the 5 vectors', () => expect(vectors).toHaveLength(5));
  for (const v of vectors) {
    it(`${v.name}: pk from seed, byte-equal signature, verifies`, () => {
      const seed = hex(v.secretKey);
      expect(publicKeyFromSeed(seed)).toEqual(hex(v.publicKey));
      const signer = signerFromSeed(seed);
      const sig = signer.sign(hex(v.message));
      expect(Buffer.from(sig).toString('hex')).toBe(v.signature);
      expect(verifyEd25519(signer.publicKey, hex(v.message), sig)).toBe(true);
      expect(verifyEd25519(hex(v.publicKey), hex(v.message), sig)).toBe(true);
      expect(verifyEd25519(publicKeyFromRaw(hex(v.publicKey)), hex(v.message), sig)).toBe(true);
    });
  }
});

describe('Wycheproof ed25519_test.json (all vectors)', () => {
  const w = loadVectors<Wycheproof>('ed25519/wycheproof_ed25519_test.json');
  const all = w.testGroups.flatMap((g) => g.tests.map((t) => ({ pk: g.publicKey.pk, t })));

  it('covers every vector, with no "acceptable" results to decide', () => {
    expect(all).toHaveLength(w.numberOfTests);
    expect(all).toHaveLength(151);
    // If a future revision adds "acceptable" vectors, memwarden's policy is to reject them
    // (strict verifier); this assertion forces that decision to be revisited explicitly.
    expect(all.filter(({ t }) => t.result === 'acceptable')).toHaveLength(0);
  });

  it('valid → true, invalid → false, via raw keys and cached keys', () => {
    const mismatches: number[] = [];
    for (const { pk, t } of all) {
      const want = t.result === 'valid';
      const raw = verifyEd25519(hex(pk), hex(t.msg), hex(t.sig));
      const cached = verifyEd25519(publicKeyFromRaw(hex(pk)), hex(t.msg), hex(t.sig));
      if (raw !== want || cached !== want) mismatches.push(t.tcId);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('verifyEd25519 never throws on attacker input', () => {
  const signer = signerFromSeed(new Uint8Array(32).fill(7));
  const msg = new Uint8Array([1, 2, 3]);
  const sig = signer.sign(msg);

  it('wrong lengths and types are false', () => {
    expect(verifyEd25519(signer.publicKey, msg, sig.subarray(0, 63))).toBe(false);
    expect(verifyEd25519(signer.publicKey, msg, new Uint8Array([...sig, 0]))).toBe(false);
    expect(verifyEd25519(signer.publicKey.raw.subarray(0, 31), msg, sig)).toBe(false);
    expect(verifyEd25519(new Uint8Array(33), msg, sig)).toBe(false);
    expect(verifyEd25519(signer.publicKey, 'abc' as unknown as Uint8Array, sig)).toBe(false);
    expect(verifyEd25519('pk' as unknown as Uint8Array, msg, sig)).toBe(false);
    expect(verifyEd25519(signer.publicKey, msg, null as unknown as Uint8Array)).toBe(false);
  });

  it('every single-bit flip of message, signature or key fails', () => {
    for (let i = 0; i < 64 * 8; i++) {
      const s = new Uint8Array(sig);
      s[i >> 3]! ^= 1 << (i & 7);
      expect(verifyEd25519(signer.publicKey, msg, s)).toBe(false);
    }
    for (let i = 0; i < 32 * 8; i++) {
      const k = signer.publicKey.raw;
      k[i >> 3]! ^= 1 << (i & 7);
      expect(verifyEd25519(k, msg, sig)).toBe(false);
    }
    expect(verifyEd25519(signer.publicKey, new Uint8Array([1, 2, 2]), sig)).toBe(false);
  });

  it('S + L (malleated signature) is rejected', () => {
    let s = 0n;
    for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(sig[32 + i]!);
    const mal = new Uint8Array(sig);
    mal.set(le32(s + L), 32);
    expect(verifyEd25519(signer.publicKey, msg, mal)).toBe(false);
  });
});

describe('keys', () => {
  it('generateKeyPair (CSPRNG) produces working, distinct pairs', () => {
    const a = generateKeyPair();
    const b = generateKeyPair();
    expect(a.seed).toHaveLength(32);
    expect(a.publicKey).toHaveLength(32);
    expect(a.seed).not.toEqual(b.seed);
    expect(publicKeyFromSeed(a.seed)).toEqual(a.publicKey);
    const s = signerFromSeed(a.seed);
    expect(verifyEd25519(a.publicKey, new Uint8Array(5), s.sign(new Uint8Array(5)))).toBe(true);
  });

  it('generateKeyPair with an injected RandomSource is deterministic', () => {
    const rnd = { randomBytes: (n: number) => new Uint8Array(n).fill(9) };
    expect(generateKeyPair(rnd)).toEqual(generateKeyPair(rnd));
    expect(codeOf(() => generateKeyPair({ randomBytes: () => new Uint8Array(31) }))).toBe(
      'KEY_INVALID',
    );
  });

  it('signerFromSeed rejects a wrong-length seed', () => {
    expect(codeOf(() => signerFromSeed(new Uint8Array(31)))).toBe('KEY_INVALID');
    expect(codeOf(() => signerFromSeed(new Uint8Array(64)))).toBe('KEY_INVALID');
  });

  it('publicKeyFromRaw: KEY_INVALID for wrong length, non-canonical, small-order, off-curve', () => {
    expect(codeOf(() => publicKeyFromRaw(new Uint8Array(31)))).toBe('KEY_INVALID');
    expect(codeOf(() => publicKeyFromRaw('x' as unknown as Uint8Array))).toBe('KEY_INVALID');
    expect(codeOf(() => publicKeyFromRaw(le32(P)))).toBe('KEY_INVALID'); // y = p ≡ 0
    expect(codeOf(() => publicKeyFromRaw(le32(P + 1n)))).toBe('KEY_INVALID'); // y = p+1 ≡ 1
    const negZero = le32(1n);
    negZero[31]! |= 0x80; // x = 0 with sign bit: "−0"
    expect(codeOf(() => publicKeyFromRaw(negZero))).toBe('KEY_INVALID');
    for (const h of [
      '0100000000000000000000000000000000000000000000000000000000000000',
      'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
      '0000000000000000000000000000000000000000000000000000000000000000',
      '0000000000000000000000000000000000000000000000000000000000000080',
      '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
      '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
    ]) {
      expect(codeOf(() => publicKeyFromRaw(hex(h)))).toBe('KEY_INVALID');
    }
    // Find an off-curve y by the independent Euler criterion and check it is refused.
    let y = 2n;
    while (isQuadraticResidueX2(y)) y++;
    expect(codeOf(() => publicKeyFromRaw(le32(y)))).toBe('KEY_INVALID');
  });

  it('the raw getter returns a copy', () => {
    const pk = publicKeyFromRaw(generateKeyPair().publicKey);
    const r = pk.raw;
    r[0]! ^= 1;
    expect(pk.raw).not.toEqual(r);
  });
});

const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;
function powMod(b: bigint, e: bigint): bigint {
  let r = 1n;
  b %= P;
  while (e > 0n) {
    if (e & 1n) r = (r * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return r;
}
/** Independent reference: y is on the curve iff (y²−1)/(d·y²+1) is a square (Euler's criterion). */
function isQuadraticResidueX2(y: bigint): boolean {
  const y2 = (y * y) % P;
  const x2 = (((y2 - 1n + P) % P) * powMod((D * y2 + 1n) % P, P - 2n)) % P;
  return x2 === 0n || powMod(x2, (P - 1n) / 2n) === 1n;
}

describe('encoding helpers (RFC 8032 §5.1.3, §5.1.7)', () => {
  it('isScalarBelowOrder at the boundary', () => {
    expect(isScalarBelowOrder(le32(0n))).toBe(true);
    expect(isScalarBelowOrder(le32(L - 1n))).toBe(true);
    expect(isScalarBelowOrder(le32(L))).toBe(false);
    expect(isScalarBelowOrder(le32(L + 1n))).toBe(false);
    expect(isScalarBelowOrder(le32((1n << 256n) - 1n))).toBe(false);
    expect(isScalarBelowOrder(new Uint8Array(31))).toBe(false);
  });

  it('isCanonicalPointEncoding matches the BigInt definition on edge values', () => {
    const sign = (b: Uint8Array) => {
      const c = new Uint8Array(b);
      c[31]! |= 0x80;
      return c;
    };
    const cases: [bigint, boolean][] = [
      [0n, true],
      [1n, true],
      [P - 1n, true],
      [P - 2n, true],
      [P, false],
      [P + 1n, false],
      [(1n << 255n) - 1n, false],
    ];
    for (const [y, want] of cases) expect(isCanonicalPointEncoding(le32(y))).toBe(want);
    expect(isCanonicalPointEncoding(sign(le32(1n)))).toBe(false);
    expect(isCanonicalPointEncoding(sign(le32(P - 1n)))).toBe(false);
    expect(isCanonicalPointEncoding(sign(le32(2n)))).toBe(true);
    expect(isCanonicalPointEncoding(sign(le32(P)))).toBe(false);
  });

  it('the in-place forms (32 bytes at an offset, as a signature’s R and S are checked) agree with the 32-byte forms', () => {
    const edges = [0n, 1n, 2n, P - 2n, P - 1n, P, P + 1n, L - 1n, L, L + 1n, (1n << 255n) - 1n];
    const values: Uint8Array[] = [];
    for (const y of edges) {
      const b = le32(y);
      values.push(b);
      const signed = new Uint8Array(b);
      signed[31]! |= 0x80;
      values.push(signed);
    }
    for (let i = 0; i < 200; i++) values.push(generateKeyPair().publicKey);
    for (const v of values) {
      for (const off of [0, 1, 32]) {
        const host = new Uint8Array(off + 32 + 3).fill(0xa5);
        host.set(v, off);
        expect(isCanonicalPointEncoding(host, off)).toBe(isCanonicalPointEncoding(v));
        expect(isScalarBelowOrder(host, off)).toBe(isScalarBelowOrder(v));
      }
    }
    // Without an offset the input must be exactly 32 bytes; with one, 32 bytes must remain.
    const sig = new Uint8Array(64);
    expect(isCanonicalPointEncoding(sig)).toBe(false);
    expect(isScalarBelowOrder(sig)).toBe(false);
    expect(isCanonicalPointEncoding(sig, 0)).toBe(true);
    expect(isScalarBelowOrder(sig, 32)).toBe(true);
    for (const off of [33, 64, -1, 0.5, Number.NaN]) {
      expect(isCanonicalPointEncoding(sig, off)).toBe(false);
      expect(isScalarBelowOrder(sig, off)).toBe(false);
    }
  });

  it('isOnCurve agrees with Euler’s criterion on 300 y values and on real keys', () => {
    for (let y = 0n; y < 300n; y++) expect(isOnCurve(le32(y))).toBe(isQuadraticResidueX2(y));
    for (let i = 0; i < 20; i++) expect(isOnCurve(generateKeyPair().publicKey)).toBe(true);
  });

  it('isSmallOrderEncoding is false for ordinary keys', () => {
    expect(isSmallOrderEncoding(generateKeyPair().publicKey)).toBe(false);
    expect(
      isSmallOrderEncoding(hex('0100000000000000000000000000000000000000000000000000000000000000')),
    ).toBe(true);
  });
});
