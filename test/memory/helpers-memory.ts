/**
 * @module test/memory/helpers-memory
 * A `Memory` over a given store with the test doubles most memory tests use: a manual clock
 * (unless one is given), a seeded random source, in-memory keys and the deterministic
 * embedder. `extra`: further `Memory` options (retention, lineage, policy, detection …).
 */
import { DeterministicEmbedder } from '../../src/adapters/embeddings/deterministic.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { Memory, type MemoryOptions } from '../../src/memory/memory.js';
import type { Clock } from '../../src/ports/clock.js';
import type { RootStorage } from '../../src/ports/storage.js';
import { ManualClock, MemoryKeySource, SeededRandom } from '../../src/testing/doubles.js';

export interface TestMemory<C extends Clock> {
  readonly mem: Memory;
  readonly ledger: Ledger;
  readonly clock: C;
  readonly random: SeededRandom;
}

export async function testMemory<C extends Clock = ManualClock>(
  storage: RootStorage,
  seed: string,
  extra: Partial<Omit<MemoryOptions, 'ledger' | 'storage' | 'clock' | 'random'>> = {},
  clock?: C,
): Promise<TestMemory<C>> {
  const c = clock ?? (new ManualClock() as unknown as C);
  const random = new SeededRandom(seed);
  const ledger = await Ledger.open({ storage, keys: new MemoryKeySource(), clock: c, random });
  const mem = new Memory({
    ledger,
    storage,
    embedder: new DeterministicEmbedder(),
    clock: c,
    random,
    ...extra,
  });
  return { mem, ledger, clock: c, random };
}
