/**
 * The console's in-browser verifier (src/console/verify.ts), run here under Node's WebCrypto:
 * the vendored RFC 6962 / RFC 9162 vectors (every valid case passes, every invalid one fails,
 * a flipped bit fails), and checkpoints signed by memwarden's own note code verify while a
 * tampered note, a foreign key or a mismatched origin fail.
 */
import { describe, expect, it } from 'vitest';
import { fromHex, toBase64 } from '../../src/core/bytes.js';
import { signerFromSeed } from '../../src/core/crypto/ed25519.js';
import { formatVerifierKey, leafHash, signCheckpoint } from '../../src/core/merkle/index.js';
import {
  checkConsistency,
  checkInclusion,
  ed25519Supported,
  parseVerifierKey,
  verifyCheckpointNote,
  verifyConsistency,
  verifyInclusion,
} from '../../src/console/verify.js';
import { MapTree, hexes, vectors } from '../core/merkle/fixtures.js';

const flip = (b: Uint8Array, bit = 0): Uint8Array => {
  const c = Uint8Array.from(b);
  c[bit >> 3] = (c[bit >> 3] as number) ^ (1 << (bit & 7));
  return c;
};

describe('RFC 9162 proofs in the console verifier', () => {
  it('agrees with every vendored inclusion vector', async () => {
    const cases = [...vectors.inclusion, ...vectors.derived.inclusion].filter((c) => !c.policyDependent);
    expect(cases.length).toBeGreaterThan(50);
    for (const c of cases) {
      const ok = await verifyInclusion(c.leafIndex, c.treeSize, fromHex(c.leafHash), hexes(c.proof), fromHex(c.root));
      expect(ok, c.id ?? c.desc).toBe(c.valid);
    }
  });

  it('agrees with every vendored consistency vector', async () => {
    const cases = [...vectors.consistency, ...vectors.derived.consistency].filter(
      (c) => !c.policyDependent && c.size1 > 0,
    );
    expect(cases.length).toBeGreaterThan(20);
    for (const c of cases) {
      const ok = await verifyConsistency(c.size1, c.size2, hexes(c.proof), fromHex(c.root1), fromHex(c.root2));
      expect(ok, c.id ?? c.desc).toBe(c.valid);
    }
  });

  it('accepts every proof of a 37-leaf tree and rejects each with one flipped bit', async () => {
    const data = Array.from({ length: 37 }, (_, i) => Uint8Array.of(i, i * 7));
    const t = new MapTree(data);
    for (const n of [1, 2, 5, 16, 37]) {
      const root = t.roots[n] as Uint8Array;
      for (const i of [0, Math.floor(n / 2), n - 1]) {
        const proof = t.inclusion(i, n);
        const leaf = leafHash(data[i] as Uint8Array);
        expect(await verifyInclusion(i, n, leaf, proof, root)).toBe(true);
        expect(await verifyInclusion(i, n, flip(leaf, 9), proof, root)).toBe(false);
        if (proof.length > 0)
          expect(await verifyInclusion(i, n, leaf, [flip(proof[0] as Uint8Array, 200), ...proof.slice(1)], root)).toBe(false);
      }
      for (const m of [1, 3, 8, n]) {
        if (m > n) continue;
        const proof = t.consistency(m, n);
        expect(await verifyConsistency(m, n, proof, t.roots[m] as Uint8Array, root), `${m}→${n}`).toBe(true);
        if (proof.length > 0)
          expect(await verifyConsistency(m, n, proof.map((p, k) => (k === 0 ? flip(p, 3) : p)), t.roots[m] as Uint8Array, root)).toBe(false);
        expect(await verifyConsistency(m, n, proof, flip(t.roots[m] as Uint8Array), root)).toBe(false);
      }
    }
  });
});

