/**
 * C2SP tlog-cosignature (Ed25519 cosignature/v1).
 *
 * Fixed vectors:
 * - sigsum-go pkg/checkpoint/checkpoint_test.go (TestCheckpointCosignVerify /
 *   TestCheckpointVerifyCosignatureByKey): private key {17, 0, …}, witness name
 *   `example.org/witness`, timestamp 1234, checkpoint `example.org/log` / 10 / `HA5H…`. Ed25519
 *   is deterministic, so our cosigner must reproduce sigsum's line byte for byte.
 * - transparency-dev/formats note/note_cosigv1_test.go: the native type-0x04 vkey
 *   `remora.n621.de+da77ade7+…` (its key ID is the 0x04 key-ID algorithm) and the timestamp
 *   vector `ZGhGuQAAAABm…` → 1727964367.
 * - the C2SP tlog-cosignature example line `jWbPPwAAAABkGFDL…`, whose timestamp 1679315147 is
 *   the `time 1679315147` of the spec's signed-message example.
 */
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromBase64, toHex } from '../../../src/core/bytes.js';
import { signerFromSeed, generateKeyPair } from '../../../src/core/crypto/ed25519.js';
import { type ErrorCode, isMemwardenError } from '../../../src/core/errors.js';
import {
  COSIGNATURE_V1_TYPE,
  cosignCheckpoint,
  cosignatureKeyId,
  cosignatureMessage,
  cosignatureTimestamp,
  formatCheckpoint,
  formatCosignerVerifierKey,
  formatVerifierKey,
  parseCosignerVerifierKey,
  parseNote,
  signCheckpoint,
  verifyCosignatures,
  verifyCosignedCheckpoint,
} from '../../../src/core/merkle/index.js';

