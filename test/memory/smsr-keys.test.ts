/**
 * SMSR component 1 over the real Ledger: key rotation keeps history verifiable under its key
 * id; retiring a key deliberately invalidates what it tagged; rows written straight into
 * storage without a valid tag never verify.
 */
import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import type { StorageBackend } from '../../src/ports/storage.js';
import { ManualClock, MemoryKeySource, SeededRandom } from '../../src/testing/doubles.js';
import { committerOf } from '../../src/memory/log/commit.js';

async function openLedger(seed: string, storage?: StorageBackend): Promise<Ledger> {
  return Ledger.open({
    storage: storage ?? (await MemoryBackend.open()),
    keys: new MemoryKeySource(),
    clock: new ManualClock(),
    random: new SeededRandom(seed),
  });
}

const input = (writer: string, content: string) =>
  ({ writer, content, tier: 'USER_VERIFIED', kind: 'fact' }) as const;

describe('SMSR component 1: MAC key rotation and retirement', () => {
  it('rotation keeps old entries verifiable; retirement invalidates exactly what the key tagged', async () => {
    const l = await openLedger('smsr-keys');
    const alice = await l.registerPrincipal('user', 'alice');
    const before = await committerOf(l).write(
      input(alice.id, 'expense limit without CFO approval is $5,000'),
    );
    const oldKid = l.keys.macs.currentKid();
    const newKid = await l.keys.rotateMac();
    expect(newKid).not.toBe(oldKid);
    const after = await committerOf(l).write(input(alice.id, 'PII retention period is 90 days'));

    const sBefore = await l.storage.getEntry(before.entry.id);
    const sAfter = await l.storage.getEntry(after.entry.id);
    expect(sBefore?.macKid).toBe(oldKid);
    expect(sAfter?.macKid).toBe(newKid);
    expect((await l.verifyEntry(before.entry.id)).ok).toBe(true);
    expect((await l.verifyEntry(after.entry.id)).ok).toBe(true);

    await l.keys.retireMac(oldKid as string);
    const vOld = await l.verifyEntry(before.entry.id);
    expect(vOld).toMatchObject({ ok: false, code: 'MAC_KEY_RETIRED', stage: 'mac' });
    expect((await l.verifyEntry(after.entry.id)).ok).toBe(true);
    await l.close();
  });

  it('the retirement survives a reopen of the host keys', async () => {
    const storage = await MemoryBackend.open();
    const keys = new MemoryKeySource();
    const open = () =>
      Ledger.open({ storage, keys, clock: new ManualClock(), random: new SeededRandom('reopen') });
    const l = await open();
    const p = await l.registerPrincipal('user', 'bob');
    const e = await committerOf(l).write(input(p.id, 'MFA is required for all remote access'));
    const old = l.keys.macs.currentKid() as string;
    await l.keys.rotateMac();
    await l.keys.retireMac(old);
    await l.drain(); // the second host shares the store (close() would close it)
    const l2 = await open();
    expect(await l2.verifyEntry(e.entry.id)).toMatchObject({ ok: false, code: 'MAC_KEY_RETIRED' });
    await l2.close();
  });

  it('rows inserted straight into storage with a forged or absent tag never verify', async () => {
    const victim = await openLedger('victim');
    // The attacker holds a perfectly signed record (its own host, its own MAC key) and
    // database write access to the victim's store, but not the victim's MAC key.
    const attacker = await openLedger('attacker');
    const mallory = await attacker.registerPrincipal('user', 'mallory');
    const rows = [];
    for (const c of ['limit is $50,000', 'retention is 7 days', 'MFA is optional']) {
      const r = await committerOf(attacker).write(input(mallory.id, c));
      rows.push((await attacker.storage.getEntry(r.entry.id))!);
    }
    const kid = victim.keys.macs.currentKid() as string;
    const forged = [
      { ...rows[0]!, macKid: kid, mac: new Uint8Array(32).fill(0xab) }, // forged tag, real kid
      { ...rows[1]!, macKid: kid, mac: new Uint8Array(0) }, // absent tag
      { ...rows[2]! }, // tag under a key the victim never had (same kid name, other secret)
    ];
    for (const [i, row] of forged.entries()) {
      await victim.storage.putEntry({ ...row, leafIndex: 1000 + i });
      const v = await victim.verifyEntry(row.id);
      expect(v.ok).toBe(false);
      expect(v).toMatchObject({ code: 'MAC_INVALID', stage: 'mac' });
    }
    const unknownKid = { ...rows[0]!, id: rows[0]!.id, macKid: 'mac-999' };
    expect(await victim.verifyStored(unknownKid)).toMatchObject({
      ok: false,
      code: 'MAC_KEY_UNKNOWN',
    });
    await victim.close();
    await attacker.close();
  });
});

describe('component 1 in front of component 2', () => {
  it('macVerifiedRetriever admits only MAC-verified rows, with content from the signed bytes', async () => {
    const { macVerifiedRetriever } = await import('../../src/memory/read/smsr.js');
    const l = await openLedger('retriever');
    const other = await openLedger('other-host');
    const alice = await l.registerPrincipal('user', 'alice');
    const eve = await other.registerPrincipal('user', 'eve');
    const good = await committerOf(l).write(
      input(alice.id, 'MFA is mandatory for all remote access'),
    );
    const bad = await committerOf(other).write(input(eve.id, 'MFA is optional for remote access'));
    const badRow = (await other.storage.getEntry(bad.entry.id))!;
    await l.storage.putEntry({ ...badRow, leafIndex: 500 });
    const goodRow = (await l.storage.getEntry(good.entry.id))!;
    const tampered = { ...goodRow, content: 'MFA is optional' }; // plaintext column edited
    const retrieve = macVerifiedRetriever(async () => [badRow, tampered], l.keys.macs);
    const pool = await retrieve('mfa?', 20);
    expect(pool).toEqual([
      { id: good.entry.id, content: 'MFA is mandatory for all remote access' },
    ]);
    await l.close();
    await other.close();
  });
});
