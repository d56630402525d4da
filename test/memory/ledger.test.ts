import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { KeyFileSource } from '../../src/adapters/keyfile/keyfile.js';
import { systemClock, systemRandom } from '../../src/adapters/system/index.js';
import { generateKeyPair, signerFromSeed, verifyEd25519 } from '../../src/core/crypto/ed25519.js';
import {
  encodeEntryBody,
  encodeSignedEntry,
  signingInput,
  uuidv7,
} from '../../src/core/entry/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { parseCheckpoint, verifyCheckpoint, verifyInclusion } from '../../src/core/merkle/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import type { StorageBackend, StoredEntry } from '../../src/ports/storage.js';
import { ManualClock, MemoryKeySource, SeededRandom } from '../../src/testing/doubles.js';
import { committerOf } from '../../src/memory/log/commit.js';

async function openLedger(storage?: StorageBackend): Promise<Ledger> {
  return Ledger.open({
    storage: storage ?? (await MemoryBackend.open()),
    keys: new MemoryKeySource(),
    clock: new ManualClock(),
    random: new SeededRandom('ledger-test'),
  });
}

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  await expect(p).rejects.toSatisfy((e: unknown) => isMemwardenError(e) && e.code === code);
}

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length > 0) rmSync(dirs.pop()!, { recursive: true, force: true });
});

describe('Ledger write path', () => {
  it('signs, logs and stores an entry that then verifies end to end', async () => {
    const l = await openLedger();
    const alice = await l.registerPrincipal('user', 'alice');
    const r = await committerOf(l).write({
      writer: alice.id,
      content: 'prefers dark mode',
      tier: 'USER_VERIFIED',
      kind: 'fact',
    });
    // Leaf 0 is alice's signed registration (ADR 0033); her entry follows it.
    expect(r.leafIndex).toBe(1);
    expect((await l.storage.getLeaf(0))?.kind).toBe('registry');
    expect(r.entry.ns).toBe(alice.id);
    expect(r.entry.label).toBe('TRUSTED');
    const v = await l.verifyEntry(r.entry.id);
    expect(v.ok).toBe(true);

    const p = await l.proveEntry(r.entry.id);
    const cp = parseCheckpoint(p.checkpoint.note.split('\n\n')[0] + '\n');
    expect(cp.size).toBe(p.treeSize);
    expect(verifyInclusion(p.leafIndex, p.treeSize, p.leafHash, p.hashes, cp.root)).toBe(true);
    expect(l.verifyCheckpointNote(p.checkpoint.note)).toBe(true);
    expect(() =>
      verifyCheckpoint(p.checkpoint.note, l.log.origin, l.checkpointPublicKey, (m, s) =>
        verifyEd25519(l.checkpointPublicKey, m, s),
      ),
    ).not.toThrow();
  });

  it('refuses a tier above the writer kind and writes nothing', async () => {
    const l = await openLedger();
    const agent = await l.registerPrincipal('agent', 'planner');
    await expectCode(
      committerOf(l).write({ writer: agent.id, content: 'x', tier: 'OPERATOR' }),
      'ENTRY_INVALID',
    );
    const ext = await l.registerPrincipal('external', 'web');
    await expectCode(
      committerOf(l).write({ writer: ext.id, content: 'x', tier: 'EXTERNAL_TOOL' }),
      'ENTRY_INVALID',
    );
    expect(l.log.size).toBe(2); // the two registrations only
    expect(await l.storage.listEntries()).toHaveLength(0);
  });

  it('refuses an unknown writer and invalid fields with coded errors', async () => {
    const l = await openLedger();
    await expectCode(
      committerOf(l).write({
        writer: 'user:' + '0'.repeat(32),
        content: 'x',
        tier: 'USER_OBSERVED',
      }),
      'PRINCIPAL_UNKNOWN',
    );
    const u = await l.registerPrincipal('user', 'u');
    await expectCode(
      committerOf(l).write({
        writer: u.id,
        content: 'x',
        tier: 'USER_OBSERVED',
        kind: 'Bad Kind!',
      }),
      'CODEC_INVALID_VALUE',
    );
    await expectCode(
      committerOf(l).write({
        writer: u.id,
        content: 'x',
        tier: 'USER_OBSERVED',
        parents: ['nope'],
        weights: [1],
      }),
      'CODEC_INVALID_VALUE',
    );
    expect(l.log.size).toBe(1); // the registration only
  });

  it('group-commits concurrent writes into one consecutive, unforked log', async () => {
    const storage = await MemoryBackend.open();
    let transactions = 0;
    const counting = Object.assign(Object.create(storage) as StorageBackend, {
      transaction: <T>(fn: (tx: StorageBackend) => Promise<T>) => {
        transactions++;
        return storage.transaction(fn);
      },
    });
    const l = await openLedger(counting);
    const u = await l.registerPrincipal('user', 'u');
    const receipts = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        committerOf(l).write({ writer: u.id, content: `fact ${i}`, tier: 'USER_OBSERVED' }),
      ),
    );
    expect(receipts.map((r) => r.leafIndex).sort((a, b) => a - b)).toEqual(
      receipts.map((_, i) => i + 1),
    );
    expect(l.log.size).toBe(201);
    expect(transactions).toBeLessThan(200);
    const audit = await l.log.audit();
    expect(audit).toBeTruthy();
    for (const r of receipts.slice(0, 20)) expect((await l.verifyEntry(r.entry.id)).ok).toBe(true);
  });

  it('a failed commit rejects its writes and leaves the log consistent', async () => {
    const storage = await MemoryBackend.open();
    let fail = false;
    const flaky = Object.assign(Object.create(storage) as StorageBackend, {
      transaction: <T>(fn: (tx: StorageBackend) => Promise<T>) =>
        storage.transaction(async (tx) => {
          const out = await fn(tx);
          if (fail) throw new Error('disk on fire');
          return out;
        }),
    });
    const l = await openLedger(flaky);
    const u = await l.registerPrincipal('user', 'u');
    await committerOf(l).write({ writer: u.id, content: 'one', tier: 'USER_OBSERVED' });
    fail = true;
    await expect(
      committerOf(l).write({ writer: u.id, content: 'two', tier: 'USER_OBSERVED' }),
    ).rejects.toThrow('disk on fire');
    fail = false;
    const r = await committerOf(l).write({ writer: u.id, content: 'three', tier: 'USER_OBSERVED' });
    expect(r.leafIndex).toBe(2);
    expect((await l.verifyEntry(r.entry.id)).ok).toBe(true);
  });
});