function codeOf(fn: () => unknown): ErrorCode | undefined {
  try {
    fn();
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
  return undefined;
}

function keyFromSeed(seed: Uint8Array): { priv: KeyObject; pub: Uint8Array } {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const priv = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(priv).export({ format: 'der', type: 'spki' });
  return { priv, pub: new Uint8Array(spki.subarray(12)) };
}

// sigsum-go: crypto.NewEd25519Signer(&crypto.PrivateKey{17}) — a 32-byte seed 17, 0, 0, …
const SIGSUM_SEED = new Uint8Array(32);
SIGSUM_SEED[0] = 17;
const SIGSUM_ROOT = new Uint8Array(32);
SIGSUM_ROOT.set([28, 14, 71]); // crypto.Hash{28, 14, 71}, base64 "HA5H…"
const SIGSUM_TEXT = 'example.org/log\n10\nHA5HAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
const SIGSUM_LINES = [
  // different key ID (ignored)
  '— example.org/witness yX8uUAAAAAAAAATSftMzceM8zssdZ9jin9SjwIxzx9iADMf63VqirX2hafol9RsqNqbofIz0LVRqHXI2kpEBSki5RTXFtxz1vo9+Cg==',
  // the valid cosignature produced by TestCheckpointCosignVerify
  '— example.org/witness ys8uUAAAAAAAAATSftMzceM8zssdZ9jin9SjwIxzx9iADMf63VqirX2hafol9RsqNqbofIz0LVRqHXI2kpEBSki5RTXFtxz1vo9+Cg==',
  // different key name (ignored)
  '— example.org/witness-2 ys8uUAAAAAAAAATSftMzceM8zssdZ9jin9SjwIxzx9iADMf63VqirX2hafol9RsqNqbofIz0LVRqHXI2kpEBSki5RTXFtxz1vo9+Cg==',
];
// trusted name and key ID, wrong signature size (sigsum skips it; a known key's bad signature
// is an error for us, as in golang.org/x/mod/sumdb/note)
const SIGSUM_BAD_SIZE =
  '— example.org/witness ys8uUAAAAAAAAATSftMzceM8zssdZ9jin9SjwIxzx9iADMf63VqirX2hafol9RsqNqbofIz0LVRqHXI2kpEBSki5RTXFtxz1vo9+CgXX';

describe('cosignature/v1 fixed vectors', () => {
  const { priv, pub } = keyFromSeed(SIGSUM_SEED);
  const cosigner = {
    name: 'example.org/witness',
    publicKey: pub,
    sign: (m: Uint8Array) => new Uint8Array(sign(null, m, priv)),
  };

  it('reproduces sigsum-go’s cosignature line byte for byte', () => {
    expect(
      formatCheckpoint({ origin: 'example.org/log', size: 10, root: SIGSUM_ROOT, extensions: [] }),
    ).toBe(SIGSUM_TEXT);
    const line = cosignCheckpoint(SIGSUM_TEXT, cosigner, 1234);
    expect(line).toBe(`${SIGSUM_LINES[1]}\n`);
    expect(toHex(cosignatureKeyId('example.org/witness', pub))).toBe(toHex(fromBase64('ys8uUA==')));
  });

  it('verifies sigsum-go’s lines: unknown key IDs and names are ignored', () => {
    const key = parseCosignerVerifierKey(formatCosignerVerifierKey('example.org/witness', pub));
    const note = `${SIGSUM_TEXT}\n${SIGSUM_LINES.join('\n')}\n`;
    expect(verifyCosignatures(note, [key])).toEqual([
      { name: 'example.org/witness', keyId: toHex(key.keyId), timestamp: 1234 },
    ]);
    // A bad-size line from the trusted key is an error, not a skip.
    expect(
      codeOf(() => verifyCosignatures(`${note.slice(0, -1)}\n${SIGSUM_BAD_SIZE}\n`, [key])),
    ).toBe('LOG_COSIGNATURE_INVALID');
  });

  it('parses transparency-dev’s native cosigner vkey and refuses a type 0x01 log key', () => {
    const k = parseCosignerVerifierKey(
      'remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2',
    );
    expect(k.name).toBe('remora.n621.de');
    expect(toHex(k.keyId)).toBe('da77ade7');
    // Go converts Ed25519 note keys; we refuse them: a log key is not a witness key.
    expect(
      codeOf(() =>
        parseCosignerVerifierKey('TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6'),
      ),
    ).toBe('KEY_INVALID');
    for (const bad of [
      'bananas.sigstore.dev+12344556',
      'rekor.sigstore.dev+12345678+THIS_IS_NOT_BASE64!',
      'rekor.sigstore.dev+12345678+AwEB',
      'remora.n621.de+00000000+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2',
      'remora.n621.de+DA77ADE7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2',
      'other.name+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2',
    ]) {
      expect(codeOf(() => parseCosignerVerifierKey(bad))).toBe('KEY_INVALID');
    }
  });

  it('reads the timestamps of the C2SP example and transparency-dev’s vector', () => {
    const ts = (b64: string): number => cosignatureTimestamp(fromBase64(b64).subarray(4));
    expect(
      ts(
        'jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==',
      ),
    ).toBe(1679315147);
    expect(
      ts(
        'ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWWOworDcFiEBYJXORmnFBOBA==',
      ),
    ).toBe(1727964367);
    // "wrong type of signature": a 0x01 note signature (key ID + 64 bytes) has no timestamp.
    expect(
      codeOf(() =>
        ts(
          'eQjRQm6eSKzFoiYalgwCPXu2y3ijtg68is9M46JKxuZB+dRfTmeQeDBoXnvxZx2ugnkyV+MUMLXpWs1hPb/W/4xkNQY=',
        ),
      ),
    ).toBe('LOG_COSIGNATURE_INVALID');
  });

  it('signs the spec’s message layout: header, time line, whole body', () => {
    const text =
      'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
    expect(new TextDecoder().decode(cosignatureMessage(text, 1679315147))).toBe(
      'cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n',
    );
    expect(COSIGNATURE_V1_TYPE).toBe(4);
  });
});

describe('cosigned checkpoints under a client policy', () => {
  const logSigner = signerFromSeed(generateKeyPair().seed);
  const origin = 'memwarden.test/log';
  const logKey = formatVerifierKey(origin, logSigner.publicKey.raw);
  const witnesses = [1, 2, 3].map((i) => {
    const s = signerFromSeed(generateKeyPair().seed);
    return {
      name: `w${i}.test/witness`,
      publicKey: s.publicKey.raw,
      sign: (m: Uint8Array) => s.sign(m),
    };
  });
  const vkeys = witnesses.map((w) => formatCosignerVerifierKey(w.name, w.publicKey));
  const root = (b: number): Uint8Array => new Uint8Array(32).fill(b);
  const note = (size: number, r = root(size), ext: string[] = []): string =>
    signCheckpoint(
      { origin, size, root: r, extensions: ext },
      origin,
      (m) => logSigner.sign(m),
      logSigner.publicKey.raw,
    );
  const cosign = (n: string, who: number[], ts = 1_700_000_000): string => {
    const text = parseNote(n).text;
    return n + who.map((i) => cosignCheckpoint(text, witnesses[i]!, ts)).join('');
  };

  it('accepts N distinct cosignatures and reports them', () => {
    const r = verifyCosignedCheckpoint(cosign(note(5), [0, 2]), {
      logKey,
      witnesses: vkeys,
      minCosignatures: 2,
    });
    expect(r.checkpoint.size).toBe(5);
    expect(r.cosignatures.map((c) => c.name)).toEqual(['w1.test/witness', 'w3.test/witness']);
  });

  it('refuses too few cosignatures with a coded error', () => {
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(cosign(note(5), [1]), {
          logKey,
          witnesses: vkeys,
          minCosignatures: 2,
        }),
      ),
    ).toBe('LOG_COSIGNATURES_INSUFFICIENT');
    // The same witness twice counts once.
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(cosign(note(5), [1, 1]), {
          logKey,
          witnesses: vkeys,
          minCosignatures: 2,
        }),
      ),
    ).toBe('LOG_COSIGNATURES_INSUFFICIENT');
  });

  it('counts one public key once even when configured under two names', () => {
    const w = witnesses[0]!;
    const alias = { ...w, name: 'alias.test/witness' };
    const n = note(6);
    const text = parseNote(n).text;
    const twice = n + cosignCheckpoint(text, w, 1) + cosignCheckpoint(text, alias, 1);
    const keys = [vkeys[0]!, formatCosignerVerifierKey(alias.name, alias.publicKey), vkeys[1]!];
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(twice, { logKey, witnesses: keys, minCosignatures: 2 }),
      ),
    ).toBe('LOG_COSIGNATURES_INSUFFICIENT');
  });

  it('a replayed cosignature (from another checkpoint) fails', () => {
    const old = cosign(note(5), [0]);
    const line = old.trimEnd().split('\n').pop()!;
    const replay = `${note(6)}${line}\n`;
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(replay, { logKey, witnesses: vkeys, minCosignatures: 1 }),
      ),
    ).toBe('LOG_COSIGNATURE_INVALID');
  });

  it('the cosignature covers extension lines and the timestamp', () => {
    const n = cosign(note(7, root(7), ['ext-a']), [0]);
    const tampered = n.replace('ext-a', 'ext-b');
    // The log signature breaks first; re-sign the log part to isolate the cosignature.
    const lines = tampered.split('\n');
    const cos = lines[lines.length - 2]!;
    const relogged = `${note(7, root(7), ['ext-b'])}${cos}\n`;
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(relogged, { logKey, witnesses: vkeys, minCosignatures: 1 }),
      ),
    ).toBe('LOG_COSIGNATURE_INVALID');
    // Change the timestamp bytes: the signature no longer matches.
    const sig = fromBase64(cos.split(' ')[2]!);
    sig[11] = (sig[11] ?? 0) ^ 1;
    const bumped = `${note(7, root(7), ['ext-a'])}— ${witnesses[0]!.name} ${Buffer.from(sig).toString('base64')}\n`;
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(bumped, { logKey, witnesses: vkeys, minCosignatures: 1 }),
      ),
    ).toBe('LOG_COSIGNATURE_INVALID');
  });

  it('refuses another log’s checkpoint, a wrong log key and future timestamps', () => {
    const other = signerFromSeed(generateKeyPair().seed);
    const foreign = signCheckpoint(
      { origin: 'other.test/log', size: 5, root: root(5), extensions: [] },
      'other.test/log',
      (m) => other.sign(m),
      other.publicKey.raw,
    );
    const t = parseNote(foreign).text;
    const cosigned = foreign + cosignCheckpoint(t, witnesses[0]!, 1);
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(cosigned, { logKey, witnesses: vkeys, minCosignatures: 1 }),
      ),
    ).toBe('LOG_CHECKPOINT_SIGNATURE_INVALID');
    // Right key, origin pinned to something else.
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(cosign(note(5), [0]), {
          logKey,
          witnesses: vkeys,
          minCosignatures: 1,
          origin: 'other.test/log',
        }),
      ),
    ).toBe('LOG_CHECKPOINT_MALFORMED');
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(cosign(note(5), [0], 2_000), {
          logKey,
          witnesses: vkeys,
          minCosignatures: 1,
          now: 1_000,
        }),
      ),
    ).toBe('LOG_COSIGNATURE_INVALID');
    expect(
      verifyCosignedCheckpoint(cosign(note(5), [0], 1_030), {
        logKey,
        witnesses: vkeys,
        minCosignatures: 1,
        now: 1_000,
      }).cosignatures,
    ).toHaveLength(1);
  });

  it('refuses a policy that can never be met and bad witness keys', () => {
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(note(1), { logKey, witnesses: vkeys, minCosignatures: 4 }),
      ),
    ).toBe('INPUT_INVALID');
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(note(1), { logKey, witnesses: vkeys, minCosignatures: -1 }),
      ),
    ).toBe('INPUT_INVALID');
    expect(
      codeOf(() =>
        verifyCosignedCheckpoint(note(1), { logKey, witnesses: [logKey], minCosignatures: 1 }),
      ),
    ).toBe('KEY_INVALID');
    // minCosignatures 0: the log signature alone.
    expect(
      verifyCosignedCheckpoint(note(1), { logKey, witnesses: [], minCosignatures: 0 }).checkpoint
        .size,
    ).toBe(1);
  });
});