describe('checkpoint notes in the console verifier', () => {
  const origin = 'memwarden.test/log';
  const signer = signerFromSeed(new Uint8Array(32).fill(7));
  const pk = signer.publicKey.raw;
  const vkey = formatVerifierKey(origin, pk);
  const root = new Uint8Array(32).fill(9);
  const note = signCheckpoint({ origin, size: 5, root, extensions: [] }, origin, (m) => signer.sign(m), pk);

  it('has WebCrypto Ed25519 here (Node ≥ 20), as the browser must', async () => {
    expect(await ed25519Supported()).toBe(true);
  });

  it('verifies a note signed by memwarden and rejects tampering, another key and another origin', async () => {
    const k = await parseVerifierKey(vkey);
    expect((await verifyCheckpointNote(note, k)).size).toBe(5);
    await expect(verifyCheckpointNote(note.replace('\n5\n', '\n6\n'), k)).rejects.toThrow(/signature/);
    const other = signerFromSeed(new Uint8Array(32).fill(8));
    const k2 = await parseVerifierKey(formatVerifierKey(origin, other.publicKey.raw));
    await expect(verifyCheckpointNote(note, k2)).rejects.toThrow(/no signature by the log key/);
    const foreign = signCheckpoint({ origin: 'evil/log', size: 5, root, extensions: [] }, origin, (m) => signer.sign(m), pk);
    await expect(verifyCheckpointNote(foreign, k)).rejects.toThrow(/origin/);
    await expect(parseVerifierKey(vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).rejects.toThrow();
  });

  it('checkInclusion passes a real proof and names the failing step of a tampered one', async () => {
    const id = '01890a5d-ac96-774b-bcce-b302099a8057';
    const idBytes = fromHex(id.replace(/-/g, ''));
    const sig = new Uint8Array(64).fill(1);
    const leafData = new Uint8Array([...idBytes, ...sig]);
    const t = new MapTree([Uint8Array.of(1), Uint8Array.of(2), leafData, Uint8Array.of(4)]);
    const n = 4;
    const cp = signCheckpoint({ origin, size: n, root: t.roots[n] as Uint8Array, extensions: [] }, origin, (m) => signer.sign(m), pk);
    const proof = {
      leafIndex: 2,
      treeSize: n,
      leafHash: toBase64(leafHash(leafData)),
      hashes: t.inclusion(2, n).map(toBase64),
      checkpoint: { size: n, root: toBase64(t.roots[n] as Uint8Array), note: cp },
    };
    const entry = { id, leafIndex: 2, leafData: toBase64(leafData) };
    const good = await checkInclusion(entry, proof, vkey);
    expect(good.map((c) => c.ok)).toEqual([true, true, true]);
    const badPath = await checkInclusion(entry, { ...proof, hashes: [toBase64(flip(fromHex('00'.repeat(32)))), ...proof.hashes.slice(1)] }, vkey);
    expect(badPath.map((c) => c.ok)).toEqual([true, true, false]);
    const badNote = await checkInclusion(entry, { ...proof, checkpoint: { ...proof.checkpoint, note: cp.replace(/ [A-Za-z0-9+/]{10}/, ' AAAAAAAAAA') } }, vkey);
    expect(badNote[1]?.ok).toBe(false);
    const otherEntry = await checkInclusion({ ...entry, id: '01890a5d-ac96-774b-bcce-b302099a8058' }, proof, vkey);
    expect(otherEntry[0]?.ok).toBe(false);
    expect(otherEntry[2]?.ok).toBe(false);
  });

  it('checkConsistency verifies growth between two signed roots and fails a rewrite', async () => {
    const t = new MapTree(Array.from({ length: 9 }, (_, i) => Uint8Array.of(i)));
    const prev = { vkey, size: 3, root: toBase64(t.roots[3] as Uint8Array), note: '' };
    const latest = { origin, size: 9, root: t.roots[9] as Uint8Array };
    const proof = { from: 3, to: 9, hashes: t.consistency(3, 9).map(toBase64) };
    expect((await checkConsistency(prev, latest, proof)).ok).toBe(true);
    const forked = new MapTree(Array.from({ length: 9 }, (_, i) => Uint8Array.of(i === 1 ? 99 : i)));
    const p2 = { from: 3, to: 9, hashes: forked.consistency(3, 9).map(toBase64) };
    expect((await checkConsistency(prev, { ...latest, root: forked.roots[9] as Uint8Array }, p2)).ok).toBe(false);
  });
});
