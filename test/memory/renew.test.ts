/**
 * Lifetimes the caller controls (article Pattern 5, failure-mode table "renew on use"):
 * `Memory.renew`, `update(…, { ttlMs })`, TTL validation on every write, and `getAll({ source })`
 * — on the in-memory backend and PGlite, the same behaviour on both.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testMemory } from './helpers-memory.js';
import { committerOf } from '../../src/memory/log/commit.js';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { PgliteBackend } from '../../src/adapters/pglite/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { MAX_TTL_MS } from '../../src/memory/config.js';
import type { RootStorage } from '../../src/ports/storage.js';
import { ManualClock } from '../../src/testing/doubles.js';

const open: Record<string, () => Promise<RootStorage>> = {
  memory: () => MemoryBackend.open(),
  pglite: () => PgliteBackend.open({}),
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const SECOND = 1_000_000_000n;

async function setup(backend: string) {
  const storage = await open[backend]!();
  const { mem, clock, ledger } = await testMemory(
    storage,
    `renew-${backend}`,
    {},
    new ManualClock(1_700_000_000_000_000_000n, 0n),
  );
  cleanups.push(() => mem.close());
  const alice = (await mem.createPrincipal('user', 'alice')).id;
  const bob = (await mem.createPrincipal('user', 'bob')).id;
  const ops = (await mem.createPrincipal('operator', 'deploy')).id;
  const add = async (principal: string, content: string, extra: Record<string, unknown> = {}) => {
    const r = await mem.add(content, { principal, ...extra });
    if (r.status !== 'stored') throw new Error(`expected stored, got ${r.status}`);
    return r.memory;
  };
  return { mem, ledger, storage, clock, alice, bob, ops, add };
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'OK';
  } catch (e) {
    return isMemwardenError(e) ? e.code : `RAW:${String(e)}`;
  }
}

const BAD_TTLS: unknown[] = [
  0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  MAX_TTL_MS + 1,
  '60000',
  {},
];

for (const backend of Object.keys(open)) {
  describe(`renew and caller TTLs (${backend})`, () => {
    it('renew restores the entry’s own signed lifetime from now; the entry then outlives its first expiry', async () => {
      const { mem, clock, alice, add } = await setup(backend);
      const m = await add(alice, 'the gate code is 4711', { ttlMs: 10_000 });
      const t0 = Date.parse(m.createdAt);
      expect(Date.parse(m.expiresAt!)).toBe(t0 + 10_000);
      clock.advance(8n * SECOND);
      const r = await mem.renew(m.id, { principal: alice });
      expect(Date.parse(r.expiresAt!)).toBe(t0 + 18_000);
      clock.advance(5n * SECOND); // 13 s: past the first expiry, inside the renewed one
      expect((await mem.get(m.id, { principal: alice }))?.expiresAt).toBe(r.expiresAt);
      clock.advance(6n * SECOND); // 19 s
      expect(await mem.get(m.id, { principal: alice })).toBeUndefined();
      expect(await code(mem.renew(m.id, { principal: alice }))).toBe('STORAGE_NOT_FOUND');
    });

    it('renew with an explicit ttl; it never shortens a lifetime; a never-expiring entry stays so', async () => {
      const { mem, clock, alice, add, storage } = await setup(backend);
      const m = await add(alice, 'the boiler is serviced in March', { ttlMs: 60_000 });
      clock.advance(SECOND);
      const longer = await mem.renew(m.id, { principal: alice, ttlMs: 3_600_000 });
      expect(Date.parse(longer.expiresAt!)).toBe(Date.parse(m.createdAt) + 1_000 + 3_600_000);
      const shorter = await mem.renew(m.id, { principal: alice, ttlMs: 5 });
      expect(shorter.expiresAt).toBe(longer.expiresAt);
      const forever = await add(alice, 'my birthday is 3 May', { ttlMs: null });
      expect(forever.expiresAt).toBeUndefined();
      expect(
        (await mem.renew(forever.id, { principal: alice, ttlMs: 1_000 })).expiresAt,
      ).toBeUndefined();
      const audit = await storage.listAudit({ limit: 20, subject: m.id });
      expect(audit.filter((e) => e.action === 'entry.renewed')).toHaveLength(2);
    });

    it('only the owner renews: another principal and an operator get STORAGE_NOT_FOUND; nothing moves', async () => {
      const { mem, clock, alice, bob, ops, add } = await setup(backend);
      const m = await add(alice, 'spare key under the blue pot', { ttlMs: 10_000 });
      clock.advance(5n * SECOND);
      expect(await code(mem.renew(m.id, { principal: bob }))).toBe('STORAGE_NOT_FOUND');
      expect(await code(mem.renew(m.id, { principal: ops }))).toBe('STORAGE_NOT_FOUND');
      expect(await code(mem.renew(m.id, { principal: 'no-such-principal' }))).toBe(
        'STORAGE_NOT_FOUND',
      );
      expect((await mem.get(m.id, { principal: alice }))?.expiresAt).toBe(m.expiresAt);
    });

    it('an OPERATOR entry is readable by agents but not theirs to renew', async () => {
      const { mem, alice, ops, add } = await setup(backend);
      const policy = await add(ops, 'Refunds above 500 EUR need a second approver.', {
        tier: 'OPERATOR',
      });
      expect(await mem.get(policy.id, { principal: alice })).toBeDefined();
      expect(await code(mem.renew(policy.id, { principal: alice }))).toBe('AUTH_FORBIDDEN');
    });

    it('bad TTLs are INPUT_INVALID on add, update and renew, and change nothing', async () => {
      const { mem, alice, add } = await setup(backend);
      const m = await add(alice, 'the wifi password is on the fridge', { ttlMs: 10_000 });
      for (const ttl of BAD_TTLS) {
        expect(
          await code(mem.add(`note ${String(ttl)}`, { principal: alice, ttlMs: ttl as number })),
        ).toBe('INPUT_INVALID');
        expect(
          await code(mem.update(m.id, 'changed', { principal: alice, ttlMs: ttl as number })),
        ).toBe('INPUT_INVALID');
        expect(await code(mem.renew(m.id, { principal: alice, ttlMs: ttl as number }))).toBe(
          'INPUT_INVALID',
        );
      }
      expect(
        await code(mem.renew(m.id, { principal: alice, ttlMs: null as unknown as number })),
      ).toBe('INPUT_INVALID');
      const all = await mem.getAll({ principal: alice });
      expect(all.map((x) => [x.id, x.content, x.expiresAt])).toEqual([
        [m.id, m.content, m.expiresAt],
      ]);
    });

    it('update carries a TTL into the new signed version (null: never expires)', async () => {
      const { mem, alice, add } = await setup(backend);
      const v1 = await add(alice, 'parking spot 12', { ttlMs: 10_000 });
      const v2 = await mem.update(v1.id, 'parking spot 14', { principal: alice, ttlMs: 120_000 });
      expect(v2.supersedes).toBe(v1.id);
      expect(Date.parse(v2.expiresAt!) - Date.parse(v2.createdAt)).toBe(120_000);
      const v3 = await mem.update(v2.id, 'parking spot 15', { principal: alice, ttlMs: null });
      expect(v3.expiresAt).toBeUndefined();
      const v4 = await mem.update(v3.id, 'parking spot 16', { principal: alice });
      // Without a ttl the new version takes its tier's default lifetime (USER_OBSERVED: 30 days).
      expect(Date.parse(v4.expiresAt!) - Date.parse(v4.createdAt)).toBe(30 * 24 * 3_600_000);
    });

    it('getAll({ source }) returns only the principal’s live entries with exactly that source', async () => {
      const { mem, alice, bob, add } = await setup(backend);
      const a1 = await add(alice, 'invoice 1 is paid', { source: 'mail:inbox/1' });
      const a2 = await add(alice, 'invoice 2 is due Friday', { source: 'mail:inbox/1' });
      await add(alice, 'the dentist moved to Tuesday', { source: 'mail:inbox/2' });
      await add(bob, 'bob owes the florist', { source: 'mail:inbox/1' });
      const a3 = await mem.update(a2.id, 'invoice 2 is due Monday', { principal: alice });
      const gone = await add(alice, 'invoice 3 was a scam', { source: 'mail:inbox/1' });
      await mem.delete(gone.id, { principal: alice, reason: 'scam' });
      const got = await mem.getAll({ principal: alice, source: 'mail:inbox/1' });
      expect(got.map((m) => m.id).sort()).toEqual([a1.id, a3.id].sort());
      expect(
        (await mem.getAll({ principal: alice, source: 'mail:inbox/1', limit: 1, offset: 1 })).map(
          (m) => m.id,
        ),
      ).toEqual([got[1]!.id]);
      const bobs = await mem.getAll({ principal: bob, source: 'mail:inbox/1' });
      expect(bobs.map((m) => m.writer)).toEqual([bob]);
      expect(await mem.getAll({ principal: alice, source: 'mail:nowhere' })).toEqual([]);
    });
  });
}

for (const backend of Object.keys(open)) {
  describe(`update is one atomic supersede (${backend})`, () => {
    it('concurrent updates of one entry: exactly one new version, the rest STORAGE_CONFLICT, one live version', async () => {
      const { mem, alice, add } = await setup(backend);
      const v1 = await add(alice, 'the meeting room is 4B');
      const other = mem.add('an unrelated note written at the same moment', { principal: alice });
      const results = await Promise.all(
        [1, 2, 3, 4].map((i) =>
          code(mem.update(v1.id, `the meeting room is ${i}C`, { principal: alice })),
        ),
      );
      expect(results.filter((c) => c === 'OK')).toHaveLength(1);
      expect(results.filter((c) => c === 'STORAGE_CONFLICT')).toHaveLength(3);
      expect((await other).status).toBe('stored'); // a refused update never fails a neighbour's write
      const live = (await mem.getAll({ principal: alice })).filter((m) =>
        m.content.startsWith('the meeting room'),
      );
      expect(live).toHaveLength(1);
      expect(live[0]!.supersedes).toBe(v1.id);
      expect(await mem.get(v1.id, { principal: alice })).toBeUndefined();
    });

    it('the ledger refuses to supersede another principal’s or a missing entry; nothing is written', async () => {
      const { mem, ledger, alice, bob, add } = await setup(backend);
      const a = await add(alice, 'alice keeps her passport in the safe');
      const write = (sup: string) =>
        committerOf(ledger).write({
          writer: bob,
          content: 'bob rewrites history',
          tier: 'USER_OBSERVED',
          kind: 'fact',
          label: 'TRUSTED',
          parents: [],
          weights: [],
          sup,
        });
      expect(await code(write(a.id))).toBe('STORAGE_NOT_FOUND');
      expect(await code(write('00000000-0000-4000-8000-000000000000'))).toBe('STORAGE_NOT_FOUND');
      expect((await mem.get(a.id, { principal: alice }))?.id).toBe(a.id);
      expect(await mem.getAll({ principal: bob })).toEqual([]);
      expect((await mem.history(a.id, { principal: alice })).map((e) => e.action)).toEqual(['add']);
    });
  });
}
