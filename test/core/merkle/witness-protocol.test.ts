/**
 * C2SP tlog-witness add-checkpoint: the request format (the spec's example body as a fixed
 * vector) and the witness's decision, status by status, with roots and consistency proofs
 * from the naive RFC 6962 reference (./naive.ts).
 */
import { describe, expect, it } from 'vitest';
import { toBase64 } from '../../../src/core/bytes.js';
import { generateKeyPair, signerFromSeed } from '../../../src/core/crypto/ed25519.js';
import { type ErrorCode, isMemwardenError } from '../../../src/core/errors.js';
import {
  type WitnessedLog,
  authenticateCheckpoint,
  decideAddCheckpoint,
  formatAddCheckpointRequest,
  parseAddCheckpointRequest,
  parseTreeSizeBody,
  signCheckpoint,
} from '../../../src/core/merkle/index.js';
import { mth, proof } from './naive.js';

function codeOf(fn: () => unknown): ErrorCode | undefined {
  try {
    fn();
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
  return undefined;
}

/** Deterministic leaf inputs (fixtures.ts reads the shared vectors; not needed here). */
function testLeaves(n: number, seed = 0): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => Uint8Array.of(seed, i, (i * 31 + seed) & 0xff));
}

// tlog-witness §add-checkpoint, "Example request body".
const SPEC_BODY = `old 20852014
PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=
jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=
5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=
/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=

example.com/behind-the-sofa
20852163
CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=

— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=
— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=
`;

describe('add-checkpoint request format', () => {
  it('parses the spec’s example body and formats it back byte for byte', () => {
    const r = parseAddCheckpointRequest(SPEC_BODY);
    expect(r.oldSize).toBe(20852014);
    expect(r.proof.map(toBase64)).toEqual([
      'PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=',
      'jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=',
      '5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=',
      '/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=',
    ]);
    expect(r.checkpoint.startsWith('example.com/behind-the-sofa\n20852163\n')).toBe(true);
    expect(formatAddCheckpointRequest(r)).toBe(SPEC_BODY);
  });

  it('refuses malformed bodies with WITNESS_REQUEST_MALFORMED', () => {
    const [head, rest] = [
      SPEC_BODY.slice(0, SPEC_BODY.indexOf('\n')),
      SPEC_BODY.slice(SPEC_BODY.indexOf('\n')),
    ];
    const hash = 'PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n';
    const note = SPEC_BODY.slice(SPEC_BODY.indexOf('\n\n') + 2);
    for (const bad of [
      '',
      'old 1',
      `old 01${rest}`,
      `old -1${rest}`,
      `old  1${rest}`,
      `Old 1${rest}`,
      `${head}\nnot base64!\n\n${note}`,
      `${head}\nAAAA\n\n${note}`, // 3 bytes, not 32
      `${head}\n${hash}${note}`, // no empty line
      `old 5\n${hash.repeat(64)}\n${note}`, // 64 proof lines
      `${head}\n\nnot a checkpoint\n`,
      `${head}\n\nexample.com/x\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n`, // unsigned
    ]) {
      expect(
        codeOf(() => parseAddCheckpointRequest(bad)),
        JSON.stringify(bad),
      ).toBe('WITNESS_REQUEST_MALFORMED');
    }
    expect(parseAddCheckpointRequest(`old 5\n${hash.repeat(63)}\n${note}`).proof).toHaveLength(63);
    expect(
      codeOf(() =>
        formatAddCheckpointRequest({ oldSize: 0, proof: [new Uint8Array(32)], checkpoint: note }),
      ),
    ).toBe('WITNESS_REQUEST_MALFORMED');
  });

  it('parses the 409 text/x.tlog.size body strictly', () => {
    expect(parseTreeSizeBody('20852014\n')).toBe(20852014);
    expect(parseTreeSizeBody('0\n')).toBe(0);
    for (const bad of ['', '12', '012\n', '-1\n', '1 \n', '99999999999999999999\n'])
      expect(codeOf(() => parseTreeSizeBody(bad))).toBe('WITNESS_REQUEST_MALFORMED');
  });
});

