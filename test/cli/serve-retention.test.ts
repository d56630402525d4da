/**
 * Issue 17 finding 8: `serve` could not set quotas (and config.ts claimed its defaults were the
 * article's table). Now `serve --quota TIER=N`, `--ttl`, `--ttl-ceiling` and `--config FILE`
 * set them, checked at start-up (a bad setting exits with a coded error before serving).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordHostile } from '../helpers/hostile-report.js';

const BIN = resolve('dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'mw-serve-ret-'));
const env = { ...process.env, MEMWARDEN_EMBEDDER: 'deterministic' };
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function cli(data: string, ...args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args, '--data', data], { env, encoding: 'utf8' });
}

function serve(data: string, ...extra: string[]): Promise<string> {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--port', '0', '--no-pglite-worker', '--data', data, ...extra],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`serve did not start: ${out}`)), 90_000);
    const poll = setInterval(() => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        clearInterval(poll);
        res(m[1]!);
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(poll);
      clearTimeout(t);
      rej(new Error(`serve exited ${code}: ${out}`));
    });
  });
}

async function flood(url: string, key: string, n: number, tier?: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/v1/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        content: `${tier ?? 'Observed'} flood: item ${i * 13} weighs ${i * 7 + 3} kilograms and ships ${['north', 'south', 'east', 'west'][i]}.`,
        ...(tier === undefined ? {} : { tier }),
      }),
    });
    out.push(res.status);
    await res.text();
  }
  return out;
}

describe('serve sets retention and quotas', () => {
  it('--quota and --config: a flood past the configured daily quota is 429', async () => {
    const data = join(dir, 'a');
    const p = JSON.parse(cli(data, 'principals', 'add', 'alice').stdout) as { apiKey: string };
    const cfg = join(dir, 'memwarden.json');
    writeFileSync(cfg, JSON.stringify({ retention: { quotaPerDay: { EXTERNAL_TOOL: 1 } } }));
    const url = await serve(data, '--quota', 'USER_OBSERVED=2', '--config', cfg);
    const observed = await flood(url, p.apiKey, 4);
    expect(observed).toEqual([201, 201, 429, 429]);
    expect(await flood(url, p.apiKey, 2, 'EXTERNAL_TOOL')).toEqual([201, 429]);
    recordHostile({
      suite: 'serve-retention',
      family: 'quota floods',
      case: '4 writes under serve --quota USER_OBSERVED=2',
      channel: 'cli serve',
      held: observed[3] === 429,
      outcome: observed.join(','),
    });
  }, 180_000);

  it('a bad setting is refused at start-up with a coded error', () => {
    const data = join(dir, 'b');
    for (const args of [
      ['--quota', 'USER_OBSERVED=-1'],
      ['--quota', 'NOT_A_TIER=3'],
      ['--ttl', 'EXTERNAL_WEB=none'], // past the tier's ceiling: never-expiring web memory
    ]) {
      const r = spawnSync(
        process.execPath,
        [BIN, 'serve', '--port', '0', '--data', data, ...args],
        { env, encoding: 'utf8', timeout: 60_000 },
      );
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^error INPUT_INVALID/m);
    }
  }, 180_000);
});
