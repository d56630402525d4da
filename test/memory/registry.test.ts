import { beforeEach, describe, expect, it } from 'vitest';
import { isMemwardenError } from '../../src/core/errors.js';
import {
  generateKeyPair,
  signerFromSeed,
  type Ed25519Signer,
} from '../../src/core/crypto/ed25519.js';
import { keyIdFor, principalIdFor } from '../../src/core/crypto/ids.js';
import { rotationStatement, VerifierRegistry } from '../../src/memory/identity/registry.js';
import { FakeClock, FakeRegistryStore } from './helpers-registrystore.js';

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return isMemwardenError(e) ? e.code : 'NOT_CODED';
  }
  return undefined;
}

function newSigner(): Ed25519Signer {
  return signerFromSeed(generateKeyPair().seed);
}

const T0 = 1_000_000_000_000n;
const SEC = 1_000_000_000n;
const msg = new TextEncoder().encode('canonical entry bytes');

let store: FakeRegistryStore;
let clock: FakeClock;
let reg: VerifierRegistry;
let alice: Ed25519Signer;
let aliceId: string;
let aliceKid: string;

beforeEach(async () => {
  store = new FakeRegistryStore();
  clock = new FakeClock(T0);
  reg = new VerifierRegistry(store, clock);
  alice = newSigner();
  const p = await reg.register('agent', 'alice', alice.publicKey.raw);
  aliceId = p.id;
  aliceKid = keyIdFor(alice.publicKey.raw);
});

function snapshot(): string {
  const ser = (_k: string, v: unknown) =>
    typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v;
  return JSON.stringify({ p: [...store.principals.entries()], k: [...store.keys.entries()] }, ser);
}

async function rotateAlice(next: Ed25519Signer, at: bigint, by: Ed25519Signer = alice) {
  const newKid = keyIdFor(next.publicKey.raw);
  const signature = by.sign(rotationStatement(aliceId, newKid, at));
  return reg.rotate(aliceId, next.publicKey.raw, { atNs: at, signature });
}

