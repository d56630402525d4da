/**
 * `memwarden serve` runs the embedded store's PGlite in a worker thread by default (ADR 0028).
 * If that thread dies, serve must not go on answering every request with an error: it logs the
 * loss and exits with code 70 for its supervisor, and the data folder reopens intact.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = resolve('dist/cli/main.js');
const KILLER = resolve('test/fixtures/kill-pglite-worker.mjs');
const env = { ...process.env, MEMWARDEN_EMBEDDER: 'deterministic', MEMWARDEN_DATABASE_URL: '' };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function serve(
  data: string,
  extra: string[] = [],
): Promise<{ child: ChildProcess; url: string; out: () => string }> {
  const child = spawn(
    process.execPath,
    ['--import', KILLER, BIN, 'serve', '--port', '0', '--data', data, ...extra],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`serve did not start: ${out}`)), 90_000);
    const poll = setInterval(() => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      // The logger's 'memwarden serving' line is written asynchronously: it may follow the
      // listening line (plain stdout) by a moment.
      if (m && out.includes('memwarden serving')) {
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

/** A fresh store with one principal; its API key. */
function init(data: string): string {
  const i = spawnSync(process.execPath, [BIN, 'init', '--data', data], { env, encoding: 'utf8' });
  expect(i.status, i.stderr).toBe(0);
  const r = spawnSync(process.execPath, [BIN, 'principals', 'add', 'writer', '--data', data], {
    env,
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { apiKey: string }).apiKey;
}

const add = (url: string, key: string, content: string): Promise<Response> =>
  fetch(`${url}/v1/memories`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  });

describe('serve: the PGlite worker thread', () => {
  it(
    'is the default; when it dies serve exits with code 70 and the folder reopens',
    { timeout: 180_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mw-serve-lost-'));
      dirs.push(dir);
      const data = join(dir, 'data');
      const key = init(data);
      const s = await serve(data);
      expect(s.out()).toMatch(/"pgliteWorker":true/);
      const r = await add(s.url, key, 'written before the database thread died');
      expect(r.status).toBe(201);
      const { id } = (await r.json()) as { id: string };
      const exited = new Promise<number | null>((res) => s.child.once('exit', (code) => res(code)));
      s.child.kill('SIGUSR2'); // the preload terminates the worker thread
      expect(await exited).toBe(70);
      expect(s.out()).toMatch(/storage lost: exiting/);

      // A restart finds the acknowledged write (in process this time).
      const again = await serve(data, ['--no-pglite-worker']);
      expect(again.out()).toMatch(/"pgliteWorker":false/);
      const got = await fetch(`${again.url}/v1/memories/${id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(got.status).toBe(200);
      const stopped = new Promise((res) => again.child.once('exit', res));
      again.child.kill('SIGTERM');
      await stopped;
    },
  );
});
