/**
 * Hostile input for the byte / text parsers (the short run in `npm test`; `npm run fuzz` runs
 * the same targets coverage-guided for longer). Every target's properties are in ./targets.ts.
 *
 * Per target: the checked-in corpus replayed, then fast-check over (a) arbitrary bytes and
 * (b) seeds with random edits (overwrite / insert / delete / truncate). FUZZ_RUNS scales (b).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TARGETS } from './targets.js';
import { builtinSeeds, loadCorpus } from './seeds.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

/** A seed with 1–6 random edits. */
function edited(seeds: Uint8Array[]): fc.Arbitrary<Uint8Array> {
  const edit = fc.tuple(fc.nat(4), fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 9 }));
  return fc.tuple(fc.constantFrom(...seeds), fc.array(edit, { minLength: 1, maxLength: 6 })).map(([s, edits]) => {
    const b = Array.from(s);
    for (const [op, pos, bytes] of edits) {
      const at = b.length === 0 ? 0 : pos % b.length;
      if (op === 0) b[at] = bytes[0] as number;
      else if (op === 1) b.splice(at, 0, ...bytes);
      else if (op === 2) b.splice(at, bytes.length);
      else if (op === 3) b.length = at;
      else b[at] = ((b[at] ?? 0) ^ (1 << ((bytes[0] as number) % 8))) & 0xff;
    }
    return Uint8Array.from(b);
  });
}

describe.each(Object.keys(TARGETS))('fuzz target %s', (name) => {
  const target = TARGETS[name]!;
  const seeds = builtinSeeds(name);
  const corpus = loadCorpus(name);

  it('replays the checked-in corpus without a finding', () => {
    expect(corpus.length).toBeGreaterThan(0);
    const outcomes = new Set<string>();
    for (const b of corpus) outcomes.add(target.run(b));
    // The corpus exercises both acceptance and rejection.
    expect(outcomes.size).toBeGreaterThan(1);
  });

  it('seeds are accepted (the properties are not vacuous)', () => {
    const accepted = seeds.map((s) => target.run(s)).filter((o) => o === 'ok' || o === 'verified' || o.startsWith('parsed'));
    expect(accepted.length).toBeGreaterThan(0);
  });

  it('arbitrary bytes: no crash, coded rejections only', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (b) => {
        target.run(b);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it('edited seeds: no crash, canonical-only acceptance, agreement with the references', () => {
    fc.assert(
      fc.property(edited(seeds), (b) => {
        target.run(b);
      }),
      { numRuns: RUNS },
    );
  });
});
