/**
 * The hand-rolled strict primitives (src/core/codec/wire.ts), differentially against cbor2
 * through the generic path (src/core/codec/cbor.ts).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeStrict, encodeCanonical } from '../../../src/core/codec/cbor.js';
import { fromHalf, toHalfExact } from '../../../src/core/codec/float.js';
import { CborReader, CborWriter, MT, utf8Length } from '../../../src/core/codec/wire.js';
import { MemwardenError, type ErrorCode } from '../../../src/core/errors.js';

const hex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const codeOf = (f: () => unknown): ErrorCode | 'OK' => {
  try {
    f();
    return 'OK';
  } catch (e) {
    if (e instanceof MemwardenError) return e.code;
    throw e;
  }
};
const writeNumber = (x: number): Uint8Array => {
  const w = new CborWriter(1);
  w.number(x);
  return w.finish();
};

describe('binary16', () => {
  it('round-trips every half-precision bit pattern except non-canonical NaNs', () => {
    for (let h = 0; h < 0x10000; h++) {
      const v = fromHalf(h);
      if (v !== v) {
        expect(toHalfExact(v)).toBe(0x7e00);
        continue;
      }
      expect(toHalfExact(v)).toBe(h);
    }
  });
  it('reports numbers that need more than 16 bits', () => {
    for (const x of [0.1, 65520, 2 ** -25, 1 + 2 ** -11, 1e10]) expect(toHalfExact(x)).toBe(-1);
  });
});

describe('CborWriter.number agrees with cbor2 (encodeCanonical)', () => {
  it('for random doubles, integers and specials', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.double(), fc.integer(), fc.maxSafeInteger(), fc.float().map(Number)),
        (x) => {
          expect(writeNumber(x)).toEqual(encodeCanonical(x));
        },
      ),
      { numRuns: 5000 },
    );
  });
  it('and CborReader.readNumber reads back exactly what cbor2 decodes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.float().map(Number)), (x) => {
        const b = writeNumber(x);
        const r = new CborReader(b);
        const v = r.readNumber();
        r.end();
        expect(Object.is(v, decodeStrict(b))).toBe(true);
        expect(Object.is(v, x)).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('CborReader strictness', () => {
  const cases: [string, string, (r: CborReader) => unknown, ErrorCode][] = [
    ['non-shortest uint8', '1801', (r) => r.readUint(), 'CODEC_NON_CANONICAL'],
    ['non-shortest uint16', '190001', (r) => r.readUint(), 'CODEC_NON_CANONICAL'],
    ['non-shortest uint32', '1a0000ffff', (r) => r.readUint(), 'CODEC_NON_CANONICAL'],
    ['non-shortest uint64', '1b00000000ffffffff', (r) => r.readUint(), 'CODEC_NON_CANONICAL'],
    ['non-shortest text length', '7801' + '61', (r) => r.readText(10), 'CODEC_NON_CANONICAL'],
    ['indefinite bytes', '5f4101ff', (r) => r.readBytes(), 'CODEC_NON_CANONICAL'],
    ['indefinite array', '9f01ff', (r) => r.readArrayLen(9), 'CODEC_NON_CANONICAL'],
    [
      'indefinite map',
      'bf6161 01ff'.replace(' ', ''),
      (r) => r.readMapLen(),
      'CODEC_NON_CANONICAL',
    ],
    ['truncated', '1a0000', (r) => r.readUint(), 'CODEC_MALFORMED'],
    ['length beyond input', '45010203', (r) => r.readBytes(), 'CODEC_MALFORMED'],
    ['huge length', '5b0000000100000000', (r) => r.readBytes(), 'CODEC_MALFORMED'],
    ['reserved info', '1d', (r) => r.readUint(), 'CODEC_MALFORMED'],
    ['bad UTF-8', '62c328', (r) => r.readText(10), 'CODEC_MALFORMED'],
    ['encoded surrogate', '63eda080', (r) => r.readText(10), 'CODEC_MALFORMED'],
    ['text too long', '6461626364', (r) => r.readText(3), 'CODEC_OVERSIZE'],
    ['array too long', '83010203', (r) => r.readArrayLen(2), 'CODEC_OVERSIZE'],
    ['wrong type', '4161', (r) => r.readText(10), 'CODEC_WRONG_TYPE'],
    ['f32 that fits f16', 'fa3fc00000', (r) => r.readNumber(), 'CODEC_NON_CANONICAL'],
    ['f64 that fits f32', 'fb3ff8000000000000', (r) => r.readNumber(), 'CODEC_NON_CANONICAL'],
    ['integral float', 'f93c00', (r) => r.readNumber(), 'CODEC_NON_CANONICAL'],
    ['non-canonical NaN', 'f97e01', (r) => r.readNumber(), 'CODEC_NON_CANONICAL'],
    ['f32 NaN', 'fa7fc00000', (r) => r.readNumber(), 'CODEC_NON_CANONICAL'],
    ['integer beyond 2^53', '1b0020000000000000', (r) => r.readNumber(), 'CODEC_WRONG_TYPE'],
    ['non-text key', '01', (r) => r.readKey(), 'CODEC_UNKNOWN_KEY'],
  ];
  it.each(cases)('%s', (_n, h, read, code) => {
    expect(codeOf(() => read(new CborReader(hex(h))))).toBe(code);
  });
  it('end() rejects trailing bytes', () => {
    const r = new CborReader(hex('0100'));
    r.readUint();
    expect(codeOf(() => r.end())).toBe('CODEC_TRAILING_BYTES');
  });
  it('reads uint64 extremes exactly', () => {
    expect(new CborReader(hex('1bffffffffffffffff')).readUint()).toBe(2n ** 64n - 1n);
    const w = new CborWriter(9);
    w.uint(2n ** 64n - 1n);
    expect(Buffer.from(w.finish()).toString('hex')).toBe('1bffffffffffffffff');
  });
});

describe('text', () => {
  it('utf8Length matches TextEncoder and flags lone surrogates', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const wellFormed = !/\p{Cs}/u.test(s);
        expect(utf8Length(s)).toBe(wellFormed ? new TextEncoder().encode(s).length : -1);
      }),
    );
  });
  it('writer/reader text agrees with cbor2 for any well-formed string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (s) => {
        const w = new CborWriter(4);
        w.text(s, utf8Length(s));
        const b = w.finish();
        expect(b).toEqual(encodeCanonical(s));
        expect(new CborReader(b).readText(1 << 20)).toBe(s);
      }),
    );
  });
  it('head() writes every argument size in shortest form', () => {
    for (const n of [
      0,
      23,
      24,
      255,
      256,
      65535,
      65536,
      2 ** 32 - 1,
      2 ** 32,
      Number.MAX_SAFE_INTEGER,
    ]) {
      const w = new CborWriter(1);
      w.head(MT.UINT, n);
      expect(w.finish()).toEqual(encodeCanonical(n));
    }
  });
});
