/**
 * Tests read nothing outside this repository (issue 24): `npm test` must pass on a fresh clone
 * with nothing beside it. Every file-system read of a path in the repository's parent folder
 * but outside the repository itself (`../shared`, a sibling checkout) throws and fails the test
 * file, even if the caller swallows the error. Paths elsewhere (the temp folder, system binaries)
 * are not the repository's neighbours and stay allowed.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const parent = path.dirname(repo);
const violations: string[] = [];

function outside(p: unknown): string | undefined {
  let s: string;
  if (typeof p === 'string') s = p;
  else if (p instanceof URL) {
    if (p.protocol !== 'file:') return undefined;
    s = fileURLToPath(p);
  } else if (Buffer.isBuffer(p)) s = p.toString();
  else return undefined;
  const abs = path.resolve(s);
  if (abs === repo || abs.startsWith(repo + path.sep)) return undefined;
  if (abs.startsWith(parent + path.sep)) return abs;
  return undefined;
}

function guard<F extends (...args: never[]) => unknown>(name: string, f: F): F {
  return function (this: unknown, ...args: never[]) {
    const bad = outside(args[0]);
    if (bad !== undefined) {
      violations.push(`${name}(${bad})`);
      throw Object.assign(new Error(`test read outside the repository: ${bad}`), {
        code: 'EACCES',
      });
    }
    return f.apply(this, args);
  } as F;
}

const SYNC = [
  'readFileSync',
  'openSync',
  'readdirSync',
  'statSync',
  'lstatSync',
  'existsSync',
  'accessSync',
  'createReadStream',
  'opendirSync',
] as const;
const CALLBACK = ['readFile', 'open', 'readdir', 'stat', 'lstat', 'access', 'opendir'] as const;
const PROMISES = ['readFile', 'open', 'readdir', 'stat', 'lstat', 'access', 'opendir'] as const;
const f = fs as unknown as Record<string, (...a: never[]) => unknown>;
for (const n of [...SYNC, ...CALLBACK])
  if (typeof f[n] === 'function') f[n] = guard(`fs.${n}`, f[n]);
const p = fsp as unknown as Record<string, (...a: never[]) => unknown>;
for (const n of PROMISES) if (typeof p[n] === 'function') p[n] = guard(`fs/promises.${n}`, p[n]);
syncBuiltinESMExports();

afterAll(() => {
  if (violations.length > 0) {
    throw new Error(
      `this test file read outside the repository:\n  ${[...new Set(violations)].join('\n  ')}`,
    );
  }
});

/** For the guard's own test. */
export const confinement = {
  repo,
  parent,
  outside,
  /** The violations recorded so far, cleared (the guard's own test reads outside on purpose). */
  take: (): string[] => violations.splice(0),
};