describe('register (MemLineage §4.5)', () => {
  it('derives the id from the key and opens the key now', async () => {
    expect(aliceId).toBe(principalIdFor('agent', alice.publicKey.raw));
    const k = await reg.resolveKey(aliceKid);
    expect(k).toMatchObject({
      kid: aliceKid,
      principalId: aliceId,
      alg: 'ed25519',
      validFromNs: T0,
    });
    expect(k?.publicKey).toEqual(alice.publicKey.raw);
    expect(await store.getPrincipal(aliceId)).toEqual({
      id: aliceId,
      kind: 'agent',
      name: 'alice',
      createdAtNs: T0,
    });
  });

  it('re-registering the same key is PRINCIPAL_ALREADY_REGISTERED and changes nothing', async () => {
    const before = snapshot();
    clock.now = T0 + SEC;
    expect(await codeOf(reg.register('agent', 'mallory', alice.publicKey.raw))).toBe(
      'PRINCIPAL_ALREADY_REGISTERED',
    );
    // Same key under another kind: different principal id but the kid exists.
    expect(await codeOf(reg.register('user', 'mallory', alice.publicKey.raw))).toBe(
      'PRINCIPAL_ALREADY_REGISTERED',
    );
    expect(snapshot()).toBe(before);
  });

  it('concurrent registrations of one key: exactly one wins', async () => {
    const k = newSigner().publicKey.raw;
    const results = await Promise.allSettled([
      reg.register('tool', 'a', k),
      reg.register('tool', 'b', k),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rej = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(isMemwardenError(rej.reason, 'PRINCIPAL_ALREADY_REGISTERED')).toBe(true);
  });

  it('refuses invalid keys and names', async () => {
    expect(await codeOf(reg.register('agent', 'x', new Uint8Array(31)))).toBe('KEY_INVALID');
    const smallOrder = new Uint8Array(32);
    smallOrder[0] = 1; // identity point
    expect(await codeOf(reg.register('agent', 'x', smallOrder))).toBe('KEY_INVALID');
    expect(await codeOf(reg.register('agent', 'x'.repeat(257), newSigner().publicKey.raw))).toBe(
      'INPUT_INVALID',
    );
    expect(await codeOf(reg.register('root' as 'agent', 'x', newSigner().publicKey.raw))).toBe(
      'PRINCIPAL_INVALID',
    );
  });
});

describe('verifyFor', () => {
  it('accepts a good signature in the validity window', async () => {
    expect(await reg.verifyFor(aliceId, aliceKid, T0, msg, alice.sign(msg))).toEqual({ ok: true });
    expect(
      await reg.verifyFor(aliceId, aliceKid, T0 + 100n * SEC, msg, alice.sign(msg), {
        leafIndex: 3,
      }),
    ).toEqual({
      ok: true,
    });
  });

  it('ENTRY_SIGNATURE_INVALID for a bad signature or message', async () => {
    const sig = alice.sign(msg);
    const bad = new Uint8Array(sig);
    bad[10]! ^= 1;
    expect(await reg.verifyFor(aliceId, aliceKid, T0, msg, bad)).toEqual({
      ok: false,
      code: 'ENTRY_SIGNATURE_INVALID',
    });
    expect(await reg.verifyFor(aliceId, aliceKid, T0, new Uint8Array(1), sig)).toEqual({
      ok: false,
      code: 'ENTRY_SIGNATURE_INVALID',
    });
    expect(await reg.verifyFor(aliceId, aliceKid, T0, msg, sig.subarray(0, 10))).toEqual({
      ok: false,
      code: 'ENTRY_SIGNATURE_INVALID',
    });
  });

  it('KEY_UNKNOWN for unknown, malformed, or another principal’s kid', async () => {
    const bob = newSigner();
    const bobP = await reg.register('user', 'bob', bob.publicKey.raw);
    const bobKid = keyIdFor(bob.publicKey.raw);
    const sig = bob.sign(msg);
    expect(await reg.verifyFor(bobP.id, bobKid, T0, msg, sig)).toEqual({ ok: true });
    // Bob's valid signature presented as Alice's entry.
    expect(await reg.verifyFor(aliceId, bobKid, T0, msg, sig)).toEqual({
      ok: false,
      code: 'KEY_UNKNOWN',
    });
    expect(await reg.verifyFor(aliceId, '0123456789abcdef', T0, msg, sig)).toEqual({
      ok: false,
      code: 'KEY_UNKNOWN',
    });
    expect(await reg.verifyFor(aliceId, 'not-a-kid', T0, msg, sig)).toEqual({
      ok: false,
      code: 'KEY_UNKNOWN',
    });
  });

  it('PRINCIPAL_UNKNOWN when the key names a principal that is not registered', async () => {
    const ghost = newSigner();
    const ghostId = principalIdFor('tool', ghost.publicKey.raw);
    const kid = keyIdFor(ghost.publicKey.raw);
    await store.insertKey({
      kid,
      principalId: ghostId,
      alg: 'ed25519',
      publicKey: ghost.publicKey.raw,
      validFromNs: 0n,
    });
    expect(await reg.verifyFor(ghostId, kid, T0, msg, ghost.sign(msg))).toEqual({
      ok: false,
      code: 'PRINCIPAL_UNKNOWN',
    });
  });

  it('KEY_NOT_YET_VALID before the key was registered', async () => {
    expect(await reg.verifyFor(aliceId, aliceKid, T0 - 1n, msg, alice.sign(msg))).toEqual({
      ok: false,
      code: 'KEY_NOT_YET_VALID',
    });
  });

  it('a store that rebinds a kid to another key verifies nothing (even with a warm cache)', async () => {
    expect((await reg.verifyFor(aliceId, aliceKid, T0, msg, alice.sign(msg))).ok).toBe(true);
    const mallory = newSigner();
    const rec = store.keys.get(aliceKid)!;
    store.keys.set(aliceKid, { ...rec, publicKey: mallory.publicKey.raw });
    expect(await reg.verifyFor(aliceId, aliceKid, T0, msg, mallory.sign(msg))).toEqual({
      ok: false,
      code: 'KEY_UNKNOWN',
    });
    expect(await reg.verifyFor(aliceId, aliceKid, T0, msg, alice.sign(msg))).toEqual({
      ok: false,
      code: 'KEY_UNKNOWN',
    });
    // A fresh registry (cold cache) reaches the same verdict.
    const cold = new VerifierRegistry(store, clock);
    expect(await cold.verifyFor(aliceId, aliceKid, T0, msg, mallory.sign(msg))).toEqual({
      ok: false,
      code: 'KEY_UNKNOWN',
    });
  });
});

describe('rotate', () => {
  it('keeps old entries verifiable under the old kid; old key fails after; new key works', async () => {
    const oldSig = alice.sign(msg);
    const next = newSigner();
    const at = T0 + 10n * SEC;
    clock.now = at;
    const rec = await rotateAlice(next, at);
    const newKid = keyIdFor(next.publicKey.raw);
    expect(rec).toMatchObject({ kid: newKid, principalId: aliceId, validFromNs: at });
    expect((await reg.resolveKey(aliceKid))?.validUntilNs).toBe(at);

    expect(await reg.verifyFor(aliceId, aliceKid, at - 1n, msg, oldSig)).toEqual({ ok: true });
    expect(await reg.verifyFor(aliceId, aliceKid, at, msg, alice.sign(msg))).toEqual({
      ok: false,
      code: 'KEY_EXPIRED',
    });
    expect(await reg.verifyFor(aliceId, aliceKid, at + SEC, msg, oldSig)).toEqual({
      ok: false,
      code: 'KEY_EXPIRED',
    });
    expect(await reg.verifyFor(aliceId, newKid, at, msg, next.sign(msg))).toEqual({ ok: true });
    expect(await reg.verifyFor(aliceId, newKid, at - 1n, msg, next.sign(msg))).toEqual({
      ok: false,
      code: 'KEY_NOT_YET_VALID',
    });
    // The principal id does not change with rotation.
    expect((await store.listPrincipals()).map((p) => p.id)).toEqual([aliceId]);
  });

  it('the next rotation must be signed by the new current key, not the old one', async () => {
    const k2 = newSigner();
    const k3 = newSigner();
    clock.now = T0 + 10n * SEC;
    await rotateAlice(k2, clock.now);
    clock.now += SEC;
    const before = snapshot();
    expect(await codeOf(rotateAlice(k3, clock.now, alice))).toBe('ENTRY_SIGNATURE_INVALID');
    expect(snapshot()).toBe(before);
    await rotateAlice(k3, clock.now, k2);
    expect((await store.keysOf(aliceId)).filter((k) => k.validUntilNs === undefined)).toHaveLength(
      1,
    );
  });

  it('a bad proof is ENTRY_SIGNATURE_INVALID and changes nothing', async () => {
    const next = newSigner();
    const at = T0 + 10n * SEC;
    clock.now = at;
    const newKid = keyIdFor(next.publicKey.raw);
    const before = snapshot();
    const cases = [
      next.sign(rotationStatement(aliceId, newKid, at)), // signed by the new key
      alice.sign(rotationStatement(aliceId, newKid, at + 1n)), // other instant
      alice.sign(rotationStatement(aliceId, '0000000000000000', at)), // other kid
      alice.sign(msg), // not a rotation statement
      new Uint8Array(64),
      new Uint8Array(3),
    ];
    for (const signature of cases) {
      expect(await codeOf(reg.rotate(aliceId, next.publicKey.raw, { atNs: at, signature }))).toBe(
        'ENTRY_SIGNATURE_INVALID',
      );
    }
    expect(snapshot()).toBe(before);
  });

  it('refuses unknown principals, invalid or reused keys and out-of-range instants', async () => {
    const next = newSigner();
    clock.now = T0 + 10n * SEC;
    const sig = new Uint8Array(64);
    const other = principalIdFor('agent', next.publicKey.raw);
    expect(
      await codeOf(reg.rotate(other, next.publicKey.raw, { atNs: clock.now, signature: sig })),
    ).toBe('PRINCIPAL_UNKNOWN');
    expect(
      await codeOf(
        reg.rotate('agent:xyz', next.publicKey.raw, { atNs: clock.now, signature: sig }),
      ),
    ).toBe('PRINCIPAL_INVALID');
    expect(await codeOf(rotateAlice(alice, clock.now))).toBe('KEY_INVALID'); // its own key
    const before = snapshot();
    expect(await codeOf(rotateAlice(next, T0))).toBe('KEY_INVALID'); // not after validFrom
    expect(await codeOf(rotateAlice(next, clock.now + 3600n * SEC))).toBe('KEY_INVALID'); // far future
    clock.now = T0 + 3600n * SEC;
    expect(await codeOf(rotateAlice(next, T0 + SEC))).toBe('KEY_INVALID'); // far past
    expect(snapshot()).toBe(before);
  });

  it('KEY_REVOKED when the current key has been revoked', async () => {
    clock.now = T0 + 10n * SEC;
    await reg.revoke(aliceKid, 'stolen', { atNs: T0 + 5n * SEC });
    expect(await codeOf(rotateAlice(newSigner(), clock.now))).toBe('KEY_REVOKED');
  });
});

describe('revoke', () => {
  it('nothing signed at or after revocation verifies; earlier entries still do', async () => {
    const early = alice.sign(msg);
    const rAt = T0 + 10n * SEC;
    await reg.revoke(aliceKid, 'compromised', { atNs: rAt });
    const k = await reg.resolveKey(aliceKid);
    expect(k).toMatchObject({
      revokedAtNs: rAt,
      validUntilNs: rAt,
      revocationReason: 'compromised',
    });
    expect(await reg.verifyFor(aliceId, aliceKid, T0 + SEC, msg, early)).toEqual({ ok: true });
    expect(await reg.verifyFor(aliceId, aliceKid, rAt, msg, alice.sign(msg))).toEqual({
      ok: false,
      code: 'KEY_REVOKED',
    });
    expect(await reg.verifyFor(aliceId, aliceKid, rAt + SEC, msg, early)).toEqual({
      ok: false,
      code: 'KEY_REVOKED',
    });
  });

  it('a log-size revocation defeats backdated timestamps from a stolen key', async () => {
    const rAt = T0 + 10n * SEC;
    await reg.revoke(aliceKid, 'stolen', { atNs: rAt, logSize: 100 });
    const forged = alice.sign(msg); // thief signs later but claims an early time
    expect(
      await reg.verifyFor(aliceId, aliceKid, T0 + SEC, msg, forged, { leafIndex: 100 }),
    ).toEqual({
      ok: false,
      code: 'KEY_REVOKED',
    });
    expect(
      await reg.verifyFor(aliceId, aliceKid, T0 + SEC, msg, forged, { leafIndex: 5000 }),
    ).toEqual({
      ok: false,
      code: 'KEY_REVOKED',
    });
    // Genuine old entries committed before the revocation point still verify.
    expect(
      await reg.verifyFor(aliceId, aliceKid, T0 + SEC, msg, forged, { leafIndex: 99 }),
    ).toEqual({ ok: true });
    // Without a log position the registry cannot tell: fail closed.
    expect(await reg.verifyFor(aliceId, aliceKid, T0 + SEC, msg, forged)).toEqual({
      ok: false,
      code: 'KEY_REVOKED',
    });
    expect(
      await reg.verifyFor(aliceId, aliceKid, T0 + SEC, msg, forged, { leafIndex: -1 }),
    ).toEqual({
      ok: false,
      code: 'KEY_REVOKED',
    });
  });

  it('revoking a rotated key keeps its rotation end and adds the revocation', async () => {
    const next = newSigner();
    const at = T0 + 10n * SEC;
    clock.now = at;
    await rotateAlice(next, at);
    await reg.revoke(aliceKid, 'old laptop', { atNs: at + 5n * SEC, logSize: 7 });
    expect(await reg.resolveKey(aliceKid)).toMatchObject({
      validUntilNs: at,
      revokedAtNs: at + 5n * SEC,
      revokedAtLogSize: 7,
    });
  });

  it('errors: unknown kid, already revoked, bad options', async () => {
    expect(await codeOf(reg.revoke('0123456789abcdef', 'x', { atNs: T0 }))).toBe('KEY_UNKNOWN');
    expect(await codeOf(reg.revoke('junk', 'x', { atNs: T0 }))).toBe('KEY_UNKNOWN');
    expect(await codeOf(reg.revoke(aliceKid, 'x', { atNs: -1n }))).toBe('INPUT_INVALID');
    expect(await codeOf(reg.revoke(aliceKid, 'x', { atNs: T0, logSize: 1.5 }))).toBe(
      'INPUT_INVALID',
    );
    expect(await codeOf(reg.revoke(aliceKid, 'x'.repeat(2000), { atNs: T0 }))).toBe(
      'INPUT_INVALID',
    );
    await reg.revoke(aliceKid, 'x', { atNs: T0 + SEC });
    const before = snapshot();
    expect(await codeOf(reg.revoke(aliceKid, 'again', { atNs: T0 + 2n * SEC }))).toBe(
      'KEY_REVOKED',
    );
    expect(snapshot()).toBe(before);
  });

  it('a revocation written by another registry instance is honoured at once (records not cached)', async () => {
    expect((await reg.verifyFor(aliceId, aliceKid, T0 + 20n * SEC, msg, alice.sign(msg))).ok).toBe(
      true,
    );
    await new VerifierRegistry(store, clock).revoke(aliceKid, 'elsewhere', {
      atNs: T0 + 10n * SEC,
    });
    expect(await reg.verifyFor(aliceId, aliceKid, T0 + 20n * SEC, msg, alice.sign(msg))).toEqual({
      ok: false,
      code: 'KEY_REVOKED',
    });
  });
});

describe('fake store honours the port rules', () => {
  it('closeKey never changes a set field', async () => {
    await store.closeKey(aliceKid, { validUntilNs: T0 + 1n });
    expect(await codeOf(store.closeKey(aliceKid, { validUntilNs: T0 + 2n }))).toBe(
      'STORAGE_CONFLICT',
    );
    expect(await codeOf(store.insertKey((await store.getKey(aliceKid))!))).toBe('STORAGE_CONFLICT');
  });
});
