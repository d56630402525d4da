/**
 * C2SP signed notes and tlog checkpoints. The external vector is the example key and note of
 * golang.org/x/mod/sumdb/note (package documentation): key "PeterNeumann", private seed
 * `AYEKFALV…` → vkey `PeterNeumann+c74f20a3+ARpc2QcU…` and a known signature line; Ed25519
 * is deterministic, so our signer must reproduce it byte for byte.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { toBase64 } from '../../../src/core/bytes.js';
import { type ErrorCode, isMemwardenError } from '../../../src/core/errors.js';
import {
  formatCheckpoint,
  parseCheckpoint,
  signCheckpoint,
  verifyCheckpoint,
} from '../../../src/core/merkle/checkpoint.js';
import { leafHash } from '../../../src/core/merkle/hash.js';
import {
  formatVerifierKey,
  noteKeyId,
  parseNote,
  parseVerifierKey,
  signNote,
  verifyNote,
} from '../../../src/core/merkle/note.js';

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

function signer(priv: KeyObject) {
  return (m: Uint8Array): Uint8Array => new Uint8Array(sign(null, m, priv));
}
function verifier(pub: Uint8Array) {
  const key = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pub]),
    format: 'der',
    type: 'spki',
  });
  return (m: Uint8Array, s: Uint8Array): boolean => verify(null, m, key, s);
}

// golang.org/x/mod/sumdb/note example key and signed note.
const GO_SKEY_SEED = Buffer.from('AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz', 'base64').subarray(
  1,
);
const GO_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const GO_TEXT =
  "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE =
  GO_TEXT +
  '\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';

describe('signed note (golang.org/x/mod/sumdb/note example)', () => {
  const { priv, pub } = keyFromSeed(GO_SKEY_SEED);

  it('vkey and key ID', () => {
    expect(formatVerifierKey('PeterNeumann', pub)).toBe(GO_VKEY);
    const parsed = parseVerifierKey(GO_VKEY);
    expect(parsed.publicKey).toEqual(pub);
    expect(Buffer.from(noteKeyId('PeterNeumann', pub)).toString('hex')).toBe('c74f20a3');
  });

  it('signs byte-identically and verifies', () => {
    expect(signNote(GO_TEXT, 'PeterNeumann', signer(priv), pub)).toBe(GO_NOTE);
    expect(verifyNote(GO_NOTE, 'PeterNeumann', pub, verifier(pub))).toBe(GO_TEXT);
  });

  it('ignores unknown signers; fails on a bad signature from the trusted key', () => {
    const other = generateKeyPairSync('ed25519');
    const otherPub = new Uint8Array(
      other.publicKey.export({ format: 'der', type: 'spki' }).subarray(12),
    );
    const otherLine = signNote(GO_TEXT, 'someone.else', signer(other.privateKey), otherPub).slice(
      GO_TEXT.length + 1,
    );
    const cosigned = GO_NOTE + otherLine;
    expect(verifyNote(cosigned, 'PeterNeumann', pub, verifier(pub))).toBe(GO_TEXT);
    expect(
      codeOf(() => verifyNote(GO_TEXT + '\n' + otherLine, 'PeterNeumann', pub, verifier(pub))),
    ).toBe('LOG_CHECKPOINT_SIGNATURE_INVALID');
    const tampered = GO_NOTE.replace('cryptography', 'cryptograpHy');
    expect(codeOf(() => verifyNote(tampered, 'PeterNeumann', pub, verifier(pub)))).toBe(
      'LOG_CHECKPOINT_SIGNATURE_INVALID',
    );
    // Same name, wrong key: key ID differs, so the signature is ignored → no trusted signature.
    expect(codeOf(() => verifyNote(GO_NOTE, 'PeterNeumann', otherPub, verifier(otherPub)))).toBe(
      'LOG_CHECKPOINT_SIGNATURE_INVALID',
    );
  });

  it('rejects malformed notes with LOG_CHECKPOINT_MALFORMED', () => {
    const bad = [
      GO_TEXT, // no signature block
      GO_NOTE.slice(0, -1), // no final newline
      GO_NOTE.replace('— ', '-- '),
      GO_NOTE.replace('— PeterNeumann ', '— PeterNeumann  '),
      GO_NOTE.replace('x08go', 'x08go!'),
      GO_NOTE.replace('If you', 'If\tyou'),
      GO_NOTE + '\n',
      GO_TEXT + '\n— PeterNeumann AAAA\n', // too short
      GO_NOTE.replace('If', '\ud800'),
    ];
    for (const n of bad) expect(codeOf(() => parseNote(n))).toBe('LOG_CHECKPOINT_MALFORMED');
    expect(codeOf(() => parseNote('x'.repeat(70_000) + '\n\n— a b\n'))).toBe(
      'LOG_CHECKPOINT_MALFORMED',
    );
  });

  it('rejects bad key names and keys', () => {
    expect(codeOf(() => noteKeyId('a+b', pub))).toBe('KEY_INVALID');
    expect(codeOf(() => noteKeyId('a b', pub))).toBe('KEY_INVALID');
    expect(codeOf(() => noteKeyId('', pub))).toBe('KEY_INVALID');
    expect(codeOf(() => noteKeyId('a', pub.subarray(1)))).toBe('KEY_INVALID');
    expect(codeOf(() => parseVerifierKey(GO_VKEY.replace('c74f20a3', 'c74f20a4')))).toBe(
      'KEY_INVALID',
    );
    expect(codeOf(() => parseVerifierKey('PeterNeumann+c74f20a3'))).toBe('KEY_INVALID');
  });
});

describe('tlog checkpoint', () => {
  const root = leafHash(new Uint8Array([1, 2, 3]));
  const cp = { origin: 'memwarden.local/log', size: 20852163, root, extensions: [] as string[] };

  it('formats per c2sp.org/tlog-checkpoint and round-trips', () => {
    const text = formatCheckpoint(cp);
    expect(text).toBe(`memwarden.local/log\n20852163\n${toBase64(root)}\n`);
    expect(parseCheckpoint(text)).toEqual(cp);
    const ext = { ...cp, extensions: ['ext one', 'ext two'] };
    expect(parseCheckpoint(formatCheckpoint(ext))).toEqual(ext);
    expect(parseCheckpoint(formatCheckpoint({ ...cp, size: 0 })).size).toBe(0);
  });

  it('parses the spec example body', () => {
    const got = parseCheckpoint(
      'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n',
    );
    expect(got.origin).toBe('example.com/behind-the-sofa');
    expect(got.size).toBe(20852163);
    expect(got.root).toHaveLength(32);
  });

  it('strict parser rejects anything off', () => {
    const r = toBase64(root);
    const bad = [
      `o\n020\n${r}\n`, // leading zero
      `o\n+20\n${r}\n`,
      `o\n 20\n${r}\n`,
      `o\n2e3\n${r}\n`,
      `o\n9007199254740993\n${r}\n`, // beyond 2^53
      `o\n20\n${r}`, // no final newline
      `o\n20\n`, // missing root
      `\n20\n${r}\n`, // empty origin
      `o\n20\n${toBase64(root.subarray(1))}\n`, // 31-byte root
      `o\n20\n${r.slice(0, -1)}\n`, // not padded base64
      `o\n20\n${r}\n\n`, // empty extension line
      `o\n20\n${r}\nx\ty\n`,
      `o\r\n20\n${r}\n`,
    ];
    for (const t of bad) expect(codeOf(() => parseCheckpoint(t))).toBe('LOG_CHECKPOINT_MALFORMED');
    expect(codeOf(() => formatCheckpoint({ ...cp, root: root.subarray(1) }))).toBe(
      'LOG_CHECKPOINT_MALFORMED',
    );
    expect(codeOf(() => formatCheckpoint({ ...cp, origin: 'a\nb' }))).toBe(
      'LOG_CHECKPOINT_MALFORMED',
    );
    expect(codeOf(() => formatCheckpoint({ ...cp, size: -1 }))).toBe('LOG_CHECKPOINT_MALFORMED');
  });

  it('signs and verifies with an Ed25519 key from node:crypto', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pub = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(12));
    const note = signCheckpoint(cp, cp.origin, signer(privateKey), pub);
    expect(note.startsWith(formatCheckpoint(cp) + '\n— memwarden.local/log ')).toBe(true);
    expect(verifyCheckpoint(note, cp.origin, pub, verifier(pub), cp.origin)).toEqual(cp);
    expect(codeOf(() => verifyCheckpoint(note, cp.origin, pub, verifier(pub), 'other/log'))).toBe(
      'LOG_CHECKPOINT_MALFORMED',
    );
    const forged = note.replace('20852163', '20852164');
    expect(codeOf(() => verifyCheckpoint(forged, cp.origin, pub, verifier(pub)))).toBe(
      'LOG_CHECKPOINT_SIGNATURE_INVALID',
    );
  });
});

describe('verifier keys whose base64 contains "+"', () => {
  it('round-trips through formatVerifierKey / parseVerifierKey', async () => {
    const { formatVerifierKey: fmt, parseVerifierKey: parse } =
      await import('../../../src/core/merkle/index.js');
    let found = 0;
    for (let i = 0; i < 200 && found < 5; i++) {
      const pk = new Uint8Array(32).map((_, j) => (i * 31 + j * 7) & 0xff);
      const vkey = fmt('example.com/log', pk);
      if (!vkey.split('+')[2]?.length || vkey.split('+').length <= 3) continue;
      found++;
      expect(parse(vkey).publicKey).toEqual(pk);
    }
    expect(found).toBeGreaterThan(0);
  });
});
