import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isMemwardenError } from '../../src/core/errors.js';
import { KeyFileSource, parseKeyFile } from '../../src/adapters/keyfile/keyfile.js';

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string | undefined> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return isMemwardenError(e) ? e.code : 'NOT_CODED';
  }
  return undefined;
}

const posix = process.platform !== 'win32';
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'memwarden-keyfile-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('KeyFileSource', () => {
  it('starts empty, puts, gets and lists; the file is 0600 JSON v1', async () => {
    const src = new KeyFileSource(dir);
    expect(await src.list()).toEqual([]);
    expect(await src.get('mac')).toBeUndefined();
    await src.put('mac', new Uint8Array([1, 2, 3]));
    await src.put('agent.seed', new Uint8Array(32).fill(9));
    expect(await src.get('mac')).toEqual(new Uint8Array([1, 2, 3]));
    expect(await src.list()).toEqual(['agent.seed', 'mac']);
    const doc = JSON.parse(await readFile(src.filePath, 'utf8'));
    expect(doc).toEqual({
      v: 1,
      keys: { 'agent.seed': Buffer.alloc(32, 9).toString('base64'), mac: 'AQID' },
    });
    if (posix) expect((await stat(src.filePath)).mode & 0o777).toBe(0o600);
    // A second instance sees the same keys; no temp files are left behind.
    expect(await new KeyFileSource(dir).get('agent.seed')).toEqual(new Uint8Array(32).fill(9));
    expect((await readdir(dir)).sort()).toEqual(['keys.json']);
  });

  it('put never overwrites: STORAGE_CONFLICT and the old secret stays', async () => {
    const src = new KeyFileSource(dir);
    await src.put('k', new Uint8Array([1]));
    expect(await codeOf(src.put('k', new Uint8Array([2])))).toBe('STORAGE_CONFLICT');
    expect(await src.get('k')).toEqual(new Uint8Array([1]));
  });

  it('concurrent puts in one process are serialised (none lost)', async () => {
    const src = new KeyFileSource(dir);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => src.put(`k${i}`, new Uint8Array([i + 1]))),
    );
    expect(await src.list()).toHaveLength(20);
    const dup = await Promise.allSettled([
      src.put('same', new Uint8Array([1])),
      src.put('same', new Uint8Array([2])),
    ]);
    expect(dup.filter((r) => r.status === 'rejected')).toHaveLength(1);
  });

  it('returned secrets are copies; input secrets are copied', async () => {
    const src = new KeyFileSource(dir);
    const s = new Uint8Array([5, 5]);
    const p = src.put('k', s);
    s.fill(0);
    await p;
    const got = (await src.get('k'))!;
    expect(got).toEqual(new Uint8Array([5, 5]));
    got.fill(1);
    expect(await src.get('k')).toEqual(new Uint8Array([5, 5]));
  });

  it('creates a missing data folder (0700)', async () => {
    const sub = path.join(dir, 'a', 'b');
    const src = new KeyFileSource(sub);
    await src.put('k', new Uint8Array([1]));
    if (posix) expect((await stat(sub)).mode & 0o777).toBe(0o700);
  });

  it.runIf(posix)('refuses a file readable by group or others (KEY_SOURCE_FAILED)', async () => {
    const src = new KeyFileSource(dir);
    await src.put('k', new Uint8Array([1]));
    for (const mode of [0o640, 0o604, 0o660, 0o644]) {
      await chmod(src.filePath, mode);
      expect(await codeOf(src.get('k'))).toBe('KEY_SOURCE_FAILED');
      expect(await codeOf(src.list())).toBe('KEY_SOURCE_FAILED');
      expect(await codeOf(src.put('x', new Uint8Array([1])))).toBe('KEY_SOURCE_FAILED');
    }
    await chmod(src.filePath, 0o600);
    expect(await src.get('k')).toEqual(new Uint8Array([1]));
    await chmod(src.filePath, 0o400);
    expect(await src.get('k')).toEqual(new Uint8Array([1]));
  });

  it('coded errors on corrupt files, never raw SyntaxError', async () => {
    const src = new KeyFileSource(dir);
    const bad = [
      'not json',
      '[]',
      'null',
      '{"v":2,"keys":{}}',
      '{"v":1}',
      '{"v":1,"keys":[]}',
      '{"v":1,"keys":{},"extra":1}',
      '{"v":1,"keys":{"k":5}}',
      '{"v":1,"keys":{"k":"not base64!"}}',
      '{"v":1,"keys":{"k":"AQI"}}',
      '{"v":1,"keys":{"k":""}}',
      '{"v":1,"keys":{"bad name":"AQID"}}',
    ];
    for (const text of bad) {
      await writeFile(src.filePath, text, { mode: 0o600 });
      expect([text, await codeOf(src.get('k'))]).toEqual([text, 'KEY_SOURCE_FAILED']);
      expect(await codeOf(() => parseKeyFile(text))).toBe('KEY_SOURCE_FAILED');
    }
  });

  it.runIf(posix)('refuses a key file that is not a regular file', async () => {
    const src = new KeyFileSource(dir, { fileName: 'k.json' });
    await (await import('node:fs/promises')).mkdir(src.filePath);
    expect(await codeOf(src.get('k'))).toBe('KEY_SOURCE_FAILED');
  });

  it('validates names and secrets', async () => {
    const src = new KeyFileSource(dir);
    for (const name of ['', 'a b', 'x'.repeat(65), '../k', 'é']) {
      expect(await codeOf(src.get(name))).toBe('INPUT_INVALID');
      expect(await codeOf(src.put(name, new Uint8Array([1])))).toBe('INPUT_INVALID');
    }
    expect(await codeOf(src.put('k', new Uint8Array(0)))).toBe('INPUT_INVALID');
    expect(await codeOf(() => new KeyFileSource(dir, { fileName: '../evil.json' }))).toBe(
      'INPUT_INVALID',
    );
  });
});
