/**
 * Pins memwarden's Ed25519 acceptance policy on the C2SP CCTV edge-case corpus
 * (`test/vectors/ed25519/cctv_ed25519vectors.json`, 914 vectors). There is no single
 * right answer here (SOURCE.md); this test records what `verifyEd25519` — OpenSSL 3.0's
 * cofactorless verifier plus memwarden's explicit RFC 8032 canonical-A/R and S < L checks —
 * does, so any change (Node/OpenSSL upgrade, verifier edit) is a visible, reviewed diff.
 *
 * Policy: accept iff the vector has none of `non_canonical_A`, `non_canonical_R`,
 * `low_order_residue`. Low-order A/R (and mixed-order components) are accepted when the
 * cofactorless equation holds; every `reencoded_k` vector is rejected (each also carries a
 * non-canonical encoding or a low-order residue). (OpenSSL alone would also accept 36 `non_canonical_A` vectors.)
 */
import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyEd25519 } from '../../../src/core/crypto/ed25519.js';
import { utf8 } from '../../../src/core/bytes.js';
import { hex, loadVectors } from './vectors.js';

interface CctvVector {
  number: number;
  key: string;
  sig: string;
  msg: string;
  flags: string[] | null;
}

const REJECTING_FLAGS = ['non_canonical_A', 'non_canonical_R', 'low_order_residue'];

/** Accepted / rejected counts per flag, as observed with Node 20 (OpenSSL 3.0.x). */
const PINNED: Record<string, { accepted: number; rejected: number }> = {
  low_order_R: { accepted: 86, rejected: 500 },
  low_order_A: { accepted: 86, rejected: 440 },
  low_order_component_R: { accepted: 140, rejected: 525 },
  low_order_component_A: { accepted: 168, rejected: 606 },
  low_order_residue: { accepted: 0, rejected: 583 },
  non_canonical_A: { accepted: 0, rejected: 226 },
  non_canonical_R: { accepted: 0, rejected: 316 },
  reencoded_k: { accepted: 0, rejected: 146 },
  '(none)': { accepted: 1, rejected: 0 },
};

describe('CCTV ed25519vectors: pinned acceptance policy', () => {
  const vectors = loadVectors<CctvVector[]>('ed25519/cctv_ed25519vectors.json');
  const results = vectors.map((v) => ({
    v,
    flags: v.flags ?? [],
    accepted: verifyEd25519(hex(v.key), utf8.encode(v.msg), hex(v.sig)),
  }));

  it('runs all 914 vectors', () => expect(results).toHaveLength(914));

  it('accepts exactly the vectors without non_canonical_A/R or low_order_residue', () => {
    const wrong = results
      .filter(({ flags, accepted }) => accepted !== !flags.some((f) => REJECTING_FLAGS.includes(f)))
      .map(({ v }) => v.number);
    expect(wrong).toEqual([]);
  });

  it('per-flag accept/reject counts are pinned', () => {
    const observed: Record<string, { accepted: number; rejected: number }> = {};
    for (const { flags, accepted } of results) {
      for (const f of flags.length > 0 ? flags : ['(none)']) {
        const c = (observed[f] ??= { accepted: 0, rejected: 0 });
        if (accepted) c.accepted++;
        else c.rejected++;
      }
    }
    expect(observed).toEqual(PINNED);
  });

  it('documents why the explicit canonical-A check exists: bare OpenSSL accepts 36 non_canonical_A', () => {
    const spki = Buffer.from('302a300506032b6570032100', 'hex');
    let opensslAccepts = 0;
    for (const { v, flags } of results) {
      if (!flags.includes('non_canonical_A')) continue;
      const key = createPublicKey({
        key: Buffer.concat([spki, hex(v.key)]),
        format: 'der',
        type: 'spki',
      });
      if (verify(null, Buffer.from(v.msg, 'utf8'), key, hex(v.sig))) opensslAccepts++;
    }
    expect(opensslAccepts).toBe(36);
  });
});
