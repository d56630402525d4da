/**
 * `memwarden serve` on a store without an operator creates one (issue 24: serve started with no
 * principals, so nothing worked until it was stopped and `principals add` was run): the key is
 * written to <data>/operator-key with mode 0600 and printed once, never logged; a restart
 * prints nothing; MEMWARDEN_OPERATOR_KEY supplies the key instead. With it, the admin API
 * provisions a platform key without a restart.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = resolve('dist/cli/main.js');
const baseEnv = { ...process.env, MEMWARDEN_EMBEDDER: 'deterministic', MEMWARDEN_DATABASE_URL: '' };
delete (baseEnv as Record<string, string | undefined>).MEMWARDEN_OPERATOR_KEY;
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  children.forEach((c) => c.kill('SIGKILL'));
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function serve(data: string, env: NodeJS.ProcessEnv = baseEnv): Promise<{ child: ChildProcess; url: string; out: () => string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', data], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`serve did not start: ${out}`)), 120_000);
    const poll = setInterval(() => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        clearInterval(poll);
        res({ child, url: m[1]!, out: () => out });
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(poll);
      rej(new Error(`serve exited ${code}: ${out}`));
    });
  });
}
const stop = (c: ChildProcess): Promise<void> =>
  new Promise((r) => {
    c.once('exit', () => r());
    c.kill('SIGTERM');
  });
const get = async (url: string, key: string, path: string, init: RequestInit = {}) => {
  const res = await fetch(url + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
};

describe('serve bootstraps an operator on first start', () => {
  it('writes the key to a 0600 file, prints it once, never again; the key administers at once', async () => {
    const data = mkdtempSync(join(tmpdir(), 'mw-boot-'));
    dirs.push(data);
    const s = await serve(data);
    const file = join(data, 'operator-key');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = readFileSync(file, 'utf8').trim();
    expect(key).toMatch(/^mwk_/);
    const me = await get(s.url, key, '/v1/me');
    expect(me.json.kind).toBe('operator');
    // the quickstart's next step, with no restart: a platform principal and its key
    const p = await get(s.url, key, '/v1/admin/principals', { method: 'POST', body: JSON.stringify({ kind: 'agent', name: 'my-app', scope: 'platform' }) });
    expect(p.status).toBe(201);
    const add = await get(s.url, p.json.key.apiKey, '/v1/memories', { method: 'POST', body: JSON.stringify({ content: 'alice likes jazz' }), headers: { 'x-memwarden-user-id': 'alice' } });
    expect(add.status).toBe(201);
    // printed exactly once: the key line, and nowhere in the JSON log lines
    expect(s.out().split(key).length - 1).toBe(1);
    await stop(s.child);

    const again = await serve(data);
    expect(again.out()).not.toContain('operator');
    expect(again.out()).not.toContain(key);
    expect((await get(again.url, key, '/v1/me')).status).toBe(200);
    expect(readFileSync(file, 'utf8').trim()).toBe(key);
    await stop(again.child);
  }, 300_000);

  it('takes MEMWARDEN_OPERATOR_KEY instead, writes no file and does not print it', async () => {
    const data = mkdtempSync(join(tmpdir(), 'mw-boot-env-'));
    dirs.push(data);
    const key = 'mwk_' + 'k'.repeat(43);
    const s = await serve(data, { ...baseEnv, MEMWARDEN_OPERATOR_KEY: key });
    expect(existsSync(join(data, 'operator-key'))).toBe(false);
    expect(s.out()).not.toContain(key);
    expect((await get(s.url, key, '/v1/me')).json.kind).toBe('operator');
    await stop(s.child);
  }, 300_000);
});
