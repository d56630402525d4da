/**
 * One door for writes (issue 17, ADR 0029): the ledger cannot write; the commit capability is a
 * module only the write path imports (the dependency-cruiser rule `commit-only-from-the-write-
 * path`, checked here as well as by `npm run lint`); channels get a read-only view of the
 * ledger, and the library's root does not export one that writes.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { Ledger } from '../../src/memory/log/ledger.js';
import type { Memory } from '../../src/memory/memory.js';
import { testMemory } from './helpers-memory.js';

const EXEMPT = [
  /^src\/memory\/write\//,
  /^src\/memory\/log\/commit\.ts$/,
  /^src\/eval\/memlineage\/(world|timings)\.ts$/,
  /^src\/eval\/authselect\/ledger-graph\.ts$/,
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

let mem: Memory;
beforeAll(async () => {
  ({ mem } = await testMemory(await MemoryBackend.open(), 'one-door'));
});
afterAll(() => mem.close());

describe('one door for writes', () => {
  it('the Ledger has no write, submit or tombstone', () => {
    for (const m of ['write', 'submit', 'tombstone'])
      expect(m in Ledger.prototype, `Ledger.prototype.${m}`).toBe(false);
  });

  it('only the write path (and the named eval exemption) imports the commit capability', () => {
    const importers = files('src')
      .map((f) => relative(process.cwd(), f))
      .filter((f) =>
        /from '[^']*log\/commit\.js'|from '\.\/commit\.js'/.test(readFileSync(f, 'utf8')),
      );
    expect(importers.length).toBeGreaterThan(0);
    for (const f of importers)
      expect(
        EXEMPT.some((r) => r.test(f)),
        f,
      ).toBe(true);
    const cfg = readFileSync('.dependency-cruiser.cjs', 'utf8');
    expect(cfg).toContain("name: 'commit-only-from-the-write-path'");
  });

  it('Memory.ledger is a frozen view: verify, prove, keys — no storage, host keys, log or writes', () => {
    const v = mem.ledger as unknown as Record<string, unknown>;
    expect(Object.isFrozen(v)).toBe(true);
    for (const k of ['storage', 'keys', 'log', 'registry', 'write', 'submit', 'tombstone'])
      expect(v[k], k).toBeUndefined();
    expect(typeof v.verifyEntry).toBe('function');
    expect(typeof mem.ledger.size).toBe('number');
  });

  it('the library root exports no Ledger', async () => {
    const root = await import('../../src/index.js');
    expect('Ledger' in root).toBe(false);
  });
});
