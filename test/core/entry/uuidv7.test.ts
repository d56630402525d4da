/**
 * UUIDv7 (RFC 9562 §5.7) against the RFC's Appendix A.6 example
 * (test/vectors/uuidv7/rfc9562_example.json).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  isUuidStringOfAt,
  isUuidV7String,
  parseUuid,
  uuidStringAt,
  uuidToString,
  uuidv7,
  uuidv7Millis,
} from '../../../src/core/entry/uuidv7.js';
import { codeOf, toHex } from './fixtures.js';

interface Vector {
  uuid: string;
  uuidUpper: string;
  bytesHex: string;
  unix_ts_ms: number;
  rand_a_hex: string;
  rand_b_hex: string;
}
const { vectors } = JSON.parse(
  readFileSync(
    new URL('../../vectors/uuidv7/rfc9562_example.json', import.meta.url),
    'utf8',
  ),
) as { vectors: Vector[] };

describe('RFC 9562 Appendix A.6 example', () => {
  const v = vectors[0] as Vector;
  it('builds the example from its timestamp and random bits', () => {
    // rand_a = 0xcc3 → random[0] low nibble 0xc, random[1] 0xc3;
    // rand_b = 0x18c4dc0c0c07398f → random[2] low 6 bits 0x18, random[3..9] the rest.
    const random = Uint8Array.from(Buffer.from('0cc318c4dc0c0c07398f', 'hex'));
    expect(uuidv7(v.unix_ts_ms, random)).toBe(v.uuid);
    expect(uuidv7(BigInt(v.unix_ts_ms), random)).toBe(v.uuid);
  });
  it('parses to the example bytes and back', () => {
    expect(toHex(parseUuid(v.uuid))).toBe(v.bytesHex);
    expect(uuidToString(parseUuid(v.uuid))).toBe(v.uuid);
    expect(uuidv7Millis(parseUuid(v.uuid))).toBe(v.unix_ts_ms);
  });
  it('rejects the uppercase spelling (one canonical string per id)', () => {
    expect(codeOf(() => parseUuid(v.uuidUpper))).toBe('INPUT_INVALID');
  });
});

describe('uuidv7', () => {
  it('property: version 7, variant 10, timestamp preserved, string round trip', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 48 - 1 }),
        fc.uint8Array({ minLength: 10, maxLength: 16 }),
        (ms, r) => {
          const s = uuidv7(ms, r);
          expect(isUuidV7String(s)).toBe(true);
          const b = parseUuid(s);
          expect((b[6] as number) >> 4).toBe(7);
          expect((b[8] as number) >> 6).toBe(2);
          expect(uuidv7Millis(b)).toBe(ms);
          expect(uuidToString(b)).toBe(s);
        },
      ),
    );
  });
  it('sorts by time as strings', () => {
    const r = new Uint8Array(10).fill(0xff);
    expect(uuidv7(1, r) < uuidv7(2, new Uint8Array(10))).toBe(true);
  });
  it.each([
    ['negative time', () => uuidv7(-1, new Uint8Array(10))],
    ['time beyond 48 bits', () => uuidv7(2 ** 48, new Uint8Array(10))],
    ['fractional time', () => uuidv7(1.5, new Uint8Array(10))],
    ['short randomness', () => uuidv7(1, new Uint8Array(9))],
  ])('rejects %s', (_n, f) => {
    expect(codeOf(f)).toBe('INPUT_INVALID');
  });
  it.each([
    ['v4', '0190d2a0-e0a0-4e4b-9a3c-1d2e3f405162'],
    ['bad variant', '017f22e2-79b0-7cc3-c8c4-dc0c0c07398f'],
    ['no hyphens', '017f22e279b07cc398c4dc0c0c07398f'],
    ['braces', '{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}'],
    ['misplaced hyphen', '017f22e27-9b0-7cc3-98c4-dc0c0c07398f'],
    ['non-hex', '017f22e2-79b0-7cc3-98c4-dc0c0c07398g'],
    ['too short', '017f22e2-79b0-7cc3-98c4-dc0c0c07398'],
    ['empty', ''],
  ])('parseUuid rejects %s', (_n, s) => {
    expect(codeOf(() => parseUuid(s))).toBe('INPUT_INVALID');
    expect(isUuidV7String(s)).toBe(false);
  });
  it('uuidToString rejects wrong lengths and versions', () => {
    expect(codeOf(() => uuidToString(new Uint8Array(15)))).toBe('INPUT_INVALID');
    expect(codeOf(() => uuidToString(new Uint8Array(16)))).toBe('INPUT_INVALID');
  });
});

describe('isUuidStringOfAt', () => {
  it('is true exactly for the canonical lowercase string of the bytes at the offset', () => {
    for (let i = 0; i < 500; i++) {
      const host = Uint8Array.from({ length: 20 }, (_, j) => (i * 131 + j * 71 + (i >> 3)) & 0xff);
      const off = i % 5;
      const s = uuidStringAt(host, off);
      expect(isUuidStringOfAt(s, host, off)).toBe(true);
      expect(isUuidStringOfAt(s.toUpperCase(), host, off)).toBe(s === s.toUpperCase());
      expect(isUuidStringOfAt(s.replaceAll('-', ''), host, off)).toBe(false);
      expect(isUuidStringOfAt(`${s.slice(0, 8)}_${s.slice(9)}`, host, off)).toBe(false);
      const k = (i * 7) % 36;
      if (s[k] !== '-') {
        const other = s.slice(0, k) + (s[k] === '0' ? '1' : '0') + s.slice(k + 1);
        expect(isUuidStringOfAt(other, host, off)).toBe(false);
      }
      expect(isUuidStringOfAt(s, host, off + 1)).toBe(uuidStringAt(host, off + 1) === s);
    }
  });
});
