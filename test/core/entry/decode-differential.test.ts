/**
 * Differential test of the production entry decoder against the reference decoder (the one it
 * replaced, kept verbatim in ./decode-reference.ts): on valid records and on every kind of
 * mutation — byte flips anywhere, and targeted ones on map keys, text heads, the closed
 * vocabularies (`t`, `tier`, `label`) and a `writer` spelled like `ns` — both must accept the
 * same bytes with the same value and the same signed-part offsets, or reject them with the same
 * error code. The cbor2 oracle (./oracle.test.ts) pins both against the generic strict decoder.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemwardenError } from '../../../src/core/errors.js';
import {
  decodeEntryForVerify,
  decodeSignedEntry,
  encodeSignedEntry,
} from '../../../src/core/entry/index.js';
import { SourceTiers, TrustLabels } from '../../../src/core/trust.js';
import { decodeSignedEntryV2, isV2Record } from '../../../src/core/entry/entry-v2.js';
import type { SignedEntry } from '../../../src/core/entry/types.js';
import { arbSignedEntry, sampleEntry, WRITER } from './fixtures.js';
import { type ReferenceSpan, referenceDecodeEntry } from './decode-reference.js';

type Outcome = { code: string } | { value: SignedEntry; span: ReferenceSpan };

function reference(b: Uint8Array): Outcome {
  const span: ReferenceSpan = { start: -1, end: -1, id: -1 };
  try {
    // A mutation that turns `v` into 2 makes a version 2 record (ADR 0048): the reference of
    // the version 1 decoder does not apply; the version 2 decoder's verdict is expected.
    if (isV2Record(b)) return { value: decodeSignedEntryV2(b, span), span };
    return { value: referenceDecodeEntry(b, span), span };
  } catch (e) {
    if (e instanceof MemwardenError) return { code: e.code };
    throw e;
  }
}

/** A stored row's view of the record: the `expect` hint of decodeEntryForVerify. */
type Row = { readonly id: string; readonly owner: string };

function production(b: Uint8Array, row?: Row): Outcome {
  let value: SignedEntry;
  try {
    value = decodeSignedEntry(b);
  } catch (e) {
    if (!(e instanceof MemwardenError)) throw e;
    // The verify-path entry point must agree with the plain one.
    const r = decodeEntryForVerify(b, row);
    expect(r.ok ? 'OK' : r.error.code).toBe(e.code);
    return { code: e.code };
  }
  const r = decodeEntryForVerify(b, row);
  if (!r.ok) throw new Error(`decodeEntryForVerify refused what decodeSignedEntry accepted`);
  expect(r.value.entry).toEqual(value);
  return { value, span: { start: r.value.sigStart, end: r.value.sigEnd, id: r.value.idAt } };
}

/**
 * Both decoders agree on `b`; so does the verify path given `rows` as its stored-row hints
 * (the hints only let the entry share strings: they never change the outcome).
 */
function agree(b: Uint8Array, ...rows: Row[]): 'accepted' | 'rejected' {
  const want = reference(b);
  expect(production(b)).toEqual(want);
  for (const row of rows) expect(production(b, row)).toEqual(want);
  return 'code' in want ? 'rejected' : 'accepted';
}

/** Hints: the entry's own row, and near misses of it. */
function rowsOf(e: SignedEntry): Row[] {
  const flip = (s: string, i: number) =>
    s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ 1) + s.slice(i + 1);
  return [
    { id: e.id, owner: e.ns },
    { id: e.id.toUpperCase(), owner: `${e.ns} ` },
    { id: flip(e.id, 35), owner: flip(e.ns, e.ns.length - 1) },
    { id: e.id.replaceAll('-', '_'), owner: e.ns.slice(1) },
    { id: '', owner: '' },
  ];
}

/** Valid entries, half of them with `ns` = `writer` (the common case the decoder shares). */
const arbEntry = fc
  .tuple(arbSignedEntry, fc.boolean())
  .map(([e, same]) => (same ? { ...e, ns: e.writer } : e));

/** Offsets of every encoded schema key and of the text items that follow some of them. */
function keyOffsets(b: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 1; i < b.length; i++) {
    const h = b[i] as number;
    if (h >= 0x61 && h <= 0x67 && i + 1 + (h - 0x60) <= b.length) {
      const k = Buffer.from(b.subarray(i + 1, i + 1 + (h - 0x60))).toString('latin1');
      if (/^[a-z]+$/.test(k)) out.push(i, i + 1, i + (h - 0x60), i + 1 + (h - 0x60));
    }
  }
  return out;
}

