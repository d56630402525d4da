/**
 * Bugs the fuzzers found, each pinned by the smallest input that showed it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/core/bytes.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { parseNote, parseVerifierKey } from '../../src/core/merkle/index.js';
import { Memory } from '../../src/open.js';
import { VKEY } from './targets.js';

const codeOf = (f: () => unknown): string => {
  try {
    f();
    return 'OK';
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
};

describe('fuzz findings', () => {
  it('base64 with non-zero pad bits is refused (two spellings of one value); `note` target', () => {
    expect(fromBase64('AA==')).toEqual(Uint8Array.of(0));
    expect(codeOf(() => fromBase64('AB=='))).toBe('INPUT_INVALID');
    expect(codeOf(() => fromBase64('AAB='))).toBe('INPUT_INVALID');
    // The note signature line: the fuzzer's input ended its base64 in `f=` instead of `A=`.
    const sig = `${'A'.repeat(94)}f=`;
    expect(codeOf(() => parseNote(`text\n\n\u2014 k ${sig}\n`))).toBe('LOG_CHECKPOINT_MALFORMED');
    expect(codeOf(() => parseNote(`text\n\n\u2014 k ${'A'.repeat(94)}A=\n`))).toBe('OK');
    // And a verifier key whose key bytes are spelled non-canonically.
    const last = VKEY.at(-2)!;
    const alt = VKEY.slice(0, -2) + String.fromCharCode(last.charCodeAt(0) + 1) + '=';
    expect(codeOf(() => parseVerifierKey(VKEY))).toBe('OK');
    expect(codeOf(() => parseVerifierKey(alt))).toBe('KEY_INVALID');
  });
});

describe('fuzz findings on the real memory (PGlite)', () => {
  let mem: Memory;
  let alice = '';
  beforeAll(async () => {
    mem = await Memory.open({ dataDir: mkdtempSync(join(tmpdir(), 'mw-findings-')), ephemeral: true, embedder: 'deterministic' });
    alice = (await mem.createPrincipal('user', 'alice')).id;
  }, 120_000);
  afterAll(async () => mem?.close());

  const code = async (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => 'OK',
      (e: unknown) => (isMemwardenError(e) ? e.code : `raw ${String(e)}`),
    );

  it('U+0000 in content or source is INPUT_INVALID before anything is written (was STORAGE_FAILED / HTTP 500); `http` target', async () => {
    const size = mem.ledger.log.size;
    const counts = JSON.stringify(await mem.storageBackend.countEntries());
    expect(await code(mem.add('a\u0000b', { principal: alice }))).toBe('INPUT_INVALID');
    expect(await code(mem.add('fine content', { principal: alice, source: 'chat:\u0000' }))).toBe('INPUT_INVALID');
    expect(mem.ledger.log.size).toBe(size);
    expect(JSON.stringify(await mem.storageBackend.countEntries())).toBe(counts);
    // A good write next to a bad one is unaffected (no shared group-commit failure).
    const [good, bad] = await Promise.all([
      code(mem.add('a perfectly ordinary fact', { principal: alice })),
      code(mem.add('bad\u0000write', { principal: alice })),
    ]);
    expect([good, bad]).toEqual(['OK', 'INPUT_INVALID']);
  });

  it('an operator updates its own OPERATOR memory (was STORAGE_FAILED after the new version committed); `http` target', async () => {
    const ops = (await mem.createPrincipal('operator', 'ops')).id;
    const r = await mem.add('the deployment allows refunds up to 50 EUR', { principal: ops, tier: 'OPERATOR' });
    if (r.status !== 'stored') throw new Error('held');
    const size = mem.ledger.log.size;
    const next = await mem.update(r.memory.id, 'the deployment allows refunds up to 20 EUR', { principal: ops });
    expect(mem.ledger.log.size).toBe(size + 1);
    expect(next.supersedes).toBe(r.memory.id);
    expect(await mem.get(r.memory.id, { principal: ops })).toBeUndefined();
    expect((await mem.get(next.id, { principal: alice }))?.content).toContain('20 EUR'); // readable by all
    expect((await mem.history(next.id, { principal: ops })).map((e) => e.action)).toEqual(['add', 'update']);
    // …and still only by its owner: a user may read it, never change it.
    expect(await code(mem.update(next.id, 'refunds unlimited', { principal: alice }))).toBe('AUTH_FORBIDDEN');
    expect(await code(mem.delete(next.id, { principal: alice, reason: 'x' }))).toBe('AUTH_FORBIDDEN');
    expect(await code(mem.delete(next.id, { principal: ops, reason: 'retired' }))).toBe('OK');
    expect(await mem.get(next.id, { principal: alice })).toBeUndefined();
  });

  it('U+0000 in a search query, filter or purge source is INPUT_INVALID, not STORAGE_FAILED', async () => {
    expect(await code(mem.search('a\u0000b', { principal: alice, ranking: 'lexical' }))).toBe('INPUT_INVALID');
    expect(await code(mem.search('ab', { principal: alice, filters: { source: 'a\u0000' } }))).toBe('INPUT_INVALID');
    expect(await code(mem.purge({ principal: alice, source: 'a\u0000' }))).toBe('INPUT_INVALID');
  });
});
