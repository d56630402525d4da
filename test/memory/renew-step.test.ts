/**
 * Renew-on-use moves a retrieved entry's expiry only when it gains at least 1% of the tier's
 * TTL: hot entries are not rewritten on every search, and a used entry still lives ≥ 99% of
 * its TTL past its last use.
 */
import { describe, expect, it } from 'vitest';
import { testMemory } from './helpers-memory.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { retentionConfig } from '../../src/memory/config.js';

const MS = 1_000_000n;

describe('renew-on-use step', () => {
  it('renews only when the expiry gains ≥ 1% of the TTL', async () => {
    const storage = await PgliteBackend.open({});
    const { mem, clock } = await testMemory(storage, 'renew-step', {
      retention: retentionConfig({ ttlMs: { USER_OBSERVED: 100_000 } }),
    });
    try {
      const alice = (await mem.createPrincipal('user', 'alice')).id;
      const added = await mem.add('Alice keeps the spare key under the mat', { principal: alice });
      if (added.status !== 'stored') throw new Error('not stored');
      const expiryOf = async () => {
        const r = await mem.search('spare key', { principal: alice, limit: 1 });
        expect(r.results).toHaveLength(1);
        return r.results[0]!.memory.expiresAt;
      };
      const e0 = added.memory.expiresAt;
      clock.advance(500n * MS); // gains 0.5% of the TTL: not renewed
      expect(await expiryOf()).toBe(e0);
      expect((await mem.get(added.memory.id, { principal: alice }))?.expiresAt).toBe(e0);
      clock.advance(1_000n * MS); // now 1.5%: renewed to now + TTL
      const e1 = await expiryOf();
      expect(e1).not.toBe(e0);
      expect(Date.parse(e1!) - Date.parse(e0!)).toBeGreaterThanOrEqual(1_500);
      expect((await mem.get(added.memory.id, { principal: alice }))?.expiresAt).toBe(e1);
    } finally {
      await mem.close();
    }
  });
});