describe('the witness decision', () => {
  const origin = 'memwarden.test/log';
  const s = signerFromSeed(generateKeyPair().seed);
  const logs = new Map<string, WitnessedLog>([
    [origin, { origin, keys: [{ keyName: origin, publicKey: s.publicKey.raw }] }],
  ]);
  const leaves = testLeaves(40);
  const fork = [...leaves.slice(0, 20), ...testLeaves(20, 99)];
  const sign = (size: number, d = leaves, o = origin, signer = s): string =>
    signCheckpoint(
      { origin: o, size, root: mth(d.slice(0, size)), extensions: [] },
      o,
      (m) => signer.sign(m),
      signer.publicKey.raw,
    );
  const req = (
    old: number,
    size: number,
    d = leaves,
    pf = old === 0 || old === size ? [] : proof(old, d.slice(0, size)),
  ) =>
    parseAddCheckpointRequest(
      formatAddCheckpointRequest({ oldSize: old, proof: pf, checkpoint: sign(size, d) }),
    );
  const decide = (r: ReturnType<typeof req>, state?: { size: number; root: Uint8Array }) => {
    const a = authenticateCheckpoint(r, logs);
    if (!a.ok) throw new Error('unexpected auth failure');
    return decideAddCheckpoint(r, a.checkpoint, state);
  };
  const st = (size: number, d = leaves) => ({ size, root: mth(d.slice(0, size)) });

  it('404 for an unknown origin, 403 when no trusted key signed', () => {
    const other = signerFromSeed(generateKeyPair().seed);
    const foreign = parseAddCheckpointRequest(
      formatAddCheckpointRequest({
        oldSize: 0,
        proof: [],
        checkpoint: sign(3, leaves, 'other.test/log', other),
      }),
    );
    expect(authenticateCheckpoint(foreign, logs)).toMatchObject({ ok: false, status: 404 });
    const impostor = parseAddCheckpointRequest(
      formatAddCheckpointRequest({
        oldSize: 0,
        proof: [],
        checkpoint: sign(3, leaves, origin, other),
      }),
    );
    expect(authenticateCheckpoint(impostor, logs)).toMatchObject({ ok: false, status: 403 });
  });

  it('200 from nothing, then along consistent growth', () => {
    expect(decide(req(0, 5))).toMatchObject({ status: 200, next: { size: 5 } });
    expect(decide(req(5, 12), st(5))).toMatchObject({ status: 200, next: { size: 12 } });
    expect(decide(req(12, 12), st(12))).toMatchObject({ status: 200, next: { size: 12 } });
  });

  it('400 when old exceeds the checkpoint size', () => {
    const r = parseAddCheckpointRequest(
      formatAddCheckpointRequest({ oldSize: 9, proof: [], checkpoint: sign(5) }),
    );
    expect(decide(r, st(9))).toMatchObject({ status: 400 });
  });

  it('409 with the known size on a wrong old size, or a rollback', () => {
    expect(decide(req(0, 12), st(5))).toMatchObject({ status: 409, knownSize: 5 });
    expect(decide(req(3, 12), st(5))).toMatchObject({ status: 409, knownSize: 5 });
    expect(decide(req(5, 12))).toMatchObject({ status: 409, knownSize: 0 });
    // Rollback: the witness is at 12; a checkpoint of size 5 cannot be presented as new.
    expect(decide(req(12, 5, leaves, []), st(12))).toMatchObject({ status: 400 });
    expect(decide(req(5, 5), st(12))).toMatchObject({ status: 409, knownSize: 12 });
  });

  it('409 for the same size with another root (a fork)', () => {
    expect(decide(req(25, 25, fork), st(25))).toMatchObject({ status: 409, knownSize: 25 });
  });

  it('422 for a forged or foreign consistency proof', () => {
    // The fork's honest proof does not connect the witness's root to the fork.
    expect(decide(req(25, 30, fork), st(25))).toMatchObject({ status: 422 });
    const good = proof(5, leaves.slice(0, 12));
    for (let i = 0; i < good.length; i++) {
      const forged = good.map((h) => new Uint8Array(h));
      forged[i]![0]! ^= 1;
      expect(decide(req(5, 12, leaves, forged), st(5))).toMatchObject({ status: 422 });
    }
    expect(decide(req(5, 12, leaves, good.slice(1)), st(5))).toMatchObject({ status: 422 });
    // A proof from old size 0 must be empty.
    const r0 = { ...req(0, 5), proof: [new Uint8Array(32)] };
    expect(decide(r0)).toMatchObject({ status: 422 });
    expect(decide({ ...req(12, 12), proof: [new Uint8Array(32)] }, st(12))).toMatchObject({
      status: 422,
    });
  });
});
