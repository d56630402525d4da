/**
 * The caching authenticator in front of the key table: successes are reused for a short time,
 * refusals never are, and a revoked key stops working once its entry ages out.
 */
import { describe, expect, it } from 'vitest';
import { MemwardenError } from '../../src/core/errors.js';
import { createCachedAuthenticator, type Authenticator } from '../../src/server/auth.js';

function table() {
  const keys = new Map<string, string | 'revoked'>([
    ['key-alice-0001', 'user:alice'],
    ['key-bob-000002', 'user:bob'],
  ]);
  let lookups = 0;
  const inner: Authenticator = {
    authenticate: async (t) => {
      lookups++;
      const p = keys.get(t);
      if (p === 'revoked') throw new MemwardenError('KEY_REVOKED', 'revoked');
      return p;
    },
  };
  return { keys, inner, lookups: () => lookups };
}

describe('createCachedAuthenticator', () => {
  it('reuses a success within the TTL, per key, and looks up again after it', async () => {
    const t = table();
    let now = 0;
    const auth = createCachedAuthenticator(t.inner, { ttlMs: 1000, now: () => now });
    expect(await auth.authenticate('key-alice-0001')).toBe('user:alice');
    expect(await auth.authenticate('key-alice-0001')).toBe('user:alice');
    expect(t.lookups()).toBe(1);
    expect(await auth.authenticate('key-bob-000002')).toBe('user:bob');
    expect(t.lookups()).toBe(2);
    // revoked in storage: still accepted inside the TTL, refused after it
    t.keys.set('key-alice-0001', 'revoked');
    now = 999;
    expect(await auth.authenticate('key-alice-0001')).toBe('user:alice');
    now = 1001;
    await expect(auth.authenticate('key-alice-0001')).rejects.toMatchObject({ code: 'KEY_REVOKED' });
    await expect(auth.authenticate('key-alice-0001')).rejects.toMatchObject({ code: 'KEY_REVOKED' });
    expect(t.lookups()).toBe(4);
  });

  it('never caches an unknown key or a refusal', async () => {
    const t = table();
    const auth = createCachedAuthenticator(t.inner, { ttlMs: 60_000 });
    for (let i = 0; i < 3; i++) expect(await auth.authenticate('key-unknown-99')).toBeUndefined();
    expect(t.lookups()).toBe(3);
    // a key registered after a miss is accepted at once
    t.keys.set('key-unknown-99', 'user:carol');
    expect(await auth.authenticate('key-unknown-99')).toBe('user:carol');
  });

  it('forget() drops every cached success; ttl 0 disables the cache; size is bounded', async () => {
    const t = table();
    const auth = createCachedAuthenticator(t.inner, { ttlMs: 60_000, maxEntries: 1 });
    await auth.authenticate('key-alice-0001');
    await auth.authenticate('key-bob-000002'); // evicts alice (bound 1)
    await auth.authenticate('key-alice-0001');
    expect(t.lookups()).toBe(3);
    auth.forget();
    t.keys.set('key-alice-0001', 'revoked');
    await expect(auth.authenticate('key-alice-0001')).rejects.toMatchObject({ code: 'KEY_REVOKED' });
    const off = createCachedAuthenticator(t.inner, { ttlMs: 0 });
    await off.authenticate('key-bob-000002');
    await off.authenticate('key-bob-000002');
    expect(t.lookups()).toBe(6);
  });
});
