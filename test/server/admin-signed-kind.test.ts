/**
 * The admin API and the investigation view decide "operator" on the signed registry in the
 * log, never the principals table (ADR 0033): a user whose `principals.kind` was edited to
 * `operator` at rest can neither administer keys nor read across principals. Before this
 * change both read the table and the edit granted both.
 */
import { describe, expect, it } from 'vitest';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/index.js';
import { systemClock, systemRandom } from '../../src/adapters/system/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import { Memory } from '../../src/memory/memory.js';
import type { RootStorage } from '../../src/ports/storage.js';
import { MemoryKeySource } from '../../src/testing/doubles.js';
import { keepLedger } from '../helpers/ledger-of.js';
import { pgliteRaw } from '../helpers/raw-store.js';

async function memoryOn(storage: RootStorage, keys: MemoryKeySource, anchor: MemoryKeySource): Promise<Memory> {
  const ledger = await Ledger.open({ storage, keys, anchor, clock: systemClock, random: systemRandom });
  return keepLedger(
    new Memory({ ledger, storage, embedder: new DeterministicEmbedder(), clock: systemClock, random: systemRandom }),
    ledger,
  );
}
const code = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'OK';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
};

describe('operator rights follow the signed registry, not the principals table', () => {
  it('a kind edited to operator at rest grants no admin or cross-principal read', { timeout: 300_000 }, async () => {
    const raw = await pgliteRaw();
    const keys = new MemoryKeySource();
    const anchor = new MemoryKeySource();
    try {
      let mem = await memoryOn(await raw.open(), keys, anchor);
      const alice = (await mem.createPrincipal('user', 'alice')).id;
      const bob = (await mem.createPrincipal('user', 'bob')).id;
      await mem.add('bob keeps his PIN in his wallet', { principal: bob });
      await mem.close();
      await raw.sql("UPDATE principals SET kind = 'operator' WHERE id = $1", [alice]);
      mem = await memoryOn(await raw.open(), keys, anchor);
      expect(await code(mem.adminListPrincipals({ by: alice }))).toBe('AUTH_FORBIDDEN');
      expect(await code(mem.adminIssueKey({ by: alice, principal: bob }))).toBe('AUTH_FORBIDDEN');
      expect(await code(mem.investigate({ principal: alice, owner: bob }))).toBe('AUTH_FORBIDDEN');
      const own = await mem.investigate({ principal: alice });
      expect(own.scope).toBe('own');
      expect(own.rows).toEqual([]);
      await mem.close();
    } finally {
      await raw.close();
    }
  });
});
