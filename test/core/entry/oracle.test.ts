/**
 * Differential test: the hand-rolled entry codec (core/codec/wire) against cbor2 through the
 * generic canonical path (core/codec/cbor). They must agree byte for byte on every valid
 * entry, and the fast decoder must never accept bytes the strict generic decoder rejects.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeStrict, encodeCanonical } from '../../../src/core/codec/cbor.js';
import {
  decodeSignedEntry,
  encodeEntryBody,
  encodeSignedEntry,
} from '../../../src/core/entry/index.js';
import { arbSignedEntry, codeOf, sampleEntry, wireView } from './fixtures.js';

describe('entry codec vs cbor2 oracle', () => {
  it('encodeSignedEntry and encodeEntryBody equal cbor2 canonical encoding', () => {
    fc.assert(
      fc.property(arbSignedEntry, (e) => {
        expect(encodeSignedEntry(e)).toEqual(encodeCanonical(wireView(e)));
        const { sig: _s, ...body } = e;
        expect(encodeEntryBody(e)).toEqual(encodeCanonical(wireView(body)));
      }),
      { numRuns: 1000 },
    );
  });

  it('whatever the fast decoder accepts, cbor2 strict decoding accepts as the same value', () => {
    const base = encodeSignedEntry(sampleEntry());
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: base.length - 1 }), fc.integer({ min: 0, max: 255 })),
          {
            minLength: 1,
            maxLength: 3,
          },
        ),
        (flips) => {
          const b = base.slice();
          for (const [i, x] of flips) b[i] = x;
          if (codeOf(() => decodeSignedEntry(b)) !== 'OK') return;
          const generic = decodeStrict(b);
          expect(encodeCanonical(generic)).toEqual(b);
          expect(encodeCanonical(wireView(decodeSignedEntry(b)))).toEqual(b);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('random valid entries decode identically through both paths', () => {
    fc.assert(
      fc.property(arbSignedEntry, (e) => {
        const b = encodeSignedEntry(e);
        const viaFast = encodeCanonical(wireView(decodeSignedEntry(b)));
        expect(viaFast).toEqual(encodeCanonical(decodeStrict(b)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('signEntry splices the signature at its canonical position', () => {
  it('produces exactly encodeSignedEntry(entry) for random bodies, and bodyBytes = encodeEntryBody', async () => {
    const fcMod = await import('fast-check');
    const { signEntry, encodeSignedEntry: enc, encodeEntryBody: encBody, decodeSignedEntry: dec } = await import(
      '../../../src/core/entry/index.js'
    );
    const { signerFromSeed } = await import('../../../src/core/crypto/ed25519.js');
    const signer = signerFromSeed(new Uint8Array(32).fill(7));
    fcMod.default.assert(
      fcMod.default.property(arbSignedEntry, ({ sig: _sig, ...body }) => {
        const r = signEntry(body, signer);
        expect(r.bytes).toEqual(enc(r.entry));
        expect(r.bodyBytes).toEqual(encBody(r.entry));
        expect(dec(r.bytes)).toEqual(r.entry);
      }),
      { numRuns: 300 },
    );
  });
});
