/** Validation before signing (validateEntryBody and the encoders): the decoder's codes. */
import { describe, expect, it } from 'vitest';
import {
  decodeSignedEntry,
  encodeEntryBody,
  encodeSignedEntry,
  validateEntryBody,
} from '../../../src/core/entry/index.js';
import type { EntryBody, SignedEntry } from '../../../src/core/entry/types.js';
import type { ErrorCode } from '../../../src/core/errors.js';
import { bytes, codeOf, sampleEntry } from './fixtures.js';

type Mut = Record<string, unknown>;

describe('validateEntryBody / encode reject invalid bodies with the decoder codes', () => {
  const cases: [string, (e: Mut) => void, ErrorCode][] = [
    ['v = 3', (e) => (e.v = 3 as 1), 'CODEC_UNSUPPORTED_VERSION'],
    ['t wrong', (e) => (e.t = 'tombstone'), 'CODEC_INVALID_VALUE'],
    ['id uppercase', (e) => (e.id = (e.id as string).toUpperCase()), 'CODEC_INVALID_VALUE'],
    ['id v4', (e) => (e.id = '0190d2a0-e0a0-4e4b-9a3c-1d2e3f405162'), 'CODEC_INVALID_VALUE'],
    ['id bytes', (e) => (e.id = bytes(16, 0)), 'CODEC_WRONG_TYPE'],
    ['ns lone surrogate', (e) => (e.ns = 'a\ud800'), 'CODEC_INVALID_VALUE'],
    ['ns too long', (e) => (e.ns = 'n'.repeat(257)), 'CODEC_OVERSIZE'],
    ['content lone surrogate', (e) => (e.content = '\udc00'), 'CODEC_INVALID_VALUE'],
    ['content over 64 KiB in UTF-8', (e) => (e.content = 'é'.repeat(32769)), 'CODEC_OVERSIZE'],
    ['kind with digit', (e) => (e.kind = 'fact1'), 'CODEC_INVALID_VALUE'],
    ['tier unknown', (e) => (e.tier = 'ROOT'), 'CODEC_INVALID_VALUE'],
    ['src Buffer-length 33', (e) => (e.src = bytes(33, 0)), 'CODEC_INVALID_VALUE'],
    ['ts number', (e) => (e.ts = 5), 'CODEC_WRONG_TYPE'],
    ['ts negative', (e) => (e.ts = -1n), 'CODEC_INVALID_VALUE'],
    ['ts ≥ 2^64', (e) => ((e.ts = 2n ** 64n), delete e.exp), 'CODEC_INVALID_VALUE'],
    ['exp ≤ ts', (e) => (e.exp = e.ts), 'CODEC_INVALID_VALUE'],
    ['optional set to undefined', (e) => (e.uri = undefined), 'CODEC_WRONG_TYPE'],
    ['unknown field', (e) => (e.extra = 1), 'CODEC_UNKNOWN_KEY'],
    ['missing field', (e) => delete e.nonce, 'CODEC_MISSING_KEY'],
    ['parents not array', (e) => (e.parents = 'x'), 'CODEC_WRONG_TYPE'],
    [
      'duplicate parents',
      (e) => (e.parents = [(e.parents as string[])[0], (e.parents as string[])[0]]),
      'CODEC_INVALID_VALUE',
    ],
    ['weights mismatch', (e) => (e.weights = []), 'CODEC_INVALID_VALUE'],
    ['weight -0', (e) => (e.weights = [1, -0]), 'CODEC_INVALID_VALUE'],
    ['sup = id', (e) => (e.sup = e.id), 'CODEC_INVALID_VALUE'],
    ['rev bad', (e) => (e.rev = 'user:xyz'), 'CODEC_INVALID_VALUE'],
  ];
  it.each(cases)('%s → %s', (_name, mutate, code) => {
    const e = sampleEntry() as unknown as Mut;
    mutate(e);
    expect(codeOf(() => validateEntryBody(e as unknown as EntryBody))).toBe(code);
    expect(codeOf(() => encodeEntryBody(e as unknown as EntryBody))).toBe(code);
    expect(codeOf(() => encodeSignedEntry(e as unknown as SignedEntry))).toBe(code);
  });

  it('encodeSignedEntry requires a 64-byte sig; encodeEntryBody ignores sig', () => {
    const { sig: _s, ...body } = sampleEntry();
    expect(codeOf(() => encodeSignedEntry(body as SignedEntry))).toBe('CODEC_MISSING_KEY');
    expect(codeOf(() => encodeSignedEntry({ ...body, sig: bytes(32, 0) }))).toBe(
      'CODEC_INVALID_VALUE',
    );
    expect(codeOf(() => validateEntryBody(body))).toBe('OK');
  });

  it('rejects non-objects', () => {
    expect(codeOf(() => validateEntryBody(null as unknown as EntryBody))).toBe('CODEC_WRONG_TYPE');
    expect(codeOf(() => decodeSignedEntry('a0' as unknown as Uint8Array))).toBe('CODEC_WRONG_TYPE');
  });
});

describe('encoding snapshots its input', () => {
  it('reads each field once, so a getter cannot swap a value after validation', () => {
    const e = sampleEntry();
    let reads = 0;
    const tricky = { ...e } as Record<string, unknown>;
    Object.defineProperty(tricky, 'content', {
      enumerable: true,
      get: () => (reads++ === 0 ? 'ok' : '\ud800'.repeat(70000)),
    });
    const b = encodeSignedEntry(tricky as unknown as SignedEntry);
    expect(reads).toBe(1);
    expect(decodeSignedEntry(b).content).toBe('ok');
  });
});
