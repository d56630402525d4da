import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isMemwardenError } from '../../../src/core/errors.js';
import { PrincipalKinds } from '../../../src/core/trust.js';
import {
  isKeyId,
  isPrincipalId,
  keyIdFor,
  parsePrincipalId,
  principalIdFor,
} from '../../../src/core/crypto/ids.js';
import { hex } from './vectors.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isMemwardenError(e) ? e.code : 'NOT_CODED';
  }
  return undefined;
}

// RFC 8032 §7.1 TEST 1 public key.
const PK = hex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
const H = createHash('sha256').update(PK).digest('hex');

describe('principal and key ids (MemLineage §4.5)', () => {
  it('derive from SHA-256 of the public key', () => {
    expect(principalIdFor('agent', PK)).toBe(`agent:${H.slice(0, 32)}`);
    expect(keyIdFor(PK)).toBe(H.slice(0, 16));
    expect(isKeyId(keyIdFor(PK))).toBe(true);
  });

  it('round-trip through parsePrincipalId for every kind', () => {
    for (const kind of PrincipalKinds) {
      const id = principalIdFor(kind, PK);
      expect(isPrincipalId(id)).toBe(true);
      expect(parsePrincipalId(id)).toEqual({ kind, keyHash: H.slice(0, 32) });
    }
  });

  it('reject bad keys and kinds', () => {
    expect(codeOf(() => keyIdFor(new Uint8Array(31)))).toBe('KEY_INVALID');
    expect(codeOf(() => principalIdFor('user', new Uint8Array(33)))).toBe('KEY_INVALID');
    expect(codeOf(() => principalIdFor('root' as 'user', PK))).toBe('PRINCIPAL_INVALID');
  });

  it('parsePrincipalId is strict', () => {
    const good = `user:${H.slice(0, 32)}`;
    const bad: unknown[] = [
      '',
      'user',
      `user:${H.slice(0, 31)}`,
      `user:${H.slice(0, 33)}`,
      `user:${H.slice(0, 32).toUpperCase()}`,
      `User:${H.slice(0, 32)}`,
      `root:${H.slice(0, 32)}`,
      ` ${good}`,
      `${good}\n`,
      `user::${H.slice(0, 32)}`,
      `user:${H.slice(0, 30)}zz`,
      42,
      null,
      undefined,
    ];
    for (const b of bad) {
      expect(codeOf(() => parsePrincipalId(b))).toBe('PRINCIPAL_INVALID');
      expect(isPrincipalId(b)).toBe(false);
    }
    expect(isKeyId('ABCDEF0123456789')).toBe(false);
    expect(isKeyId('abcdef012345678')).toBe(false);
  });
});
