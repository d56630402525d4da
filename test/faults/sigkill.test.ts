/**
 * Crash safety (issue 3, "Bad input and faults"): `memwarden serve` is SIGKILLed while
 * concurrent clients write; after restart every acknowledged write is present and verifies,
 * the whole log audits clean, and the last checkpoint before the crash is consistent with the
 * log after it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/core/bytes.js';
import { verifyConsistency } from '../../src/core/merkle/index.js';
import { Memory } from '../../src/open.js';

const BIN = resolve('dist/cli/main.js');
const env = { ...process.env, MEMWARDEN_EMBEDDER: 'deterministic', MEMWARDEN_DATABASE_URL: '' };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function startServe(data: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--data', data, '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((res, rej) => {
    let out = '';
    const t = setTimeout(() => rej(new Error(`serve did not start: ${out}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        res({ child, url: m[1]! });
      }
    });
    child.once('exit', (code) => rej(new Error(`serve exited ${code}: ${out}`)));
  });
}

async function post(url: string, key: string, path: string, body: unknown): Promise<Record<string, any> | undefined> {
  try {
    const r = await fetch(url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    return r.status === 201 ? ((await r.json()) as Record<string, any>) : undefined;
  } catch {
    return undefined; // the connection died with the server: not acknowledged
  }
}

describe('SIGKILL during concurrent writes', () => {
  for (let trial = 0; trial < 3; trial++) {
    it(`trial ${trial}: no acknowledged write is lost and the log verifies`, async () => {
      const data = mkdtempSync(join(tmpdir(), 'mw-kill-'));
      dirs.push(data);
      const add = spawnSync(process.execPath, [BIN, 'principals', 'add', 'writer', '--data', data], { env, encoding: 'utf8' });
      expect(add.status).toBe(0);
      const key = (JSON.parse(add.stdout) as { apiKey: string }).apiKey;

      const { child, url } = await startServe(data);
      // A checkpoint taken before the crash.
      for (let i = 0; i < 5; i++) await post(url, key, '/v1/memories', { content: `warm-up ${i}` });
      const cpRes = await fetch(url + '/v1/log/checkpoint', { headers: { authorization: `Bearer ${key}` } });
      const before = (await cpRes.json()) as { size: number; root: string };

      const acked: string[] = [];
      let stop = false;
      const writers = Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const r = await post(url, key, '/v1/memories', { content: `writer ${w} fact ${i} trial ${trial}` });
          if (r !== undefined) acked.push(r.id as string);
          else if (stop) break;
        }
      });
      await new Promise((r) => setTimeout(r, 400 + Math.floor(Math.random() * 800)));
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await exited;
      expect(acked.length).toBeGreaterThan(0);

      const mem = await Memory.open({ dataDir: data, embedder: 'deterministic', postgres: '' });
      try {
        const principal = (await mem.authenticate(key))!;
        for (const id of acked) {
          const v = await mem.ledger.verifyEntry(id);
          expect(v.ok, `acknowledged ${id} must verify`).toBe(true);
          expect((await mem.get(id, { principal }))?.id).toBe(id);
        }
        const audit = await mem.ledger.log.audit();
        expect(audit.size).toBeGreaterThanOrEqual(acked.length + 5);
        const after = await mem.checkpoint();
        const proof = await mem.ledger.log.consistencyProof(before.size, after.size);
        expect(verifyConsistency(before.size, after.size, proof, fromBase64(before.root), fromBase64(after.root))).toBe(true);
      } finally {
        await mem.close();
      }
    }, 120_000);
  }
});
