/**
 * `npm run fuzz`: every parser target under the coverage-guided engine (./engine.ts) for a
 * bounded time, starting from the checked-in corpus (fuzz/corpus/). Not part of `npm test`.
 *
 * Environment: FUZZ_SECONDS (per target, default 30), FUZZ_TARGETS (comma list, default all),
 * FUZZ_SEED (default: time-based, printed), FUZZ_OUT (default fuzz/out: new corpus inputs and
 * crashes), FUZZ_MERGE=1 (copy the new corpus inputs into fuzz/corpus), FUZZ_VECTORS (a
 * vectors folder, e.g. test/vectors: (re)write the built-in seeds into fuzz/corpus first).
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fuzz, type FuzzReport } from './engine.js';
import { TARGETS } from './targets.js';
import { CORPUS_DIR, builtinSeeds, dictionary, loadCorpus, registerSignedSeeds } from './seeds.js';

const SECONDS = Number(process.env.FUZZ_SECONDS ?? 30);
const NAMES = (process.env.FUZZ_TARGETS ?? Object.keys(TARGETS).join(',')).split(',').filter(Boolean);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 0x7fffffff);
const OUT = process.env.FUZZ_OUT ?? join(CORPUS_DIR, '..', 'out');
const reports: FuzzReport[] = [];

function writeSeeds(name: string, vectors: string): void {
  const dir = join(CORPUS_DIR, name);
  mkdirSync(dir, { recursive: true });
  for (const b of builtinSeeds(name, vectors))
    writeFileSync(join(dir, createHash('sha256').update(b).digest('hex').slice(0, 16)), b);
}

describe('coverage-guided fuzzing', () => {
  registerSignedSeeds();
  for (const name of NAMES) {
    it(`${name}: ${SECONDS}s without a finding`, () => {
      const target = TARGETS[name];
      if (target === undefined) throw new Error(`unknown target ${name}`);
      if (process.env.FUZZ_VECTORS !== undefined) writeSeeds(name, process.env.FUZZ_VECTORS);
      const seeds = [...loadCorpus(name), ...builtinSeeds(name)];
      const r = fuzz(target, seeds, {
        seconds: SECONDS,
        seed: SEED,
        coverageFilter: ['/src/core/'],
        dictionary: dictionary(name),
        maxLen: name === 'cbor' ? 2048 : 4096,
        outDir: OUT,
      });
      reports.push(r);
      if (process.env.FUZZ_MERGE === '1') {
        const from = join(OUT, `corpus-${name}`);
        if (existsSync(from)) for (const f of readdirSync(from)) copyFileSync(join(from, f), join(CORPUS_DIR, name, f));
      }
      const top = Object.entries(r.outcomes)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      console.log(
        `fuzz ${name.padEnd(12)} seed=${SEED} execs=${r.execs} (${Math.round(r.execs / r.seconds)}/s) corpus=${r.corpus} blocks=${r.blocks} slowest=${r.slowestMs}ms | ${top}`,
      );
      expect(r.crashes, JSON.stringify(r.crashes.slice(0, 3), null, 1)).toEqual([]);
    }, (SECONDS + 60) * 1000);
  }
});
