/**
 * The guard of test/setup/confine-reads.ts is installed in every test file (vitest setupFiles)
 * and no test source names a path outside the repository.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { confinement } from './confine-reads.js';

describe('tests are confined to the repository', () => {
  it('a read of a sibling folder of the repository throws', () => {
    const sibling = path.join(confinement.parent, 'shared', 'vectors', 'README.md');
    expect(confinement.outside(sibling)).toBe(sibling);
    expect(() => readFileSync(sibling)).toThrow(/outside the repository/);
    expect(confinement.take()).toEqual([`fs.readFileSync(${sibling})`]);
    // What the guard allows: the repository itself and paths that are not its neighbours.
    expect(confinement.outside(path.join(confinement.repo, 'package.json'))).toBeUndefined();
    expect(confinement.outside('/tmp/x')).toBeUndefined();
  });

  it('no test, fixture or helper source names ../shared', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name !== 'vectors' && e.name !== 'node_modules') walk(p);
        } else if (/\.(ts|mts|mjs|js|json)$/.test(e.name) && !p.endsWith('confine-reads.test.ts')) {
          if (/\.\.\/(\.\.\/)*shared\//.test(readFileSync(p, 'utf8')))
            offenders.push(path.relative(confinement.repo, p));
        }
      }
    };
    walk(path.join(confinement.repo, 'test'));
    expect(offenders).toEqual([]);
  });
});