describe('entry decoder = reference decoder (differential)', () => {
  it('valid entries: same value and offsets', () => {
    fc.assert(
      fc.property(arbEntry, (e) => {
        expect(agree(encodeSignedEntry(e), ...rowsOf(e))).toBe('accepted');
      }),
      { numRuns: 500 },
    );
  });

  it('random byte flips anywhere: same verdict', () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        arbEntry,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 3,
        }),
        (e, flips) => {
          const b = encodeSignedEntry(e).slice();
          for (const [i, x] of flips) b[i % b.length] = x;
          if (agree(b, { id: e.id, owner: e.ns }) === 'accepted') accepted++;
        },
      ),
      { numRuns: 3000 },
    );
    // Some flips land in free bytes (content, hashes) and keep the record valid.
    expect(accepted).toBeGreaterThan(0);
  });

  it('flips on map keys, text heads and the bytes right after them: same verdict', () => {
    fc.assert(
      fc.property(arbEntry, fc.nat(), fc.integer({ min: 0, max: 255 }), (e, pick, x) => {
        const b = encodeSignedEntry(e).slice();
        const at = keyOffsets(b);
        b[at[pick % at.length] as number] = x;
        agree(b, { id: e.id, owner: e.ns });
      }),
      { numRuns: 3000 },
    );
  });

  it('truncations, insertions and deletions: same verdict', () => {
    fc.assert(
      fc.property(arbEntry, fc.nat(), fc.integer({ min: 0, max: 255 }), (e, pick, x) => {
        const b = encodeSignedEntry(e);
        const i = pick % b.length;
        agree(b.subarray(0, i));
        agree(Uint8Array.from([...b.subarray(0, i), x, ...b.subarray(i)]));
        agree(Uint8Array.from([...b.subarray(0, i), ...b.subarray(i + 1)]));
      }),
      { numRuns: 1000 },
    );
  });

  it('closed vocabularies and a writer spelled like ns, one byte off: same verdict', () => {
    const base = sampleEntry();
    const enc = new TextEncoder();
    const cases: SignedEntry[] = [];
    for (const tier of SourceTiers) cases.push({ ...base, tier });
    for (const label of TrustLabels) cases.push({ ...base, label });
    cases.push({ ...base, ns: WRITER });
    cases.push({ ...base, ns: `${WRITER.slice(0, -1)}0` }); // same length, last char differs
    cases.push({ ...base, ns: WRITER.slice(0, -1) }); // one shorter: a prefix
    cases.push({ ...base, ns: `${WRITER}x` }); // one longer
    let n = 0;
    for (const e of cases) {
      const b = encodeSignedEntry(e);
      expect(agree(b, ...rowsOf(e))).toBe('accepted');
      // Every single-byte change inside the tier, label, t, ns and writer values.
      for (const v of [e.tier, e.label, 't', e.ns, e.writer]) {
        const needle = enc.encode(v);
        const at = Buffer.from(b).indexOf(Buffer.from(needle));
        for (let i = Math.max(0, at - 2); i < at + needle.length; i++) {
          for (const x of [0x00, 0x41, 0x5f, 0x61, 0x7f, 0x80, 0xc3, 0xff, (b[i] as number) ^ 1]) {
            const m = b.slice();
            m[i] = x;
            agree(m, { id: e.id, owner: e.ns });
            n++;
          }
        }
      }
    }
    expect(n).toBeGreaterThan(1000);
  });

  it('ids and namespaces with non-ASCII or other spellings than the row hint decode as usual', () => {
    const e = { ...sampleEntry(), ns: 'tenant-ü/agent-7' };
    const b = encodeSignedEntry(e);
    expect(agree(b, { id: e.id, owner: e.ns }, { id: e.id, owner: 'tenant-u/agent-7' })).toBe(
      'accepted',
    );
  });

  it('a writer identical to ns decodes to the same string value, and differs when it differs', () => {
    const e = { ...sampleEntry(), ns: WRITER };
    const d = decodeSignedEntry(encodeSignedEntry(e));
    expect(d.writer).toBe(WRITER);
    expect(d.ns).toBe(WRITER);
    const other = `agent:${'ef'.repeat(16)}`;
    const d2 = decodeSignedEntry(encodeSignedEntry({ ...e, writer: other }));
    expect(d2.writer).toBe(other);
    expect(d2.ns).toBe(WRITER);
  });
});
