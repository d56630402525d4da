/**
 * The entry record (src/core/entry): round trip, canonical form, and every rejection the
 * decoder and the validator make, as tables of mutations → expected code.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeStrict, encodeCanonical } from '../../../src/core/codec/cbor.js';
import {
  ENTRY_KEYS,
  decodeSignedEntry,
  encodeEntryBody,
  encodeSignedEntry,
  entryLeafData,
  safeDecodeSignedEntry,
  signingInput,
} from '../../../src/core/entry/index.js';
import type { EntryBody, SignedEntry } from '../../../src/core/entry/types.js';
import type { ErrorCode } from '../../../src/core/errors.js';
import {
  Raw,
  arbSignedEntry,
  bytes,
  codeOf,
  minimalEntry,
  newId,
  rawMap,
  sampleEntry,
  toHex,
  wireView,
} from './fixtures.js';

type Mut = Record<string, unknown>;

describe('entry round trip', () => {
  it('decodes what it encodes, with and without optional fields', () => {
    for (const e of [sampleEntry(), minimalEntry()]) {
      const b = encodeSignedEntry(e);
      const d = decodeSignedEntry(b);
      expect(d).toEqual(e);
      expect(encodeSignedEntry(d)).toEqual(b);
    }
  });

  it('leaves unset optional fields absent, not undefined', () => {
    const d = decodeSignedEntry(encodeSignedEntry(minimalEntry()));
    for (const k of ['uri', 'exp', 'rev', 'sup']) expect(k in d).toBe(false);
  });

  it('the body is the signed map minus sig, and a SignedEntry can be passed as a body', () => {
    const e = sampleEntry();
    const body = encodeEntryBody(e);
    const { sig: _s, ...b } = e;
    expect(encodeEntryBody(b)).toEqual(body);
    expect(decodeStrict(body)).toEqual(decodeStrict(encodeCanonical(wireView(b))));
    expect(Object.keys(decodeStrict(body) as object)).not.toContain('sig');
  });

  it('uses the key order of ENTRY_KEYS, which is RFC 8949 §4.2.1 bytewise order', () => {
    const sorted = [...ENTRY_KEYS].sort((a, b) =>
      Buffer.compare(encodeCanonical(a), encodeCanonical(b)),
    );
    expect(ENTRY_KEYS).toEqual(sorted);
    const m = decodeStrict(encodeSignedEntry(sampleEntry())) as object;
    expect(Object.keys(m)).toEqual(ENTRY_KEYS.filter((k) => k in m));
  });

  it('signing input and leaf data', () => {
    const e = sampleEntry();
    const body = encodeEntryBody(e);
    const si = signingInput(body);
    expect(Buffer.from(si.subarray(0, 19)).toString()).toBe('memwarden/entry/v1\n');
    expect(si.subarray(19)).toEqual(body);
    const leaf = entryLeafData(e);
    expect(leaf.length).toBe(80);
    expect(toHex(leaf)).toBe(e.id.replaceAll('-', '') + toHex(e.sig));
  });

  it('property: decode(encode(e)) = e for random valid entries', () => {
    fc.assert(
      fc.property(arbSignedEntry, (e) => {
        const b = encodeSignedEntry(e);
        expect(decodeSignedEntry(b)).toEqual(e);
      }),
      { numRuns: 500 },
    );
  });

  it('property: changing any single field changes encodeEntryBody', () => {
    const other: Record<string, (e: SignedEntry) => unknown> = {
      id: () => newId(),
      ns: (e) => e.ns + 'x',
      writer: (e) => (e.writer.startsWith('tool:') ? 'user:' : 'tool:') + e.writer.split(':')[1],
      kid: (e) => (e.kid[0] === 'a' ? 'b' : 'a') + e.kid.slice(1),
      kind: (e) => (e.kind === 'note' ? 'fact' : 'note'),
      content: (e) => e.content + '.',
      tier: (e) => (e.tier === 'OPERATOR' ? 'EXTERNAL_WEB' : 'OPERATOR'),
      label: (e) => (e.label === 'TRUSTED' ? 'EXTERNAL' : 'TRUSTED'),
      src: (e) => e.src.map((x, i) => (i === 0 ? x ^ 1 : x)),
      ctx: (e) => e.ctx.map((x, i) => (i === 31 ? x ^ 0x80 : x)),
      ts: (e) => (e.exp !== undefined && e.ts + 1n >= e.exp ? e.ts - 1n : e.ts + 1n),
      nonce: (e) => e.nonce.map((x, i) => (i === 7 ? x ^ 4 : x)),
      uri: (e) => (e.uri ?? '') + 'u',
      rev: () => `operator:${'ef'.repeat(16)}`,
      sup: () => newId(),
      exp: (e) => (e.exp ?? e.ts) + 1n,
      parents: (e) => [...e.parents, newId()],
    };
    fc.assert(
      fc.property(arbSignedEntry, fc.constantFrom(...Object.keys(other)), (e, field) => {
        if (field === 'ts' && e.ts === 0n && e.exp === 1n) return;
        const changed = { ...e, [field]: (other[field] as (e: SignedEntry) => unknown)(e) } as Mut;
        if (field === 'parents') changed.weights = [...e.weights, 0.5];
        expect(toHex(encodeEntryBody(changed as unknown as EntryBody))).not.toBe(
          toHex(encodeEntryBody(e)),
        );
      }),
      { numRuns: 500 },
    );
    const e = sampleEntry();
    const w = { ...e, weights: [1, 0.25] };
    expect(encodeEntryBody(w)).not.toEqual(encodeEntryBody(e));
  });
});

describe('decodeSignedEntry rejects, before any signature check', () => {
  // Canonical CBOR (via cbor2) of a wire map with one mutation → expected code.
  const wireCases: [string, (g: Mut) => void, ErrorCode][] = [
    ['t is tombstone', (g) => (g.t = 'tombstone'), 'CODEC_INVALID_VALUE'],
    ['t not text', (g) => (g.t = 1), 'CODEC_WRONG_TYPE'],
    ['v = 3', (g) => (g.v = 3), 'CODEC_UNSUPPORTED_VERSION'],
    ['v = 0', (g) => (g.v = 0), 'CODEC_UNSUPPORTED_VERSION'],
    ['v text', (g) => (g.v = '1'), 'CODEC_WRONG_TYPE'],
    ['id 15 bytes', (g) => (g.id = bytes(15, 1)), 'CODEC_INVALID_VALUE'],
    [
      'id version 4',
      (g) => (g.id = Uint8Array.from(Buffer.from('0190d2a0e0a04e4b9a3c1d2e3f405162', 'hex'))),
      'CODEC_INVALID_VALUE',
    ],
    [
      'id bad variant',
      (g) => (g.id = Uint8Array.from(Buffer.from('0190d2a0e0a07e4bca3c1d2e3f405162', 'hex'))),
      'CODEC_INVALID_VALUE',
    ],
    ['id as text', (g) => (g.id = newId()), 'CODEC_WRONG_TYPE'],
    ['ns empty', (g) => (g.ns = ''), 'CODEC_INVALID_VALUE'],
    ['ns 257 chars', (g) => (g.ns = 'n'.repeat(257)), 'CODEC_OVERSIZE'],
    [
      'ns 256 emoji is fine → other error',
      (g) => ((g.ns = '😀'.repeat(256)), (g.v = 3)),
      'CODEC_UNSUPPORTED_VERSION',
    ],
    ['ns 257 emoji', (g) => (g.ns = '😀'.repeat(257)), 'CODEC_OVERSIZE'],
    ['ns bytes', (g) => (g.ns = bytes(3, 65)), 'CODEC_WRONG_TYPE'],
    ['writer unknown kind', (g) => (g.writer = `robot:${'ab'.repeat(16)}`), 'CODEC_INVALID_VALUE'],
    ['writer uppercase hex', (g) => (g.writer = `agent:${'AB'.repeat(16)}`), 'CODEC_INVALID_VALUE'],
    ['writer too long', (g) => (g.writer = `agent:${'ab'.repeat(40)}`), 'CODEC_OVERSIZE'],
    ['kid 15 hex', (g) => (g.kid = '0123456789abcde'), 'CODEC_INVALID_VALUE'],
    ['kid uppercase', (g) => (g.kid = '0123456789ABCDEF'), 'CODEC_INVALID_VALUE'],
    ['kind uppercase', (g) => (g.kind = 'Fact'), 'CODEC_INVALID_VALUE'],
    ['kind empty', (g) => (g.kind = ''), 'CODEC_INVALID_VALUE'],
    ['kind 65 chars', (g) => (g.kind = 'a'.repeat(65)), 'CODEC_OVERSIZE'],
    ['content over 64 KiB', (g) => (g.content = 'x'.repeat(65537)), 'CODEC_OVERSIZE'],
    ['content bytes', (g) => (g.content = bytes(4, 65)), 'CODEC_WRONG_TYPE'],
    ['tier unknown', (g) => (g.tier = 'ROOT'), 'CODEC_INVALID_VALUE'],
    ['label unknown', (g) => (g.label = 'SAFE'), 'CODEC_INVALID_VALUE'],
    ['src 31 bytes', (g) => (g.src = bytes(31, 1)), 'CODEC_INVALID_VALUE'],
    ['ctx text', (g) => (g.ctx = 'ctx'), 'CODEC_WRONG_TYPE'],
    ['uri empty', (g) => (g.uri = ''), 'CODEC_INVALID_VALUE'],
    ['uri 2049 chars', (g) => (g.uri = 'u'.repeat(2049)), 'CODEC_OVERSIZE'],
    ['uri null', (g) => (g.uri = null), 'CODEC_WRONG_TYPE'],
    ['parents not array', (g) => (g.parents = bytes(16, 1)), 'CODEC_WRONG_TYPE'],
    [
      '65 parents',
      (g) => (
        (g.parents = Array.from({ length: 65 }, () => wireView({ id: newId() }).id)),
        (g.weights = new Array(65).fill(1))
      ),
      'CODEC_OVERSIZE',
    ],
    [
      'duplicate parent',
      (g) =>
        (g.parents = [
          wireView({ id: '01890a5d-ac96-774b-bcce-b302099a8057' }).id,
          wireView({ id: '01890a5d-ac96-774b-bcce-b302099a8057' }).id,
        ]),
      'CODEC_INVALID_VALUE',
    ],
    ['self parent', (g) => ((g.parents as unknown[])[0] = g.id), 'CODEC_INVALID_VALUE'],
    ['parent not v7', (g) => ((g.parents as unknown[])[1] = bytes(16, 0)), 'CODEC_INVALID_VALUE'],
    ['weights length mismatch', (g) => (g.weights = [1]), 'CODEC_INVALID_VALUE'],
    ['weight 1.5', (g) => (g.weights = [1, 1.5]), 'CODEC_INVALID_VALUE'],
    ['weight -0.25', (g) => (g.weights = [1, -0.25]), 'CODEC_INVALID_VALUE'],
    ['weight -0', (g) => (g.weights = [1, -0]), 'CODEC_INVALID_VALUE'],
    ['weight NaN', (g) => (g.weights = [1, NaN]), 'CODEC_INVALID_VALUE'],
    ['weight Infinity', (g) => (g.weights = [1, Infinity]), 'CODEC_INVALID_VALUE'],
    ['weight 2', (g) => (g.weights = [1, 2]), 'CODEC_INVALID_VALUE'],
    ['weight text', (g) => (g.weights = [1, '0.5']), 'CODEC_WRONG_TYPE'],
    ['ts negative', (g) => (g.ts = -1), 'CODEC_WRONG_TYPE'],
    ['ts bignum', (g) => (g.ts = 2n ** 64n), 'CODEC_WRONG_TYPE'],
    ['ts float', (g) => (g.ts = 1.5), 'CODEC_WRONG_TYPE'],
    ['exp = ts', (g) => (g.exp = g.ts), 'CODEC_INVALID_VALUE'],
    ['exp < ts', (g) => (g.exp = 5), 'CODEC_INVALID_VALUE'],
    ['rev not a principal', (g) => (g.rev = 'alice'), 'CODEC_INVALID_VALUE'],
    ['sup = id', (g) => (g.sup = g.id), 'CODEC_INVALID_VALUE'],
    ['nonce 15 bytes', (g) => (g.nonce = bytes(15, 1)), 'CODEC_INVALID_VALUE'],
    ['sig 63 bytes', (g) => (g.sig = bytes(63, 1)), 'CODEC_INVALID_VALUE'],
    ['sig missing', (g) => delete g.sig, 'CODEC_MISSING_KEY'],
    ['content missing', (g) => delete g.content, 'CODEC_MISSING_KEY'],
    ['v missing', (g) => delete g.v, 'CODEC_MISSING_KEY'],
    ['t missing', (g) => delete g.t, 'CODEC_MISSING_KEY'],
    ['unknown key', (g) => (g.foo = 1), 'CODEC_UNKNOWN_KEY'],
    ['unknown long key', (g) => (g['a'.repeat(100)] = 1), 'CODEC_UNKNOWN_KEY'],
  ];
  it.each(wireCases)('%s → %s', (_name, mutate, code) => {
    const g = wireView(sampleEntry());
    mutate(g);
    expect(codeOf(() => decodeSignedEntry(encodeCanonical(g)))).toBe(code);
    const r = safeDecodeSignedEntry(encodeCanonical(g));
    expect(r.ok ? 'OK' : r.error.code).toBe(code);
  });

  it('non-text map key → CODEC_UNKNOWN_KEY', () => {
    const m = new Map<unknown, unknown>(Object.entries(wireView(sampleEntry())));
    m.set(1, 1);
    expect(codeOf(() => decodeSignedEntry(encodeCanonical(m)))).toBe('CODEC_UNKNOWN_KEY');
  });

  const canonical = (): [string, unknown][] => {
    const g = wireView(sampleEntry());
    return ENTRY_KEYS.filter((k) => k in g).map((k) => [k, g[k]]);
  };
  const byteCases: [string, () => Uint8Array, ErrorCode][] = [
    [
      'keys re-ordered (content before kind)',
      () => {
        const kv = canonical();
        const i = kv.findIndex(([k]) => k === 'kind');
        const j = kv.findIndex(([k]) => k === 'content');
        [kv[i], kv[j]] = [kv[j] as [string, unknown], kv[i] as [string, unknown]];
        return rawMap(kv);
      },
      'CODEC_NON_CANONICAL',
    ],
    [
      'keys in length-first vs lexicographic mix (ns before id)',
      () => {
        const kv = canonical();
        const i = kv.findIndex(([k]) => k === 'id');
        [kv[i], kv[i + 1]] = [kv[i + 1] as [string, unknown], kv[i] as [string, unknown]];
        return rawMap(kv);
      },
      'CODEC_NON_CANONICAL',
    ],
    [
      'duplicate key',
      () => {
        const kv = canonical();
        const i = kv.findIndex(([k]) => k === 'kind');
        kv.splice(i, 0, kv[i] as [string, unknown]);
        return rawMap(kv);
      },
      'CODEC_DUPLICATE_KEY',
    ],
    [
      'non-shortest v',
      () =>
        rawMap(canonical().map(([k, v]) => [k, k === 'v' ? new Raw(Uint8Array.of(0x18, 1)) : v])),
      'CODEC_NON_CANONICAL',
    ],
    [
      'non-shortest ts',
      () => {
        const kv = canonical().map(([k, v]): [string, unknown] => [
          k,
          k === 'ts' ? new Raw(Uint8Array.of(0x1b, 0, 0, 0, 0, 0, 0, 0, 5)) : v,
        ]);
        return rawMap(kv.filter(([k]) => k !== 'exp'));
      },
      'CODEC_NON_CANONICAL',
    ],
    [
      'non-shortest weight float',
      () =>
        rawMap(
          canonical().map(([k, v]) => [
            k,
            k === 'weights' ? new Raw(Uint8Array.of(0x82, 0x01, 0xfa, 0x3f, 0, 0, 0)) : v,
          ]),
        ),
      'CODEC_NON_CANONICAL',
    ],
    [
      'weight 1.0 as a float',
      () =>
        rawMap(
          canonical().map(([k, v]) => [
            k,
            k === 'weights' ? new Raw(Uint8Array.of(0x82, 0xf9, 0x3c, 0x00, 0x01)) : v,
          ]),
        ),
      'CODEC_NON_CANONICAL',
    ],
    [
      'indefinite-length content',
      () =>
        rawMap(
          canonical().map(([k, v]) => [
            k,
            k === 'content' ? new Raw(Uint8Array.of(0x7f, 0x61, 0x61, 0xff)) : v,
          ]),
        ),
      'CODEC_NON_CANONICAL',
    ],
    [
      'non-shortest map header',
      () => {
        const b = encodeSignedEntry(sampleEntry());
        return Uint8Array.from([0xb8, (b[0] as number) & 0x1f, ...b.subarray(1)]);
      },
      'CODEC_NON_CANONICAL',
    ],
    [
      'trailing byte',
      () => Uint8Array.from([...encodeSignedEntry(sampleEntry()), 0]),
      'CODEC_TRAILING_BYTES',
    ],
    [
      'second record appended',
      () => {
        const b = encodeSignedEntry(sampleEntry());
        return Uint8Array.from([...b, ...b]);
      },
      'CODEC_TRAILING_BYTES',
    ],
    ['truncated', () => encodeSignedEntry(sampleEntry()).slice(0, -1), 'CODEC_MALFORMED'],
    ['empty', () => new Uint8Array(0), 'CODEC_MALFORMED'],
    ['not a map', () => encodeCanonical([1, 2]), 'CODEC_WRONG_TYPE'],
    [
      'invalid UTF-8 in content',
      () =>
        rawMap(
          canonical().map(([k, v]) => [
            k,
            k === 'content' ? new Raw(Uint8Array.of(0x62, 0xc3, 0x28)) : v,
          ]),
        ),
      'CODEC_MALFORMED',
    ],
    ['oversize input', () => new Uint8Array(96 * 1024 + 1), 'CODEC_OVERSIZE'],
  ];
  it.each(byteCases)('%s → %s', (_name, make, code) => {
    expect(codeOf(() => decodeSignedEntry(make()))).toBe(code);
  });

  it('never lets a raw error escape on mutated or random bytes', () => {
    const base = encodeSignedEntry(sampleEntry());
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: base.length - 1 }),
        fc.integer({ min: 0, max: 255 }),
        (i, x) => {
          const b = base.slice();
          b[i] = x;
          const c = codeOf(() => decodeSignedEntry(b));
          expect(c === 'OK' || c.startsWith('CODEC_')).toBe(true);
          if (c === 'OK') expect(encodeSignedEntry(decodeSignedEntry(b))).toEqual(b);
        },
      ),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (b) => {
        const r = safeDecodeSignedEntry(b);
        expect(r.ok || r.error.code.startsWith('CODEC_')).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
