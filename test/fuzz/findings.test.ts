/**
 * Bugs the fuzzers found, each pinned by the smallest input that showed it.
 */
import { describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/core/bytes.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { parseNote, parseVerifierKey } from '../../src/core/merkle/index.js';
import { VKEY } from './targets.js';

const codeOf = (f: () => unknown): string => {
  try {
    f();
    return 'OK';
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
};

describe('fuzz findings', () => {
  it('base64 with non-zero pad bits is refused (two spellings of one value); `note` target', () => {
    expect(fromBase64('AA==')).toEqual(Uint8Array.of(0));
    expect(codeOf(() => fromBase64('AB=='))).toBe('INPUT_INVALID');
    expect(codeOf(() => fromBase64('AAB='))).toBe('INPUT_INVALID');
    // The note signature line: the fuzzer's input ended its base64 in `f=` instead of `A=`.
    const sig = `${'A'.repeat(94)}f=`;
    expect(codeOf(() => parseNote(`text\n\n\u2014 k ${sig}\n`))).toBe('LOG_CHECKPOINT_MALFORMED');
    expect(codeOf(() => parseNote(`text\n\n\u2014 k ${'A'.repeat(94)}A=\n`))).toBe('OK');
    // And a verifier key whose key bytes are spelled non-canonically.
    const last = VKEY.at(-2)!;
    const alt = VKEY.slice(0, -2) + String.fromCharCode(last.charCodeAt(0) + 1) + '=';
    expect(codeOf(() => parseVerifierKey(VKEY))).toBe('OK');
    expect(codeOf(() => parseVerifierKey(alt))).toBe('KEY_INVALID');
  });
});
