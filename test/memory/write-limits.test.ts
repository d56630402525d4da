/**
 * Issue 17 findings 2 and 8 on the write path, on PGlite and the PostgreSQL server:
 * - a source URI of ~2,000 CJK characters passed the character limit and overflowed the `uri`
 *   index (bytes): the whole group commit failed, other principals' concurrent writes too;
 * - an EXTERNAL_WEB write with `ttlMs: null` from an `external` principal never expired;
 * - every caller string is bounded in code points and bytes (NUL, lone surrogates refused);
 * - quotas are what the configuration says.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { testMemory } from './helpers-memory.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { ARTICLE_QUOTAS, DEFAULT_RETENTION, retentionConfig } from '../../src/memory/config.js';
import type { MemoryOptions } from '../../src/memory/memory.js';
import { testBackends } from '../helpers/backends.js';
import { recordHostile } from '../helpers/hostile-report.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    const r = (await p) as { status?: string };
    return r?.status === 'pending_review' ? 'HELD' : 'OK';
  } catch (e) {
    return isMemwardenError(e) ? e.code : `RAW:${String(e)}`;
  }
}

for (const b of testBackends()) {
  describe(`write limits (${b.name})`, { timeout: 180_000 }, () => {
    afterAll(() => b.cleanup());

    async function setup(extra: Partial<Omit<MemoryOptions, 'ledger' | 'storage' | 'clock' | 'random'>> = {}) {
      const storage = await b.open();
      const { mem, clock } = await testMemory(storage, `limits-${b.name}`, extra);
      cleanups.push(() => mem.close());
      const alice = (await mem.createPrincipal('user', 'alice')).id;
      const bob = (await mem.createPrincipal('user', 'bob')).id;
      const web = (await mem.createPrincipal('external', 'crawler')).id;
      return { mem, storage, clock, alice, bob, web };
    }

    it('a ~2,000-CJK-character source is refused in bytes before the commit; other principals’ concurrent writes all commit', async () => {
      const { mem, storage, alice, bob } = await setup({ retention: retentionConfig({ nearDuplicateThreshold: null }) });
      // 2,000 varied CJK code points, 6,000 UTF-8 bytes (varied: a repeated one compresses to fit).
      const cjk = Array.from({ length: 2_000 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20_000))).join('');
      const before = await storage.countEntries({});
      const writes = [
        mem.add('Bob reads a long page.', { principal: bob, source: `https://example.test/${cjk}` }),
        ...Array.from({ length: 24 }, (_, i) => mem.add(`Alice note ${i} about topic ${i * 7}.`, { principal: alice })),
      ];
      const outs = await Promise.all(writes.map(outcome));
      expect(outs).toEqual(['INPUT_TOO_LARGE', ...Array(24).fill('OK')]);
      const after = await storage.countEntries({});
      const n = (cs: { count: number }[]) => cs.reduce((s, c) => s + c.count, 0);
      expect(n(after) - n(before)).toBe(24);
      // Up to the bound in bytes is accepted; one more byte is refused.
      const at = 'a'.repeat(2048 - 'https://x.test/'.length);
      expect(await outcome(mem.add('Bob at the bound.', { principal: bob, source: `https://x.test/${at}` }))).toBe('OK');
      expect(await outcome(mem.add('Bob over the bound.', { principal: bob, source: `https://x.test/${at}b` }))).toBe('INPUT_TOO_LARGE');
      recordHostile({
        suite: 'write-limits',
        family: 'long multi-byte strings',
        case: 'source of 2,000 CJK characters (6,000 bytes) beside 24 other writes in one group commit',
        channel: b.name,
        held: outs[0] === 'INPUT_TOO_LARGE' && outs.slice(1).every((o) => o === 'OK'),
        outcome: `${outs[0]}; others ${[...new Set(outs.slice(1))].join(',')}`,
      });
    });

    it('no immortal untrusted memory: EXTERNAL_WEB ttlMs null (or past the ceiling) is refused unless an operator’s config allows it', async () => {
      const { mem, web } = await setup();
      for (const ttlMs of [null, 8 * 24 * 3_600_000]) {
        const r = await mem.add('Crawled: the museum opens at 9.', { principal: web, tier: 'EXTERNAL_WEB', ttlMs }).catch((e: unknown) => e);
        expect(isMemwardenError(r) && r.code).toBe('INPUT_INVALID');
        expect(isMemwardenError(r) && r.details).toMatchObject({ field: 'ttlMs', reason: 'ttl_ceiling' });
        recordHostile({
          suite: 'write-limits',
          family: 'immortal TTLs',
          case: `EXTERNAL_WEB from an external principal, ttlMs ${String(ttlMs)}`,
          channel: b.name,
          held: isMemwardenError(r) && r.code === 'INPUT_INVALID',
          outcome: isMemwardenError(r) ? r.code : 'stored',
        });
      }
      const ok = await mem.add('Crawled: the museum opens at 10.', { principal: web, tier: 'EXTERNAL_WEB', ttlMs: 3_600_000 });
      expect(ok.status).toBe('stored');
      if (ok.status === 'stored') expect(ok.memory.expiresAt).toBeDefined();
      // An operator's configuration may allow it.
      const open = await setup({ retention: retentionConfig({ ttlCeilingMs: { EXTERNAL_WEB: null } }) });
      const kept = await open.mem.add('Crawled: the museum is closed on Mondays.', { principal: open.web, tier: 'EXTERNAL_WEB', ttlMs: null });
      expect(kept.status).toBe('stored');
      if (kept.status === 'stored') expect(kept.memory.expiresAt).toBeUndefined();
    });

    it('every caller string is bounded in code points and bytes; NUL and lone surrogates are refused; nothing is written', async () => {
      const { mem, storage, alice } = await setup();
      const before = JSON.stringify(await storage.countEntries({}));
      const cases: [string, Parameters<typeof mem.add>[1] & { content?: string }, string][] = [
        ['content 64 KiB + 1 byte', { principal: alice, content: 'é'.repeat(32_768) + 'x' }, 'INPUT_TOO_LARGE'],
        ['content with NUL', { principal: alice, content: 'a\u0000b' }, 'INPUT_INVALID'],
        ['content with a lone surrogate', { principal: alice, content: 'a\ud800b' }, 'INPUT_INVALID'],
        ['kind of 65 code points', { principal: alice, kind: 'k'.repeat(65) }, 'INPUT_TOO_LARGE'],
        ['threadId of 300 non-BMP code points (1,200 bytes)', { principal: alice, threadId: '𝄞'.repeat(300) }, 'INPUT_TOO_LARGE'],
        ['source with a lone low surrogate', { principal: alice, source: 'chat:\udc00' }, 'INPUT_INVALID'],
      ];
      for (const [name, o, expected] of cases) {
        const { content, ...opts } = o;
        const got = await outcome(mem.add(content ?? 'A harmless note.', opts));
        expect(got, name).toBe(expected);
        recordHostile({ suite: 'write-limits', family: 'oversize / NUL / lone surrogates', case: name, channel: b.name, held: got === expected, outcome: got });
      }
      expect(JSON.stringify(await storage.countEntries({}))).toBe(before);
      // Non-BMP content within the bounds is fine.
      expect(await outcome(mem.add('Music: 𝄞 and 😀 are fine.', { principal: alice }))).toBe('OK');
    });

    it('quotas are the configuration’s: a flood past the daily limit is refused, nothing over it is stored', async () => {
      const { mem, storage, alice } = await setup({
        retention: retentionConfig({ quotaPerDay: { USER_OBSERVED: 3 }, nearDuplicateThreshold: null }),
      });
      const outs = await Promise.all(
        Array.from({ length: 8 }, (_, i) => outcome(mem.add(`Flood ${i} ${'z'.repeat(i)}.`, { principal: alice }))),
      );
      expect(outs.filter((o) => o === 'OK')).toHaveLength(3);
      expect(outs.filter((o) => o === 'QUOTA_EXCEEDED')).toHaveLength(5);
      const n = (await storage.countEntries({})).reduce((s, c) => s + c.count, 0);
      expect(n).toBe(3);
      recordHostile({ suite: 'write-limits', family: 'quota floods', case: '8 concurrent writes, quota 3/day', channel: b.name, held: n === 3, outcome: `${n} stored, 5 QUOTA_EXCEEDED` });
    });
  });
}

describe('quota defaults are documented as what they are', () => {
  it('the defaults are 1,000× the article’s table where it has one (and the article’s is available)', () => {
    expect(ARTICLE_QUOTAS).toMatchObject({ USER_OBSERVED: 50, USER_VERIFIED: 10 });
    expect(DEFAULT_RETENTION.quotaPerDay.USER_OBSERVED).toBe(1000 * 50);
    expect(DEFAULT_RETENTION.quotaPerDay.USER_VERIFIED).toBe(1000 * 10);
    // A configuration with the article's table is accepted as such.
    expect(retentionConfig({ quotaPerDay: ARTICLE_QUOTAS }).quotaPerDay.USER_OBSERVED).toBe(50);
    // A default TTL past its tier's ceiling is a configuration error, not a silent clamp.
    expect(() => retentionConfig({ ttlMs: { EXTERNAL_WEB: null } })).toThrow(/ttlCeilingMs/);
  });
});