describe('Ledger verification catches tampering at rest', () => {
  async function tampered(mutate: (e: StoredEntry) => StoredEntry) {
    const storage = await MemoryBackend.open();
    const l = await openLedger(storage);
    const u = await l.registerPrincipal('user', 'u');
    const r = await committerOf(l).write({
      writer: u.id,
      content: 'pay the electricity bill to ACME',
      tier: 'USER_VERIFIED',
    });
    const stored = (await storage.getEntry(r.entry.id))!;
    return { l, result: await l.verifyStored(mutate(stored)) };
  }

  it('altered content bytes fail the MAC', async () => {
    const { result } = await tampered((e) => {
      const bytes = e.bytes.slice();
      bytes[bytes.length - 70] = (bytes[bytes.length - 70] ?? 0) ^ 1;
      return { ...e, bytes };
    });
    expect(result).toMatchObject({ ok: false, stage: 'mac', code: 'MAC_INVALID' });
  });

  it('a different leaf position fails inclusion', async () => {
    const { result } = await tampered((e) => ({ ...e, leafIndex: 5 }));
    expect(result.ok).toBe(false);
  });

  it('a re-labelled owner is caught against the signed bytes', async () => {
    const { l, result } = await tampered((e) => ({ ...e, owner: 'user:' + 'f'.repeat(32) }));
    expect(result).toMatchObject({ ok: false, code: 'ENTRY_INVALID' });
    expect(l).toBeTruthy();
  });
});

