/**
 * Key rotation and revocation under load (issue 17 finding 1), with real processes:
 * - PostgreSQL: two `memwarden serve` processes share one schema and key folder and take
 *   concurrent HTTP writes from several principals while a third process — the CLI —
 *   rotates their keys (`memwarden principals rotate`) and revokes one (`memwarden revoke`).
 *   Every write answered 201 must read back (200) from both servers, and `memwarden audit`
 *   must be clean. Before: ~8 % of acknowledged writes failed verification (KEY_EXPIRED /
 *   KEY_REVOKED), read 404 for ever, and the audit failed.
 * - Embedded: the embedded store is locked to one process, so the CLI cannot change keys
 *   under a running `serve`; the same load runs through the library with PGlite in its worker
 *   thread (serve's configuration), keys changed in process while HTTP-like concurrent writes
 *   flow, then the store is closed and `memwarden audit` runs on it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { isMemwardenError } from '../../src/core/errors.js';
import { Memory } from '../../src/open.js';
import { recordHostile } from '../helpers/hostile-report.js';

const BIN = resolve('dist/cli/main.js');
const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const env = {
  ...process.env,
  MEMWARDEN_EMBEDDER: 'deterministic',
  MEMWARDEN_DATABASE_URL: '',
  MEMWARDEN_DATA: '',
};
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function startServe(args: string[]): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((res, rej) => {
    let out = '';
    const t = setTimeout(() => rej(new Error(`serve did not start: ${out}`)), 120_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        res(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => rej(new Error(`serve exited ${code}: ${out}`)));
  });
}

describe.runIf(url !== undefined)('key changes under load: PostgreSQL, three processes', () => {
  it(
    'no acknowledged write is lost while the CLI rotates and revokes keys; audit clean',
    { timeout: 900_000 },
    async () => {
      const schema = `faults_rot_${process.pid}_${Date.now().toString(36)}`;
      const dbUrl = `${url}${url!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
      const data = mkdtempSync(join(tmpdir(), 'mw-rot-'));
      dirs.push(data);
      // The schema must exist, or the search path falls through to `public`.
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.end();
      const cli = (...args: string[]) => {
        const r = spawnSync(process.execPath, [BIN, ...args, '--data', data, '--postgres', dbUrl], {
          env,
          encoding: 'utf8',
        });
        return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
      };
      try {
        const principals: { id: string; key: string }[] = [];
        for (let i = 0; i < 4; i++) {
          const p = cli('principals', 'add', `w${i}`, '--kind', 'user');
          expect(p.code, p.err).toBe(0);
          const j = JSON.parse(p.out) as { id: string; apiKey: string };
          principals.push({ id: j.id, key: j.apiKey });
        }
        const servers = [
          await startServe(['--data', data, '--postgres', dbUrl]),
          await startServe(['--data', data, '--postgres', dbUrl]),
        ];
        const acked: { id: string; key: string }[] = [];
        const refused: Record<string, number> = {};
        let stop = false;
        const writers = principals.flatMap((p, pi) =>
          [0, 1].map(async (w) => {
            for (let i = 0; !stop; i++) {
              const base = servers[(pi + w + i) % 2]!;
              try {
                const r = await fetch(base + '/v1/memories', {
                  method: 'POST',
                  headers: { authorization: `Bearer ${p.key}`, 'content-type': 'application/json' },
                  body: JSON.stringify({
                    content: `w${pi}.${w} notes item ${i} on subject ${pi * 10_000 + w * 1000 + i}`,
                  }),
                  signal: AbortSignal.timeout(60_000),
                });
                if (r.status === 201)
                  acked.push({ id: ((await r.json()) as { id: string }).id, key: p.key });
                else {
                  const body = (await r.json().catch(() => ({}))) as { error?: { code?: string } };
                  const c = body.error?.code ?? String(r.status);
                  refused[c] = (refused[c] ?? 0) + 1;
                  if (c === 'KEY_REVOKED') await new Promise((x) => setTimeout(x, 200));
                }
              } catch {
                refused.network = (refused.network ?? 0) + 1;
              }
            }
          }),
        );
        // Key changes from a third process while the writes flow.
        const changes: string[] = [];
        for (let round = 0; round < 3; round++) {
          await new Promise((r) => setTimeout(r, 1500));
          const r = cli('principals', 'rotate', principals[round % 3]!.id);
          expect(r.code, r.err).toBe(0);
          changes.push('rotate');
        }
        const keys = JSON.parse(cli('principals', 'list').out) as {
          id: string;
          keys: { kid: string; revokedAtNs?: unknown }[];
        }[];
        const victim = keys.find((k) => k.id === principals[3]!.id)!;
        const rv = cli(
          'revoke',
          victim.keys[victim.keys.length - 1]!.kid,
          '--reason',
          'stolen laptop',
        );
        expect(rv.code, rv.err).toBe(0);
        changes.push('revoke');
        await new Promise((r) => setTimeout(r, 1500));
        stop = true;
        await Promise.all(writers);
        let lost = 0;
        for (const a of acked) {
          for (const base of servers) {
            const r = await fetch(`${base}/v1/memories/${a.id}`, {
              headers: { authorization: `Bearer ${a.key}` },
            });
            if (r.status !== 200) lost++;
          }
        }
        for (const c of children) c.kill('SIGTERM');
        await new Promise((r) => setTimeout(r, 1000));
        const audit = cli('audit', '--json');
        const report = JSON.parse(audit.out || '{}') as { ok?: boolean; findings?: unknown[] };
        recordHostile({
          suite: 'faults-key-rotation',
          family: 'key rotation under load',
          case: `2 serve processes, 8 writers, CLI ${changes.join(', ')} (${acked.length} acknowledged)`,
          channel: 'postgres',
          held: lost === 0 && report.ok === true,
          outcome: `${lost} acknowledged reads failed; audit ${report.ok === true ? 'clean' : 'FAILED'}; refused ${JSON.stringify(refused)}`,
        });
        expect(acked.length, JSON.stringify(refused)).toBeGreaterThan(20);
        expect(lost, 'acknowledged writes that no longer read back').toBe(0);
        expect(report.findings, audit.err).toEqual([]);
        expect(audit.code).toBe(0);
      } finally {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await c.end();
      }
    },
  );
});

describe('key changes under load: embedded store (PGlite in its worker thread)', () => {
  it(
    'no acknowledged write is lost while keys are rotated and revoked; `memwarden audit` clean',
    { timeout: 900_000 },
    async () => {
      const data = mkdtempSync(join(tmpdir(), 'mw-rot-emb-'));
      dirs.push(data);
      const mem = await Memory.open({
        dataDir: data,
        embedder: 'deterministic',
        pgliteWorker: true,
      });
      const acked: { id: string; principal: string }[] = [];
      try {
        const ps = [];
        for (let i = 0; i < 4; i++) ps.push((await mem.createPrincipal('user', `w${i}`)).id);
        let stop = false;
        const writers = ps.flatMap((p, pi) =>
          [0, 1].map(async (w) => {
            for (let i = 0; !stop; i++) {
              try {
                const r = await mem.add(
                  `w${pi}.${w} notes item ${i} on subject ${pi * 10_000 + w * 1000 + i}`,
                  { principal: p, verbatim: true },
                );
                if (r.status === 'stored') acked.push({ id: r.memory.id, principal: p });
              } catch (e) {
                if (!isMemwardenError(e)) throw e;
                if (e.code === 'KEY_REVOKED') await new Promise((x) => setTimeout(x, 50));
              }
            }
          }),
        );
        for (let round = 0; round < 6; round++) {
          await new Promise((r) => setTimeout(r, 300));
          await mem.ledger.rotatePrincipalKey(ps[round % 3]!);
        }
        await mem.ledger.revokeKey(await mem.ledger.currentKid(ps[3]!), 'stolen laptop');
        await new Promise((r) => setTimeout(r, 500));
        stop = true;
        await Promise.all(writers);
        let lost = 0;
        for (const a of acked)
          if ((await mem.get(a.id, { principal: a.principal }))?.id !== a.id) lost++;
        recordHostile({
          suite: 'faults-key-rotation',
          family: 'key rotation under load',
          case: `8 writers, 6 rotations and a revocation (${acked.length} acknowledged)`,
          channel: 'pglite-worker',
          held: lost === 0,
          outcome: `${lost} acknowledged writes lost; ${mem.ledger.resigned} re-signed in their commit`,
        });
        expect(acked.length).toBeGreaterThan(20);
        expect(lost).toBe(0);
      } finally {
        await mem.close();
      }
      const a = spawnSync(process.execPath, [BIN, 'audit', '--json', '--data', data], {
        env,
        encoding: 'utf8',
      });
      expect(a.stderr).toBe('');
      expect((JSON.parse(a.stdout) as { findings: unknown[] }).findings).toEqual([]);
      expect(a.status).toBe(0);
    },
  );
});
