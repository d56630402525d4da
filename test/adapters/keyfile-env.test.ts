import { describe, expect, it } from 'vitest';
import { isMemwardenError } from '../../src/core/errors.js';
import { EnvKeySource } from '../../src/adapters/keyfile/env.js';

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return isMemwardenError(e) ? e.code : 'NOT_CODED';
  }
  return undefined;
}

describe('EnvKeySource', () => {
  const env = {
    MEMWARDEN_KEY_MAC_1: Buffer.alloc(32, 1).toString('base64'),
    MEMWARDEN_KEY_AGENT: 'AQID',
    MEMWARDEN_KEY_BROKEN: 'not base64!',
    MEMWARDEN_KEY_EMPTY: '',
    MEMWARDEN_KEY_lower: 'AQID', // not a canonical (upper-case) name: ignored by list()
    OTHER: 'AQID',
  };
  const src = new EnvKeySource(env);

  it('reads MEMWARDEN_KEY_<NAME> base64, case-insensitively by name', async () => {
    expect(await src.get('mac_1')).toEqual(new Uint8Array(32).fill(1));
    expect(await src.get('MAC_1')).toEqual(new Uint8Array(32).fill(1));
    expect(await src.get('agent')).toEqual(new Uint8Array([1, 2, 3]));
    expect(await src.get('missing')).toBeUndefined();
  });

  it('lists lower-cased names and never secrets', async () => {
    expect(await src.list()).toEqual(['agent', 'broken', 'empty', 'mac_1']);
  });

  it('bad values are KEY_SOURCE_FAILED; bad names INPUT_INVALID', async () => {
    expect(await codeOf(src.get('broken'))).toBe('KEY_SOURCE_FAILED');
    expect(await codeOf(src.get('empty'))).toBe('KEY_SOURCE_FAILED');
    expect(await codeOf(src.get('a-b'))).toBe('INPUT_INVALID');
    expect(await codeOf(src.get(''))).toBe('INPUT_INVALID');
  });

  it('is read-only: put is KEY_SOURCE_FAILED', async () => {
    expect(await codeOf(src.put('new', new Uint8Array([1])))).toBe('KEY_SOURCE_FAILED');
  });

  it('defaults to process.env', async () => {
    process.env['MEMWARDEN_KEY_ZZ_TEST'] = 'AQID';
    try {
      expect(await new EnvKeySource().get('zz_test')).toEqual(new Uint8Array([1, 2, 3]));
    } finally {
      delete process.env['MEMWARDEN_KEY_ZZ_TEST'];
    }
  });
});
