/**
 * MerkleLog over a Map-based LogStore: appends, reopen, proofs (one batched node read, pure
 * lookups at the latest size), conflict handling, checkpoints and the full audit.
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../src/core/bytes.js';
import { type ErrorCode, isMemwardenError } from '../../src/core/errors.js';
import { verifyCheckpoint } from '../../src/core/merkle/checkpoint.js';
import { leafHash } from '../../src/core/merkle/hash.js';
import { consistencyPlan, inclusionPlan, planRefs } from '../../src/core/merkle/plan.js';
import { verifyConsistency, verifyInclusion } from '../../src/core/merkle/verify.js';
import { MerkleLog, type LogLeafInput } from '../../src/memory/log/log.js';
import { mth, path, proof } from '../core/merkle/naive.js';
import { testLeaves } from '../core/merkle/fixtures.js';
import { FakeLogStore } from './helpers-logstore.js';

async function codeOf(p: Promise<unknown>): Promise<ErrorCode | undefined> {
  try {
    await p;
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
  return undefined;
}

const toInputs = (d: readonly Uint8Array[], from = 0): LogLeafInput[] =>
  d.map((data, i) => ({ data, entryId: `e${from + i}`, kind: 'entry' }));

async function logWith(
  n: number,
): Promise<{ store: FakeLogStore; log: MerkleLog; data: Uint8Array[] }> {
  const store = new FakeLogStore();
  const log = await MerkleLog.open(store);
  const data = testLeaves(n, 5);
  for (let i = 0; i < n; i += 10) await log.append(toInputs(data.slice(i, i + 10), i));
  return { store, log, data };
}

function keys() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pub = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
  return {
    signer: {
      keyName: 'memwarden.local/log',
      publicKey: pub,
      sign: (m: Uint8Array) => new Uint8Array(sign(null, m, privateKey)),
    },
    verify: (m: Uint8Array, s: Uint8Array) => verify(null, m, publicKey, s),
    pub,
  };
}

describe('MerkleLog', () => {
  it('empty log: size 0, empty root, proofs rejected with codes', async () => {
    const log = await MerkleLog.open(new FakeLogStore());
    expect(log.size).toBe(0);
    expect(toHex(await log.root())).toBe(toHex(mth([])));
    expect(await codeOf(log.inclusionProof(0))).toBe('LOG_SIZE_INVALID');
    expect(await codeOf(log.root(1))).toBe('LOG_SIZE_INVALID');
    expect(await log.append([])).toEqual({ start: 0, size: 0, leafHashes: [] });
  });

  it('append stores leaves and every completed node atomically; roots match naive MTH', async () => {
    const { store, log, data } = await logWith(37);
    expect(log.size).toBe(37);
    expect(store.leaves.map((l) => l.index)).toEqual([...Array(37).keys()]);
    expect(store.leaves[3]?.hash).toEqual(leafHash(data[3] as Uint8Array));
    // 37 leaves complete 37 + 18 + 9 + 4 + 2 + 1 perfect subtrees (level 0 included).
    expect(store.nodes.size).toBe(71);
    for (let s = 0; s <= 37; s++)
      expect(toHex(await log.root(s))).toBe(toHex(mth(data.slice(0, s))));
  });

  it('every inclusion and consistency proof equals the RFC reference and verifies (sizes ≤ 37)', async () => {
    const { log, data } = await logWith(37);
    for (let n = 1; n <= 37; n++) {
      const root = await log.root(n);
      for (let m = 0; m < n; m++) {
        const p = await log.inclusionProof(m, n);
        expect(p.map(toHex)).toEqual(path(m, data.slice(0, n)).map(toHex));
        expect(verifyInclusion(m, n, leafHash(data[m] as Uint8Array), p, root)).toBe(true);
      }
      for (let m = 1; m < n; m++) {
        const p = await log.consistencyProof(m, n);
        expect(p.map(toHex)).toEqual(proof(m, data.slice(0, n)).map(toHex));
        expect(verifyConsistency(m, n, p, await log.root(m), root)).toBe(true);
      }
    }
  });

  it('a proof reads the planned nodes in one getNodes call; at the latest size only perfect ones', async () => {
    const { store, log } = await logWith(1000);
    store.nodeReads.length = 0;
    await log.inclusionProof(5);
    await log.consistencyProof(300);
    const perfect = (plan: ReturnType<typeof inclusionPlan>) =>
      plan.filter((p) => p.nodes.length === 1).length;
    expect(store.nodeReads).toEqual([
      perfect(inclusionPlan(5, 1000)),
      perfect(consistencyPlan(300, 1000)),
    ]);
    store.nodeReads.length = 0;
    await log.inclusionProof(5, 999);
    expect(store.nodeReads).toEqual([planRefs(inclusionPlan(5, 999)).length]);
  });

  it('reopens from the store with the same frontier and root', async () => {
    const { store, log } = await logWith(45);
    const again = await MerkleLog.open(store);
    expect(again.size).toBe(45);
    expect(await again.root()).toEqual(await log.root());
    await again.append(toInputs(testLeaves(3, 9), 45));
    expect((await again.audit()).size).toBe(48);
  });

  it('another writer moving the log: STORAGE_CONFLICT, state reloaded, next append works', async () => {
    const { store, log } = await logWith(10);
    const other = await MerkleLog.open(store);
    await other.append(toInputs(testLeaves(2, 1), 10));
    expect(await codeOf(log.append(toInputs(testLeaves(1, 2), 12)))).toBe('STORAGE_CONFLICT');
    expect(log.size).toBe(12);
    expect(await log.root()).toEqual(await other.root());
    await log.append(toInputs(testLeaves(1, 2), 12));
    expect(log.size).toBe(13);
    await log.audit();
  });

  it('concurrent appends through one instance are serialised', async () => {
    const log = await MerkleLog.open(new FakeLogStore());
    const data = testLeaves(20, 4);
    const results = await Promise.all(
      data.map((d, i) => log.append([{ data: d, entryId: `e${i}`, kind: 'entry' }])),
    );
    expect(results.map((r) => r.start)).toEqual([...Array(20).keys()]);
    expect(toHex(await log.root())).toBe(toHex(mth(data)));
  });

  it('rejects malformed leaves and out-of-range proofs with codes', async () => {
    const { log } = await logWith(5);
    const bad = { data: 'x', entryId: 'e', kind: 'entry' } as unknown as LogLeafInput;
    expect(await codeOf(log.append([bad]))).toBe('INPUT_INVALID');
    expect(await codeOf(log.inclusionProof(5))).toBe('LOG_INDEX_OUT_OF_RANGE');
    expect(await codeOf(log.inclusionProof(0, 6))).toBe('LOG_SIZE_INVALID');
    expect(await codeOf(log.consistencyProof(0, 5))).toBe('LOG_SIZE_INVALID');
    expect(await codeOf(log.consistencyProof(4, 6))).toBe('LOG_SIZE_INVALID');
  });

  it('a node missing from the store is LOG_CORRUPT, not a crash', async () => {
    const { store, log } = await logWith(16);
    store.nodes.clear();
    expect(await codeOf(log.inclusionProof(3))).toBe('LOG_CORRUPT');
    expect(await codeOf(MerkleLog.open(store))).toBe('LOG_CORRUPT');
  });
});

describe('MerkleLog checkpoints and audit', () => {
  it('signs a C2SP checkpoint, stores it, and is idempotent per size', async () => {
    const { store, log } = await logWith(21);
    const k = keys();
    const cp = await log.checkpoint(k.signer);
    expect(cp.size).toBe(21);
    expect(cp.root).toEqual(await log.root());
    expect(store.checkpoints.get(21)).toBe(cp);
    const parsed = verifyCheckpoint(
      cp.note,
      k.signer.keyName,
      k.pub,
      k.verify,
      'memwarden.local/log',
    );
    expect(parsed).toEqual({
      origin: 'memwarden.local/log',
      size: 21,
      root: cp.root,
      extensions: [],
    });
    expect(await log.checkpoint(k.signer)).toBe(cp);
    const custom = await MerkleLog.open(store, {
      origin: 'example.org/mem',
      clock: { nowNs: () => 42n },
    });
    await custom.append(toInputs(testLeaves(1), 21));
    const cp2 = await custom.checkpoint(k.signer);
    expect(cp2.note.startsWith('example.org/mem\n22\n')).toBe(true);
    expect(cp2.createdAtNs).toBe(42n);
  });

  it('audit recomputes everything and checks checkpoints (with signatures)', async () => {
    const { store, log } = await logWith(50);
    const k = keys();
    await log.checkpoint(k.signer);
    await log.append(toInputs(testLeaves(13, 7), 50));
    await log.checkpoint(k.signer);
    const report = await log.audit({
      checkpointSizes: [50],
      batchSize: 16,
      checkpointKey: { keyName: k.signer.keyName, publicKey: k.pub, verify: k.verify },
    });
    expect(report).toMatchObject({
      size: 63,
      leavesChecked: 63,
      checkpointsChecked: 2,
      nodesChecked: store.nodes.size,
    });
    expect(report.root).toEqual(await log.root());
  });

  it('audit detects a tampered node, leaf, leaf hash or checkpoint: LOG_CORRUPT', async () => {
    const tamper = async (mutate: (s: FakeLogStore) => void): Promise<ErrorCode | undefined> => {
      const { store, log } = await logWith(30);
      await log.checkpoint(keys().signer);
      mutate(store);
      return codeOf(log.audit());
    };
    expect(await tamper(() => undefined)).toBeUndefined();
    expect(
      await tamper((s) => {
        const [k, h] = [...s.nodes.entries()][17] as [number, Uint8Array];
        s.nodes.set(
          k,
          h.map((b, i) => (i === 0 ? b ^ 1 : b)),
        );
      }),
    ).toBe('LOG_CORRUPT');
    expect(
      await tamper((s) => {
        const l = s.leaves[7]!;
        s.leaves[7] = { ...l, data: new Uint8Array([9, 9]) };
      }),
    ).toBe('LOG_CORRUPT');
    expect(
      await tamper((s) => {
        const l = s.leaves[7]!;
        const data = new Uint8Array([9, 9]);
        s.leaves[7] = { ...l, data, hash: leafHash(data) };
      }),
    ).toBe('LOG_CORRUPT');
    expect(
      await tamper((s) => {
        const cp = s.checkpoints.get(30)!;
        s.checkpoints.set(30, { ...cp, root: new Uint8Array(32) });
      }),
    ).toBe('LOG_CORRUPT');
    expect(
      await tamper((s) => {
        const cp = s.checkpoints.get(30)!;
        s.checkpoints.set(30, { ...cp, note: cp.note.replace('\n30\n', '\n31\n') });
      }),
    ).toBe('LOG_CORRUPT');
  });
});
