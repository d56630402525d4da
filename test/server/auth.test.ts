import { describe, expect, it } from 'vitest';
import {
  createHashedKeyAuthenticator,
  createStaticKeyAuthenticator,
  hashApiKey,
  parseBearer,
} from '../../src/server/auth.js';

describe('auth helpers', () => {
  it('hashApiKey is lowercase hex SHA-256 of the UTF-8 key', () => {
    // SHA-256("abc"), FIPS 180-2 Appendix B.1
    expect(hashApiKey('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('parseBearer accepts one visible-ASCII token and nothing else', () => {
    expect(parseBearer('Bearer abc.DEF-123')).toBe('abc.DEF-123');
    expect(parseBearer('BEARER abc')).toBe('abc');
    for (const h of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Basic abc',
      'Bearer a b',
      'Bearer é',
      `Bearer ${'a'.repeat(513)}`,
    ]) {
      expect(parseBearer(h)).toBeUndefined();
    }
  });

  it('the hashed-key authenticator looks up by hash, never by the raw token', async () => {
    const seen: string[] = [];
    const a = createHashedKeyAuthenticator(async (h) => {
      seen.push(h);
      return h === hashApiKey('k1') ? 'user:one' : undefined;
    });
    expect(await a.authenticate('k1')).toBe('user:one');
    expect(await a.authenticate('k2')).toBeUndefined();
    expect(seen).toEqual([hashApiKey('k1'), hashApiKey('k2')]);
  });

  it('the static authenticator resolves each key to its principal', async () => {
    const a = createStaticKeyAuthenticator({ 'user:a': 'key-a', 'user:b': 'key-b' });
    expect(await a.authenticate('key-b')).toBe('user:b');
    expect(await a.authenticate('key-c')).toBeUndefined();
    expect(await a.authenticate('key-a ')).toBeUndefined();
  });
});
