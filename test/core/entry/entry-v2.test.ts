/**
 * The version 2 entry record (ADR 0048): event time, logical id, metadata and scopes, signed
 * under their own domain; version 1 records unchanged beside it.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeStrict, encodeCanonical } from '../../../src/core/codec/cbor.js';
import {
  generateKeyPair,
  signerFromSeed,
  verifyEd25519,
} from '../../../src/core/crypto/ed25519.js';
import {
  ENTRY_V2_KEYS,
  decodeMeta,
  decodeSignedEntry,
  decodeEntryForVerify,
  encodeEntryBody,
  encodeMeta,
  encodeSignedEntry,
  entrySigningInput,
  signEntry,
  withEntrySigningInput,
} from '../../../src/core/entry/index.js';
import type { EntryBody, SignedEntry } from '../../../src/core/entry/types.js';
import { codeOf, newId, rawMap, sampleEntry, wireView } from './fixtures.js';

function keyPair(): {
  sign(m: Uint8Array): Uint8Array;
  verify(m: Uint8Array, s: Uint8Array): boolean;
} {
  const { seed, publicKey } = generateKeyPair();
  const signer = signerFromSeed(seed);
  return { sign: (m) => signer.sign(m), verify: (m, s) => verifyEd25519(publicKey, m, s) };
}

function v2Entry(over: Record<string, unknown> = {}): SignedEntry {
  return {
    ...sampleEntry(),
    v: 2,
    evt: 1_683_553_000_000_000_000n,
    lid: newId(),
    meta: { session: 3, dia: 'D3:12', tags: ['travel', 'family'], nested: { ok: true, n: null } },
    run: 'session-3',
    agent: 'planner',
    ...over,
  } as SignedEntry;
}

function v2Wire(e: object): Record<string, unknown> {
  const o = wireView(e);
  const lid = (e as { lid?: string }).lid;
  if (typeof lid === 'string') o.lid = wireView({ id: lid }).id;
  return o;
}

describe('entry v2', () => {
  it('round-trips every field and re-encodes byte for byte', () => {
    const e = v2Entry();
    const b = encodeSignedEntry(e);
    const d = decodeSignedEntry(b);
    expect(d).toEqual(e);
    expect(encodeSignedEntry(d)).toEqual(b);
  });

  it('is canonical CBOR: the cbor2 oracle encodes the same map to the same bytes', () => {
    const e = v2Entry();
    expect(encodeSignedEntry(e)).toEqual(encodeCanonical(v2Wire(e)));
    const { sig: _s, ...body } = e;
    expect(encodeEntryBody(body as EntryBody)).toEqual(encodeCanonical(v2Wire(body)));
  });

  it('its key list is RFC 8949 §4.2.1 bytewise order', () => {
    const sorted = [...ENTRY_V2_KEYS].sort((a, b) =>
      Buffer.compare(encodeCanonical(a), encodeCanonical(b)),
    );
    expect([...ENTRY_V2_KEYS]).toEqual(sorted);
  });

  it('signs under its own domain; the verify path cuts the same input out of the record', () => {
    const kp = keyPair();
    const { sig: _s, ...body } = v2Entry();
    const { entry, bytes } = signEntry(body as EntryBody, { sign: (m) => kp.sign(m) });
    const input = entrySigningInput(entry);
    expect(new TextDecoder().decode(input.subarray(0, 19))).toBe('memwarden/entry/v2\n');
    expect(kp.verify(input, entry.sig)).toBe(true);
    const d = decodeEntryForVerify(bytes);
    if (!d.ok) throw d.error;
    withEntrySigningInput(bytes, d.value, (cut) =>
      expect(Buffer.from(cut)).toEqual(Buffer.from(input)),
    );
    // A version 1 record with the same fields signs a different input (no cross-version replay).
    const { evt: _e, lid: _l, meta: _m, run: _r, agent: _a, ...v1 } = body as EntryBody;
    const v1Input = entrySigningInput({ ...v1, v: 1 });
    expect(new TextDecoder().decode(v1Input.subarray(0, 19))).toBe('memwarden/entry/v1\n');
  });

  it('the cut signing input is right for every map head size (≤ 23 and 24+ pairs)', () => {
    const kp = keyPair();
    for (const drop of [['meta', 'agent', 'run', 'lid', 'evt', 'uri', 'rev'], ['agent'], []]) {
      const e: Record<string, unknown> = { ...v2Entry() };
      for (const k of drop) delete e[k];
      if (!('sup' in e)) delete e.lid;
      const { sig: _s, ...body } = e;
      const { bytes } = signEntry(body as unknown as EntryBody, { sign: (m) => kp.sign(m) });
      const d = decodeEntryForVerify(bytes);
      if (!d.ok) throw d.error;
      withEntrySigningInput(bytes, d.value, (cut) =>
        expect(kp.verify(cut, d.value.entry.sig)).toBe(true),
      );
    }
  });

  it('a version 1 record carrying a version 2 field is refused; v1 stays readable', () => {
    expect(
      codeOf(() => encodeSignedEntry({ ...sampleEntry(), meta: { a: 1 } } as SignedEntry)),
    ).toBe('CODEC_UNKNOWN_KEY');
    const v1 = sampleEntry();
    expect(decodeSignedEntry(encodeSignedEntry(v1))).toEqual(v1);
    const wire = v2Wire({ ...v1, evt: 5n });
    expect(codeOf(() => decodeSignedEntry(encodeCanonical(wire)))).toBe('CODEC_UNKNOWN_KEY');
  });

  it('refuses what the rules forbid, before any signature check', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ lid: newId(), sup: undefined }, 'CODEC_INVALID_VALUE'], // a logical id without sup
      [{ run: '' }, 'CODEC_INVALID_VALUE'],
      [{ agent: 'x'.repeat(257) }, 'CODEC_OVERSIZE'],
      [{ evt: -1n }, 'CODEC_INVALID_VALUE'],
      [{ meta: {} }, 'CODEC_INVALID_VALUE'],
      [{ meta: { a: Number.NaN } }, 'CODEC_INVALID_VALUE'],
      [{ meta: { a: -0 } }, 'CODEC_INVALID_VALUE'],
      [{ meta: { a: new Date(0) } }, 'CODEC_WRONG_TYPE'],
      [{ meta: { a: undefined } }, 'CODEC_WRONG_TYPE'],
      [{ meta: { '': 1 } }, 'CODEC_INVALID_VALUE'],
      [{ meta: { a: 'x'.repeat(17_000) } }, 'CODEC_OVERSIZE'],
      [
        { meta: { a: { b: { c: { d: { e: { f: { g: { h: { i: { j: 1 } } } } } } } } } } },
        'CODEC_OVERSIZE',
      ],
    ];
    for (const [over, code] of cases) {
      const e: Record<string, unknown> = { ...v2Entry(), ...over };
      for (const k of Object.keys(e))
        if (e[k] === undefined && !(k in over && k === 'meta')) delete e[k];
      expect([
        JSON.stringify(Object.keys(over)),
        codeOf(() => encodeSignedEntry(e as unknown as SignedEntry)),
      ]).toEqual([JSON.stringify(Object.keys(over)), code]);
    }
  });

  it('the decoder accepts only the one canonical metadata encoding', () => {
    const ok = encodeMeta({ b: 1, aa: 2 });
    expect(decodeMeta(ok)).toEqual({ b: 1, aa: 2 });
    // Keys out of order (a longer key first), a duplicate key, a float spelling of an integer.
    expect(
      codeOf(() =>
        decodeMeta(
          rawMap([
            ['aa', 2],
            ['b', 1],
          ]),
        ),
      ),
    ).toBe('CODEC_NON_CANONICAL');
    expect(
      codeOf(() =>
        decodeMeta(
          rawMap([
            ['b', 1],
            ['b', 2],
          ]),
        ),
      ),
    ).toBe('CODEC_DUPLICATE_KEY');
    expect(codeOf(() => decodeMeta(Uint8Array.from([0xa1, 0x61, 0x62, 0xf9, 0x3c, 0x00])))).toBe(
      'CODEC_NON_CANONICAL',
    );
    // Outside the JSON model: bytes, tags, undefined.
    expect(codeOf(() => decodeMeta(Uint8Array.from([0xa1, 0x61, 0x62, 0x41, 0x00])))).toBe(
      'CODEC_WRONG_TYPE',
    );
    expect(codeOf(() => decodeMeta(Uint8Array.from([0xa1, 0x61, 0x62, 0xf7])))).toBe(
      'CODEC_WRONG_TYPE',
    );
    // A `__proto__` key is an ordinary key after decoding.
    const p = decodeMeta(encodeMeta(JSON.parse('{"__proto__": {"x": 1}}') as object));
    expect(Object.keys(p)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype);
  });

  it('any JSON object metadata round-trips and matches the oracle (property)', () => {
    const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
    const meta = fc
      .dictionary(fc.string({ minLength: 1, maxLength: 12 }), json, { minKeys: 1, maxKeys: 6 })
      .filter(
        (m) =>
          Object.keys(m).every((k) => Buffer.from(k, 'utf8').toString('utf8') === k) &&
          JSON.stringify(m).length < 8000,
      )
      .map((m) => JSON.parse(JSON.stringify(m)) as Record<string, unknown>);
    fc.assert(
      fc.property(meta, (m) => {
        let bytes: Uint8Array;
        try {
          bytes = encodeMeta(m);
        } catch {
          return; // lone surrogates in strings: refused, coded (checked above)
        }
        expect(decodeMeta(bytes)).toEqual(m);
        expect(decodeStrict(bytes)).toEqual(m);
        expect(bytes).toEqual(encodeCanonical(m));
      }),
      { numRuns: 300 },
    );
  });
});
