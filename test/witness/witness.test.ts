/**
 * The witness service in process (Hono app + the real file store in a temp folder) and the
 * log-side publisher talking to it: statuses, durability, the folder lock and key custody,
 * tampering, and a property — a witness never cosigns two inconsistent checkpoints.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKeyPair, signerFromSeed } from '../../src/core/crypto/ed25519.js';
import { type ErrorCode, isMemwardenError, type MemwardenError } from '../../src/core/errors.js';
import {
  formatAddCheckpointRequest,
  formatVerifierKey,
  parseCosignerVerifierKey,
  signCheckpoint,
  verifyCosignatures,
  verifyCosignedCheckpoint,
} from '../../src/core/merkle/index.js';
import {
  WitnessPublisher,
  WitnessStore,
  createWitnessApp,
  loadIdentity,
  witnessedLogs,
} from '../../src/witness/index.js';
import { mth, proof } from '../core/merkle/naive.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'mw-witness-'));
  dirs.push(d);
  return d;
};

const origin = 'memwarden.test/log';
const logSigner = signerFromSeed(generateKeyPair().seed);
const logKey = formatVerifierKey(origin, logSigner.publicKey.raw);
const leaves = (n: number, seed = 0): Uint8Array[] =>
  Array.from({ length: n }, (_, i) => Uint8Array.of(seed, i >> 8, i & 0xff));
const TREE = leaves(64);
const FORK = [...TREE.slice(0, 16), ...leaves(48, 7)];
const note = (size: number, d = TREE, signer = logSigner, o = origin): string =>
  signCheckpoint(
    { origin: o, size, root: mth(d.slice(0, size)), extensions: [] },
    o,
    (m) => signer.sign(m),
    signer.publicKey.raw,
  );
const body = (old: number, size: number, d = TREE, pf?: Uint8Array[]): string =>
  formatAddCheckpointRequest({
    oldSize: old,
    proof: pf ?? (old === 0 || old === size ? [] : proof(old, d.slice(0, size))),
    checkpoint: note(size, d),
  });

async function openWitness(dir = tmp(), name = 'w1.test/witness') {
  const identity = await loadIdentity(dir, name);
  const store = await WitnessStore.open(dir);
  const app = createWitnessApp({
    identity,
    store,
    logs: witnessedLogs([logKey]),
    now: () => 1_700_000_000,
  });
  const post = async (b: string) => {
    const r = await app.request('/add-checkpoint', { method: 'POST', body: b });
    return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() };
  };
  return { dir, identity, store, app, post };
}

function codeOf(fn: () => unknown): ErrorCode | undefined {
  try {
    fn();
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
  return undefined;
}

describe('witness service (tlog-witness add-checkpoint)', () => {
  it('cosigns along consistent growth; the cosignature verifies under its vkey', async () => {
    const w = await openWitness();
    const r1 = await w.post(body(0, 5));
    expect(r1.status).toBe(200);
    const key = parseCosignerVerifierKey(w.identity.vkey);
    expect(verifyCosignatures(note(5) + r1.text, [key])).toEqual([
      { name: 'w1.test/witness', keyId: expect.any(String), timestamp: 1_700_000_000 },
    ]);
    expect((await w.post(body(5, 20))).status).toBe(200);
    expect((await w.post(body(20, 20))).status).toBe(200);
    await w.store.close();
  });

  it('answers 409 with its size as text/x.tlog.size, 422 for bad proofs, 400/403/404', async () => {
    const w = await openWitness();
    expect((await w.post(body(0, 10))).status).toBe(200);
    const conflict = await w.post(body(3, 20));
    expect(conflict).toMatchObject({ status: 409, text: '10\n' });
    expect(conflict.type).toBe('text/x.tlog.size');
    // rollback to a smaller tree
    expect(await w.post(body(10, 5, TREE, []))).toMatchObject({ status: 400 });
    expect(await w.post(body(5, 5))).toMatchObject({ status: 409, text: '10\n' });
    // forged proof; then honest growth past the fork point; then the fork's own honest proof
    const forged = proof(10, TREE.slice(0, 20)).map((h) => new Uint8Array(h));
    forged[0]![3] = (forged[0]![3] ?? 0) ^ 0x40;
    expect((await w.post(body(10, 20, TREE, forged))).status).toBe(422);
    expect((await w.post(body(10, 20))).status).toBe(200);
    expect((await w.post(body(20, 30, FORK))).status).toBe(422);
    expect((await w.post(body(20, 20, FORK))).status).toBe(409);
    // another log's checkpoint; our origin signed by someone else
    const other = signerFromSeed(generateKeyPair().seed);
    expect(
      (
        await w.post(
          formatAddCheckpointRequest({
            oldSize: 0,
            proof: [],
            checkpoint: note(3, TREE, other, 'other.test/log'),
          }),
        )
      ).status,
    ).toBe(404);
    expect(
      (
        await w.post(
          formatAddCheckpointRequest({ oldSize: 0, proof: [], checkpoint: note(3, TREE, other) }),
        )
      ).status,
    ).toBe(403);
    expect((await w.post('old 1\nnonsense')).status).toBe(400);
    expect((await w.post('x'.repeat(200_000))).status).toBe(413);
    // Nothing refused above moved it: it stands at 20.
    expect(await w.store.get(origin)).toMatchObject({ size: 20 });
    await w.store.close();
  });

  it('keeps its state and key across restarts; one process per folder; 0600 key file', async () => {
    const w = await openWitness();
    expect((await w.post(body(0, 12))).status).toBe(200);
    await expect(WitnessStore.open(w.dir)).rejects.toMatchObject({ code: 'STORAGE_FAILED' });
    await w.store.close();
    const again = await openWitness(w.dir);
    expect(again.identity.vkey).toBe(w.identity.vkey);
    expect(await again.post(body(0, 13))).toMatchObject({ status: 409, text: '12\n' });
    expect((await again.post(body(12, 13))).status).toBe(200);
    expect(statSync(join(w.dir, 'witness-key.json')).mode & 0o777).toBe(0o600);
    await expect(loadIdentity(w.dir, 'other.test/name')).rejects.toMatchObject({
      code: 'INPUT_INVALID',
    });
    await again.store.close();
  });
});

describe('WitnessPublisher (the log side)', () => {
  const consistency = async (from: number, to: number) => proof(from, TREE.slice(0, to));

  it('pushes, learns the witness size from a 409 after a restart, and attaches verified lines', async () => {
    const w = await openWitness();
    const w2 = await openWitness(tmp(), 'w2.test/witness');
    const endpoints = [w, w2].map((x) => ({
      url: 'http://w',
      key: parseCosignerVerifierKey(x.identity.vkey),
      app: x.app,
    }));
    const fetchVia = (i: number): typeof fetch =>
      ((u: string, init?: RequestInit) =>
        endpoints[i]!.app.request(new URL(u).pathname, init)) as typeof fetch;
    const mk = () =>
      [0, 1].map(
        (i) =>
          new WitnessPublisher({
            witnesses: [{ url: endpoints[i]!.url, key: endpoints[i]!.key }],
            consistency,
            fetch: fetchVia(i),
          }),
      );
    const vkeys = [w.identity.vkey, w2.identity.vkey];
    let [p1, p2] = mk();
    const both = async (size: number) => {
      const a = await p1!.cosign({ size, note: note(size) });
      const b = await p2!.cosign({ size, note: note(size) });
      return note(size) + a.slice(note(size).length) + b.slice(note(size).length);
    };
    expect(
      verifyCosignedCheckpoint(await both(7), { logKey, witnesses: vkeys, minCosignatures: 2 })
        .cosignatures,
    ).toHaveLength(2);
    expect(
      verifyCosignedCheckpoint(await both(30), { logKey, witnesses: vkeys, minCosignatures: 2 })
        .cosignatures,
    ).toHaveLength(2);
    // A fresh publisher (log restarted) knows nothing: old 0 → 409 "30" → retry from 30.
    [p1, p2] = mk();
    expect(
      verifyCosignedCheckpoint(await both(41), { logKey, witnesses: vkeys, minCosignatures: 2 })
        .cosignatures,
    ).toHaveLength(2);
    expect(await w.store.get(origin)).toMatchObject({ size: 41 });
    await w.store.close();
    await w2.store.close();
  });

  it('never attaches a tampered or foreign cosignature, and skips a witness that is ahead', async () => {
    const w = await openWitness();
    const key = parseCosignerVerifierKey(w.identity.vkey);
    const errors: MemwardenError[] = [];
    const tamper: typeof fetch = (async (u: string, init?: RequestInit) => {
      const r = await w.app.request(new URL(u).pathname, init);
      const t = await r.text();
      // flip one base64 character of the signature
      const bad = r.status === 200 ? t.slice(0, 60) + (t[60] === 'A' ? 'B' : 'A') + t.slice(61) : t;
      return new Response(bad, { status: r.status, headers: r.headers });
    }) as typeof fetch;
    const p = new WitnessPublisher({
      witnesses: [{ url: 'http://w', key }],
      consistency,
      fetch: tamper,
      onError: (_, e) => errors.push(e),
    });
    expect(await p.cosign({ size: 9, note: note(9) })).toBe(note(9));
    expect(errors.map((e) => e.code)).toEqual(['LOG_COSIGNATURE_INVALID']);
    // A publisher that trusts another key for this URL attaches nothing either.
    const stranger = parseCosignerVerifierKey((await loadIdentity(tmp(), 'w1.test/witness')).vkey);
    const errs2: string[] = [];
    const p2 = new WitnessPublisher({
      witnesses: [{ url: 'http://w', key: stranger }],
      consistency,
      fetch: ((u: string, init?: RequestInit) =>
        w.app.request(new URL(u).pathname, init)) as typeof fetch,
      onError: (_, e) => errs2.push(e.code),
    });
    expect(await p2.cosign({ size: 10, note: note(10) })).toBe(note(10));
    expect(errs2).toEqual(['LOG_COSIGNATURE_INVALID']);
    // The witness is now at 10 (it cosigned, we refused the line); a stale size-8 checkpoint is skipped.
    const p3 = new WitnessPublisher({
      witnesses: [{ url: 'http://w', key }],
      consistency,
      fetch: ((u: string, init?: RequestInit) =>
        w.app.request(new URL(u).pathname, init)) as typeof fetch,
      onError: (_, e) => errs2.push(e.code),
    });
    expect(await p3.cosign({ size: 8, note: note(8) })).toBe(note(8));
    expect(errs2).toEqual(['LOG_COSIGNATURE_INVALID']);
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(note(8), {
          logKey,
          witnesses: [w.identity.vkey],
          minCosignatures: 1,
        }),
      ),
    ).toBe('LOG_COSIGNATURES_INSUFFICIENT');
    await w.store.close();
  });
});

describe('property: a witness never cosigns two inconsistent checkpoints', () => {
  it('holds for random request sequences over a tree and its fork', async () => {
    // A request: which tree, which size, which old size (honest, random, or the witness's),
    // and whether to forge the proof.
    const step = fc.record({
      fork: fc.boolean(),
      size: fc.integer({ min: 0, max: 64 }),
      old: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 64 })),
      forge: fc.integer({ min: -1, max: 8 }),
    });
    // Non-vacuity: runs must both cosign past the fork point and see fork attempts refused.
    let cosignedBeyond = 0;
    let forkRefused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const w = await openWitness();
        const cosigned: { size: number; fork: boolean }[] = [];
        let known = 0;
        try {
          for (const s of steps) {
            const d = s.fork ? FORK : TREE;
            const old = s.old === -1 ? Math.min(known, s.size) : s.old;
            let pf: Uint8Array[] = [];
            if (old > 0 && old < s.size) {
              // the proof from `old` in the same tree the checkpoint is from
              pf = proof(old, d.slice(0, s.size)).map((h) => new Uint8Array(h));
              const target = pf[s.forge];
              if (target !== undefined) target[0] = (target[0] ?? 0) ^ 1;
            }
            const r = await w.post(
              formatAddCheckpointRequest({ oldSize: old, proof: pf, checkpoint: note(s.size, d) }),
            );
            if (r.status === 200) {
              cosigned.push({ size: s.size, fork: s.fork });
              known = s.size;
            } else if (r.status === 409) known = Number(r.text);
            const first = cosigned.find((c) => c.size > 16);
            if (r.status !== 200 && first !== undefined && first.fork !== s.fork && s.size > 16)
              forkRefused++;
          }
        } finally {
          await w.store.close();
        }
        // Sizes never go backwards.
        for (let i = 1; i < cosigned.length; i++)
          expect(cosigned[i]!.size).toBeGreaterThanOrEqual(cosigned[i - 1]!.size);
        // TREE and FORK agree up to 16 leaves: beyond that, the witness may have cosigned
        // checkpoints from one of them only.
        const beyond = cosigned.filter((c) => c.size > 16);
        cosignedBeyond += beyond.length;
        expect(new Set(beyond.map((c) => c.fork)).size).toBeLessThanOrEqual(1);
      }),
      { numRuns: 60 },
    );
    expect(cosignedBeyond).toBeGreaterThan(0);
    expect(forkRefused).toBeGreaterThan(0);
  }, 120_000);
});
