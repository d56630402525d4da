import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isMemwardenError } from '../../../src/core/errors.js';
import { hmacSha256, MacKeyring, verifyHmacSha256 } from '../../../src/core/crypto/hmac.js';
import { hex, loadVectors } from './vectors.js';

interface Rfc4231 {
  vectors: {
    testCase: number;
    key: string;
    data: string;
    hmacSha256: string;
    truncatedToBits?: number;
  }[];
}
interface WycheproofMac {
  numberOfTests: number;
  testGroups: {
    keySize: number;
    tagSize: number;
    tests: {
      tcId: number;
      key: string;
      msg: string;
      tag: string;
      result: 'valid' | 'invalid';
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

const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('RFC 4231 §4.2–4.8 (HMAC-SHA-256)', () => {
  const { vectors } = loadVectors<Rfc4231>('hmac/rfc4231_hmac_sha256.json');
  it('has test cases 1–7', () =>
    expect(vectors.map((v) => v.testCase)).toEqual([1, 2, 3, 4, 5, 6, 7]));
  for (const v of vectors) {
    it(`test case ${v.testCase}`, () => {
      const tag = hmacSha256(hex(v.key), hex(v.data));
      const want = v.hmacSha256;
      if (v.testCase === 5) {
        // TC5 is published truncated to 128 bits: compare the prefix and verify as truncated.
        expect(want).toHaveLength(32);
        expect(toHex(tag).slice(0, 32)).toBe(want);
        expect(verifyHmacSha256(hex(v.key), hex(v.data), hex(want), { tagBytes: 16 })).toBe(true);
        expect(verifyHmacSha256(hex(v.key), hex(v.data), hex(want))).toBe(false);
      } else {
        expect(toHex(tag)).toBe(want);
        expect(verifyHmacSha256(hex(v.key), hex(v.data), hex(want))).toBe(true);
      }
    });
  }
});

describe('Wycheproof hmac_sha256_test.json (all vectors)', () => {
  const w = loadVectors<WycheproofMac>('hmac/wycheproof_hmac_sha256_test.json');
  const all = w.testGroups.flatMap((g) => g.tests.map((t) => ({ g, t })));

  it('covers all 174 vectors in 6 groups', () => {
    expect(all).toHaveLength(w.numberOfTests);
    expect(all).toHaveLength(174);
    expect(w.testGroups.map((g) => [g.keySize, g.tagSize])).toHaveLength(6);
  });

  it('valid → true, invalid (incl. every ModifiedTag) → false; tagSize 128 via explicit tagBytes: 16', () => {
    const wrong: number[] = [];
    let modified = 0;
    for (const { g, t } of all) {
      const tagBytes = g.tagSize / 8;
      const want = t.result === 'valid';
      const got = verifyHmacSha256(hex(t.key), hex(t.msg), hex(t.tag), { tagBytes });
      // The computed tag's leftmost tagBytes equal the expected tag exactly when valid.
      const prefixEq = toHex(hmacSha256(hex(t.key), hex(t.msg))).slice(0, tagBytes * 2) === t.tag;
      if (got !== want || prefixEq !== want) wrong.push(t.tcId);
      if (t.flags.includes('ModifiedTag')) {
        modified++;
        expect(t.result).toBe('invalid');
      }
    }
    expect(wrong).toEqual([]);
    expect(modified).toBeGreaterThan(0);
  });

  it('a truncated tag never verifies without the explicit option (full-tag API)', () => {
    for (const { g, t } of all) {
      if (g.tagSize !== 128) continue;
      expect(verifyHmacSha256(hex(t.key), hex(t.msg), hex(t.tag))).toBe(false);
    }
  });

  it('the keyring agrees on every full-tag vector with a ≥ 32-byte key', () => {
    let n = 0;
    for (const { g, t } of all) {
      if (g.tagSize !== 256 || g.keySize < 256) continue;
      const ring = new MacKeyring();
      ring.add('k', hex(t.key));
      expect(ring.verify('k', hex(t.msg), hex(t.tag))).toBe(t.result === 'valid');
      if (t.result === 'valid') expect(toHex(ring.tag(hex(t.msg)).tag)).toBe(t.tag);
      n++;
    }
    expect(n).toBeGreaterThan(50);
  });
});

describe('differential: MacKeyring (RFC 2104 over crypto.hash) = createHmac', () => {
  it('agrees on random keys (32..200 bytes, incl. > block size) and messages (0..2000 bytes)', () => {
    for (let i = 0; i < 300; i++) {
      const key = randomBytes(32 + (i % 169));
      const msg = randomBytes((i * 37) % 2001);
      const ring = new MacKeyring();
      ring.add('k', key);
      const ref = createHmac('sha256', key).update(msg).digest();
      const { tag } = ring.tag(msg);
      expect(toHex(tag)).toBe(ref.toString('hex'));
      expect(toHex(hmacSha256(key, msg))).toBe(ref.toString('hex'));
      expect(ring.verify('k', msg, ref)).toBe(true);
    }
  });
});

describe('MacKeyring reuses its blocks: no state leaks from one message to the next', () => {
  it('agrees with createHmac across sizes that grow and shrink its message block, on views at an offset', () => {
    const key = randomBytes(48);
    const ring = new MacKeyring();
    ring.add('k', key);
    // Up to past the kept block (16 KiB), then small again, in a mixed order.
    const sizes = [
      0, 1, 63, 64, 65, 1023, 1024, 1025, 4000, 16_384, 16_385, 40_000, 3, 2000, 17_000, 0,
    ];
    for (const n of sizes) {
      const host = randomBytes(n + 7);
      const msg = new Uint8Array(host.buffer, host.byteOffset + 5, n);
      const ref = createHmac('sha256', key).update(msg).digest();
      expect(toHex(ring.tag(msg).tag)).toBe(ref.toString('hex'));
      expect(ring.verify('k', msg, ref)).toBe(true);
      expect(ring.check('k', msg, ref)).toEqual({ ok: true });
    }
  });

  it('rejects every single-bit change of a tag and any other tag length', () => {
    const ring = new MacKeyring();
    ring.add('k', randomBytes(32));
    const msg = randomBytes(453);
    const { tag } = ring.tag(msg);
    expect(ring.verify('k', msg, tag)).toBe(true);
    for (let i = 0; i < tag.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const t = tag.slice();
        t[i]! ^= 1 << bit;
        expect(ring.check('k', msg, t)).toEqual({ ok: false, code: 'MAC_INVALID' });
      }
    }
    expect(ring.verify('k', msg, tag.subarray(0, 31))).toBe(false);
    expect(ring.verify('k', msg, Uint8Array.from([...tag, 0]))).toBe(false);
    expect(ring.verify('k', msg, new Uint8Array(0))).toBe(false);
    // And the message: one flipped bit anywhere.
    for (let i = 0; i < msg.length; i += 37) {
      const m = Uint8Array.from(msg);
      m[i]! ^= 0x10;
      expect(ring.verify('k', m, tag)).toBe(false);
    }
  });
});

describe('verifyHmacSha256 options', () => {
  it('rejects tagBytes outside [16, 32] as a caller bug', () => {
    for (const tb of [0, 1, 15, 33, 16.5]) {
      expect(
        codeOf(() =>
          verifyHmacSha256(new Uint8Array(32), new Uint8Array(1), new Uint8Array(tb | 0), {
            tagBytes: tb,
          }),
        ),
      ).toBe('INPUT_INVALID');
    }
  });
  it('non-byte inputs are false, not exceptions', () => {
    expect(
      verifyHmacSha256('k' as unknown as Uint8Array, new Uint8Array(1), new Uint8Array(32)),
    ).toBe(false);
  });
});

describe('MacKeyring', () => {
  const k1 = new Uint8Array(32).fill(1);
  const k2 = new Uint8Array(32).fill(2);
  const data = new TextEncoder().encode('entry bytes');

  it('tags with the newest active key; verifies under any active key', () => {
    const ring = new MacKeyring();
    ring.add('k1', k1);
    const t1 = ring.tag(data);
    expect(t1.kid).toBe('k1');
    ring.add('k2', k2);
    const t2 = ring.tag(data);
    expect(t2.kid).toBe('k2');
    expect(ring.verify('k1', data, t1.tag)).toBe(true);
    expect(ring.verify('k2', data, t2.tag)).toBe(true);
    expect(ring.verify('k2', data, t1.tag)).toBe(false);
    expect(ring.activeKids()).toEqual(['k1', 'k2']);
  });

  it('retired keys verify nothing; check() says why', () => {
    const ring = new MacKeyring();
    ring.add('k1', k1);
    ring.add('k2', k2);
    const t2 = ring.tag(data);
    ring.retire('k2');
    expect(ring.currentKid()).toBe('k1');
    expect(ring.verify('k2', data, t2.tag)).toBe(false);
    expect(ring.check('k2', data, t2.tag)).toEqual({ ok: false, code: 'MAC_KEY_RETIRED' });
    expect(ring.check('nope', data, t2.tag)).toEqual({ ok: false, code: 'MAC_KEY_UNKNOWN' });
    expect(ring.check('k1', data, t2.tag)).toEqual({ ok: false, code: 'MAC_INVALID' });
    expect(ring.tag(data).kid).toBe('k1');
    ring.retire('k1');
    expect(codeOf(() => ring.tag(data))).toBe('MAC_KEY_UNKNOWN');
    expect(codeOf(() => ring.retire('zzz'))).toBe('MAC_KEY_UNKNOWN');
  });

  it('refuses short keys, bad kids and reused kids (even retired)', () => {
    const ring = new MacKeyring();
    expect(codeOf(() => ring.add('k', new Uint8Array(31)))).toBe('KEY_INVALID');
    expect(codeOf(() => ring.add('bad kid', k1))).toBe('INPUT_INVALID');
    expect(codeOf(() => ring.add('', k1))).toBe('INPUT_INVALID');
    ring.add('k1', k1);
    expect(codeOf(() => ring.add('k1', k2))).toBe('MAC_KEY_CONFLICT');
    ring.retire('k1');
    expect(codeOf(() => ring.add('k1', k2))).toBe('MAC_KEY_CONFLICT');
  });

  it('copies the key: mutating the caller’s buffer changes nothing', () => {
    const key = new Uint8Array(32).fill(5);
    const ring = new MacKeyring();
    ring.add('k', key);
    const t = ring.tag(data);
    key.fill(6);
    expect(ring.verify('k', data, t.tag)).toBe(true);
  });

  it('rejects truncated, extended and bit-flipped tags', () => {
    const ring = new MacKeyring();
    ring.add('k', k1);
    const { tag } = ring.tag(data);
    expect(ring.verify('k', data, tag.subarray(0, 16))).toBe(false);
    expect(ring.verify('k', data, new Uint8Array([...tag, 0]))).toBe(false);
    expect(ring.verify('k', data, new Uint8Array(0))).toBe(false);
    for (let i = 0; i < 256; i++) {
      const t = new Uint8Array(tag);
      t[i >> 3]! ^= 1 << (i & 7);
      expect(ring.verify('k', data, t)).toBe(false);
    }
    expect(ring.verify('k', 'x' as unknown as Uint8Array, tag)).toBe(false);
  });

  it('successive tags do not alias the internal scratch buffers', () => {
    const ring = new MacKeyring();
    ring.add('k', k1);
    const a = ring.tag(new Uint8Array([1]));
    const aHex = toHex(a.tag);
    ring.tag(new Uint8Array([2]));
    ring.verify('k', new Uint8Array([3]), a.tag);
    expect(toHex(a.tag)).toBe(aHex);
  });
});
