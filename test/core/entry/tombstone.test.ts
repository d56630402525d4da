/** The tombstone record (MemLineage §3.4): round trip, domain separation, rejections. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeCanonical } from '../../../src/core/codec/cbor.js';
import {
  TOMBSTONE_KEYS,
  decodeSignedEntry,
  decodeSignedTombstone,
  encodeSignedEntry,
  encodeSignedTombstone,
  encodeTombstoneBody,
  safeDecodeSignedTombstone,
  signingInput,
  tombstoneLeafData,
  tombstoneSigningInput,
  validateTombstoneBody,
} from '../../../src/core/entry/index.js';
import type { SignedTombstone, TombstoneBody } from '../../../src/core/entry/types.js';
import type { ErrorCode } from '../../../src/core/errors.js';
import {
  arbSignedTombstone,
  bytes,
  codeOf,
  rawMap,
  sampleEntry,
  sampleTombstone,
  toHex,
  wireView,
} from './fixtures.js';

type Mut = Record<string, unknown>;

describe('tombstone', () => {
  it('round-trips and matches the cbor2 oracle byte for byte', () => {
    fc.assert(
      fc.property(arbSignedTombstone, (t) => {
        const b = encodeSignedTombstone(t);
        expect(b).toEqual(encodeCanonical(wireView(t)));
        expect(decodeSignedTombstone(b)).toEqual(t);
        const { sig: _s, ...body } = t;
        expect(encodeTombstoneBody(t)).toEqual(encodeCanonical(wireView(body)));
      }),
      { numRuns: 300 },
    );
  });

  it('keys are in RFC 8949 §4.2.1 order', () => {
    const sorted = [...TOMBSTONE_KEYS].sort((a, b) =>
      Buffer.compare(encodeCanonical(a), encodeCanonical(b)),
    );
    expect(TOMBSTONE_KEYS).toEqual(sorted);
  });

  it('is never read as an entry, nor an entry as a tombstone', () => {
    expect(codeOf(() => decodeSignedEntry(encodeSignedTombstone(sampleTombstone())))).not.toBe(
      'OK',
    );
    expect(codeOf(() => decodeSignedTombstone(encodeSignedEntry(sampleEntry())))).not.toBe('OK');
    const body = encodeTombstoneBody(sampleTombstone());
    expect(toHex(tombstoneSigningInput(body))).not.toBe(toHex(signingInput(body)));
    expect(Buffer.from(tombstoneSigningInput(body).subarray(0, 23)).toString()).toBe(
      'memwarden/tombstone/v1\n',
    );
  });

  it('leaf data is "ts:" ‖ target ‖ id ‖ sig', () => {
    const t = sampleTombstone();
    const leaf = tombstoneLeafData(t);
    expect(leaf.length).toBe(99);
    expect(toHex(leaf)).toBe(
      toHex(Buffer.from('ts:')) +
        t.target.replaceAll('-', '') +
        t.id.replaceAll('-', '') +
        toHex(t.sig),
    );
  });

  const wireCases: [string, (g: Mut) => void, ErrorCode][] = [
    ['t entry', (g) => (g.t = 'entry'), 'CODEC_INVALID_VALUE'],
    ['v 2', (g) => (g.v = 2), 'CODEC_UNSUPPORTED_VERSION'],
    ['target = id', (g) => (g.target = g.id), 'CODEC_INVALID_VALUE'],
    ['target 16 zero bytes', (g) => (g.target = bytes(16, 0)), 'CODEC_INVALID_VALUE'],
    ['reason empty', (g) => (g.reason = ''), 'CODEC_INVALID_VALUE'],
    ['reason 1025 chars', (g) => (g.reason = 'r'.repeat(1025)), 'CODEC_OVERSIZE'],
    ['writer bad', (g) => (g.writer = 'agent:1'), 'CODEC_INVALID_VALUE'],
    ['kid bad', (g) => (g.kid = 'x'), 'CODEC_INVALID_VALUE'],
    ['ts text', (g) => (g.ts = '1'), 'CODEC_WRONG_TYPE'],
    ['nonce short', (g) => (g.nonce = bytes(8, 0)), 'CODEC_INVALID_VALUE'],
    ['sig missing', (g) => delete g.sig, 'CODEC_MISSING_KEY'],
    ['reason missing', (g) => delete g.reason, 'CODEC_MISSING_KEY'],
    ['entry key', (g) => (g.content = 'x'), 'CODEC_UNKNOWN_KEY'],
  ];
  it.each(wireCases)('decode rejects %s → %s', (_n, mutate, code) => {
    const g = wireView(sampleTombstone());
    mutate(g);
    expect(codeOf(() => decodeSignedTombstone(encodeCanonical(g)))).toBe(code);
    const r = safeDecodeSignedTombstone(encodeCanonical(g));
    expect(r.ok ? 'OK' : r.error.code).toBe(code);
  });

  it('decode rejects re-ordered keys, duplicates, trailing bytes and oversize input', () => {
    const g = wireView(sampleTombstone());
    const kv = TOMBSTONE_KEYS.map((k): [string, unknown] => [k, g[k]]);
    expect(codeOf(() => decodeSignedTombstone(rawMap([...kv].reverse())))).toBe(
      'CODEC_NON_CANONICAL',
    );
    expect(codeOf(() => decodeSignedTombstone(rawMap([kv[0] as [string, unknown], ...kv])))).toBe(
      'CODEC_DUPLICATE_KEY',
    );
    const b = encodeSignedTombstone(sampleTombstone());
    expect(codeOf(() => decodeSignedTombstone(Uint8Array.from([...b, 0xf6])))).toBe(
      'CODEC_TRAILING_BYTES',
    );
    expect(codeOf(() => decodeSignedTombstone(new Uint8Array(8 * 1024 + 1)))).toBe(
      'CODEC_OVERSIZE',
    );
  });

  const tsCases: [string, (t: Mut) => void, ErrorCode][] = [
    [
      'target uppercase',
      (t) => (t.target = (t.target as string).toUpperCase()),
      'CODEC_INVALID_VALUE',
    ],
    ['target = id', (t) => (t.target = t.id), 'CODEC_INVALID_VALUE'],
    ['reason lone surrogate', (t) => (t.reason = '\ud800'), 'CODEC_INVALID_VALUE'],
    [
      'reason 1024 emoji is fine, 1025 is not',
      (t) => (t.reason = '😀'.repeat(1025)),
      'CODEC_OVERSIZE',
    ],
    ['extra field', (t) => (t.parents = []), 'CODEC_UNKNOWN_KEY'],
    ['ts negative', (t) => (t.ts = -1n), 'CODEC_INVALID_VALUE'],
  ];
  it.each(tsCases)('validate rejects %s → %s', (_n, mutate, code) => {
    const t = sampleTombstone() as unknown as Mut;
    mutate(t);
    expect(codeOf(() => validateTombstoneBody(t as unknown as TombstoneBody))).toBe(code);
    expect(codeOf(() => encodeSignedTombstone(t as unknown as SignedTombstone))).toBe(code);
  });

  it('accepts a 1024-emoji reason (limits count code points)', () => {
    const t = { ...sampleTombstone(), reason: '😀'.repeat(1024) };
    expect(decodeSignedTombstone(encodeSignedTombstone(t))).toEqual(t);
  });
});