describe('Ledger keys: rotation, revocation, external signers', () => {
  it('rotation keeps earlier entries verifiable and signs new ones with the new key', async () => {
    const l = await openLedger();
    const u = await l.registerPrincipal('user', 'u');
    const before = await committerOf(l).write({
      writer: u.id,
      content: 'before',
      tier: 'USER_OBSERVED',
    });
    const newKid = await l.rotatePrincipalKey(u.id);
    const after = await committerOf(l).write({
      writer: u.id,
      content: 'after',
      tier: 'USER_OBSERVED',
    });
    expect(after.entry.kid).toBe(newKid);
    expect(before.entry.kid).not.toBe(newKid);
    expect((await l.verifyEntry(before.entry.id)).ok).toBe(true);
    expect((await l.verifyEntry(after.entry.id)).ok).toBe(true);
  });

  it('a revoked key signs nothing new and its earlier entries still verify', async () => {
    const l = await openLedger();
    const u = await l.registerPrincipal('user', 'u');
    const before = await committerOf(l).write({
      writer: u.id,
      content: 'before',
      tier: 'USER_OBSERVED',
    });
    await l.revokeKey(u.kid, 'laptop stolen');
    await expectCode(
      committerOf(l).write({ writer: u.id, content: 'after', tier: 'USER_OBSERVED' }),
      'KEY_REVOKED',
    );
    expect((await l.verifyEntry(before.entry.id)).ok).toBe(true);
  });

  it('accepts an entry signed by its own writer and rejects a forged one, writing nothing', async () => {
    const l = await openLedger();
    const kp = generateKeyPair();
    const p = await l.registerPrincipalKey('external', 'crawler', kp.publicKey);
    const signer = signerFromSeed(kp.seed);
    const kid = (await l.storage.keysOf(p.id))[0]!.kid;
    const rnd = new SeededRandom('ext');
    const body = {
      t: 'entry',
      v: 1,
      id: uuidv7(1_700_000_000_000, rnd.randomBytes(10)),
      ns: p.id,
      writer: p.id,
      kid,
      kind: 'web',
      content: 'ACME raised prices',
      tier: 'EXTERNAL_WEB',
      label: 'EXTERNAL',
      src: new Uint8Array(32),
      ctx: new Uint8Array(32),
      parents: [],
      weights: [],
      ts: 1_700_000_000_000_000_000n + 10n ** 12n,
      nonce: rnd.randomBytes(16),
    } as const;
    const good = encodeSignedEntry({
      ...body,
      sig: signer.sign(signingInput(encodeEntryBody(body))),
    });
    const forged = encodeSignedEntry({
      ...body,
      content: 'ACME lowered prices',
      sig: signer.sign(signingInput(encodeEntryBody(body))),
    });
    await expectCode(committerOf(l).submit(forged), 'ENTRY_SIGNATURE_INVALID');
    expect(l.log.size).toBe(1); // the registration only
    const r = await committerOf(l).submit(good);
    expect((await l.verifyEntry(r.entry.id)).ok).toBe(true);
  });
});

describe('Ledger deletion and durability', () => {
  it('a tombstone is a new signed leaf; the original leaf stays provable', async () => {
    const l = await openLedger();
    const u = await l.registerPrincipal('user', 'u');
    const r = await committerOf(l).write({ writer: u.id, content: 'old address', tier: 'USER_OBSERVED' });
    const t = await committerOf(l).tombstone(r.entry.id, 'moved house', u.id);
    expect(t.leafIndex).toBe(2);
    const leaf = await l.storage.getLeaf(2);
    expect(Buffer.from(leaf!.data.subarray(0, 3)).toString()).toBe('ts:');
    expect(leaf!.kind).toBe('tombstone');
    const p = await l.proveEntry(r.entry.id);
    expect(p.treeSize).toBe(3);
    expect(verifyInclusion(p.leafIndex, p.treeSize, p.leafHash, p.hashes, p.checkpoint.root)).toBe(
      true,
    );
  });

  it('survives close and reopen from the journal and key file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-ledger-'));
    dirs.push(dir);
    const open = async () =>
      Ledger.open({
        storage: await MemoryBackend.open({ journalPath: join(dir, 'journal.jsonl') }),
        keys: new KeyFileSource(dir),
        clock: systemClock,
        random: systemRandom,
      });
    const a = await open();
    const u = await a.registerPrincipal('user', 'u');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await committerOf(a).write({ writer: u.id, content: `n${i}`, tier: 'USER_OBSERVED' }))
          .entry.id,
      );
    const cp1 = await a.checkpoint();
    await a.close();
    const b = await open();
    expect(b.log.size).toBe(6);
    for (const id of ids) expect((await b.verifyEntry(id)).ok).toBe(true);
    await committerOf(b).write({ writer: u.id, content: 'later', tier: 'USER_OBSERVED' });
    const cp2 = await b.checkpoint();
    const proof = await b.log.consistencyProof(cp1.size, cp2.size);
    const { verifyConsistency } = await import('../../src/core/merkle/index.js');
    expect(verifyConsistency(cp1.size, cp2.size, proof, cp1.root, cp2.root)).toBe(true);
    await b.close();
  });
});
