/**
 * Seeds and dictionaries for the fuzz targets, and the checked-in corpus (fuzz/corpus/<target>/).
 *
 * The corpus is plain files (one input each) so any fuzzer can use it: the RFC 8949 Appendix A
 * and dCBOR vectors (vendored from test/vectors when the corpus was made), real entry and
 * tombstone records, signed checkpoints and notes, verifier keys, and whatever the
 * coverage-guided runs added. `registerSignedSeeds()` re-signs, deterministically, every text
 * the note / checkpoint seeds carry: the "no forgery" property needs to know what was signed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeSignedEntry, encodeSignedTombstone } from '../../src/core/entry/index.js';
import { minimalEntry, sampleEntry, sampleTombstone } from '../core/entry/fixtures.js';
import { KEY_NAME, VKEY, fuzzSignCheckpoint, fuzzSignNote } from './targets.js';

export const CORPUS_DIR = join(import.meta.dirname, '..', '..', 'fuzz', 'corpus');
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Deterministic root-like bytes. */
const root = (x: number): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => (i * 31 + x) & 0xff);

/** Sign the seed texts (idempotent) and return the signed notes. */
export function registerSignedSeeds(): string[] {
  return [
    fuzzSignCheckpoint('fuzz.example/log', 0, root(0)),
    fuzzSignCheckpoint('fuzz.example/log', 1, root(1)),
    fuzzSignCheckpoint('fuzz.example/log', 123456789, root(2), ['ext one', 'ext-two']),
    fuzzSignCheckpoint('other.example/log', 7, root(3)),
    fuzzSignNote('If you think cryptography is the answer to your problem,\nthen you don\'t know what your problem is.\n'),
    fuzzSignNote('one line\n'),
  ];
}

/** Seeds built in code, per target (the corpus generator writes these out). */
export function builtinSeeds(target: string, vectors?: string): Uint8Array[] {
  const notes = registerSignedSeeds();
  switch (target) {
    case 'cbor': {
      const out: Uint8Array[] = [];
      if (vectors !== undefined)
        for (const f of ['appendix_a.json', 'dcbor_valid.json', 'dcbor_invalid.json'])
          for (const v of JSON.parse(readFileSync(join(vectors, 'cbor', f), 'utf8')) as { hex: string }[])
            out.push(Uint8Array.from(Buffer.from(v.hex, 'hex')));
      out.push(encodeSignedEntry(sampleEntry()), encodeSignedTombstone(sampleTombstone()));
      return out;
    }
    case 'entry':
      return [encodeSignedEntry(sampleEntry()), encodeSignedEntry(minimalEntry())];
    case 'tombstone':
      return [encodeSignedTombstone(sampleTombstone())];
    case 'note': {
      // A note with a second signature from another key, which verification must ignore.
      const extra = notes[0]!.replace(/\n$/, '') + `\n\u2014 other.example/witness AAAAAA${'B'.repeat(86)}==\n`;
      return [...notes, extra].map(enc);
    }
    case 'checkpoint':
      return notes.slice(0, 4).map(enc);
    case 'vkey':
      return [enc(VKEY), enc('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')];
    case 'inclusion':
    case 'consistency':
      return [
        Uint8Array.of(0, 1, 7, 0, 0, 0),
        Uint8Array.of(0, 10, 1, 0, 3, 0),
        Uint8Array.of(0, 64, 9, 0, 63, 2, 3, 0, 1, 5, 1, 7),
        Uint8Array.of(1, 44, 2, 0, 200, 1, 0, 7, 1, 0, 0xff, 2),
        Uint8Array.of(0, 255, 5, 0, 128, 3, 0, 0),
      ];
    default:
      throw new Error(`no seeds for ${target}`);
  }
}

/** The checked-in corpus of a target (empty when absent). */
export function loadCorpus(target: string): Uint8Array[] {
  const dir = join(CORPUS_DIR, target);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .map((f) => new Uint8Array(readFileSync(join(dir, f))));
}

const heads = [0x18, 0x19, 0x1a, 0x1b, 0x1f, 0x5f, 0x7f, 0x9f, 0xbf, 0xff, 0xf9, 0xfa, 0xfb, 0xf4, 0xf5, 0xf6, 0xf7, 0xc2, 0xc3];
/** Tokens the dictionary mutator splices in. */
export function dictionary(target: string): Uint8Array[] {
  const base = heads.map((h) => Uint8Array.of(h));
  const text = (ss: string[]): Uint8Array[] => ss.map(enc);
  switch (target) {
    case 'cbor':
    case 'entry':
    case 'tombstone':
      return [
        ...base,
        Uint8Array.of(0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
        Uint8Array.of(0xf9, 0x7e, 0x00),
        Uint8Array.of(0xf9, 0x7c, 0x00),
        Uint8Array.of(0xfb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1),
        Uint8Array.of(0x7a, 0xff, 0xff, 0xff, 0xff),
        ...text(['t', 'v', 'id', 'ns', 'ts', 'ctx', 'exp', 'kid', 'rev', 'sig', 'src', 'sup', 'uri', 'kind', 'tier', 'label', 'nonce', 'writer', 'content', 'parents', 'weights', 'target', 'reason', '__proto__']).map(
          (k) => Uint8Array.of(0x60 + k.length, ...k),
        ),
        enc('\u{1F600}'),
        Uint8Array.of(0xed, 0xa0, 0x80), // UTF-8 encoded surrogate (invalid)
        Uint8Array.of(0xc0, 0x80), // overlong NUL
      ];
    case 'note':
    case 'checkpoint':
      return text(['\u2014 ', '\n', '\n\n', '+', '=', '==', '/', ' ', '\t', '\r', '\u00a0', '\u2028', '\ufeff', KEY_NAME, 'fuzz.example/log', '18446744073709551616', '9007199254740993', '00', '-1', '\ud800', 'AAAA']);
    case 'vkey':
      return text(['+', '=', '/', ' ', 'AQ', 'Ag', '00000000', KEY_NAME, '\u2014']);
    default:
      return base;
  }
}
