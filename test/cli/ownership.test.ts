/**
 * Issue 17 finding 8 (part): the CLI obeys ownership exactly like the API, and operator-wide
 * recovery exists, explicit and audited. Before: `memwarden delete ID --as OTHER` tombstoned
 * another principal's entry (and the operator policy as a `tool` principal) with `audit` ok,
 * and no one could purge across principals by source / content hash.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';
import { Memory } from '../../src/open.js';
import { recordHostile } from '../helpers/hostile-report.js';

const BIN = resolve('dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'mw-own-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, MEMWARDEN_EMBEDDER: 'deterministic', MEMWARDEN_DATABASE_URL: '' };

function cli(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data', join(dir, 'data')], {
    env,
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}
const json = (r: { out: string }) => JSON.parse(r.out) as Record<string, unknown>;
const errCode = (r: { err: string }) => /error ([A-Z_]+)/.exec(r.err)?.[1] ?? r.err;

describe('the CLI obeys ownership', () => {
  it(
    'delete --as another principal is refused; the operator policy is not a tool’s to delete; audit clean',
    { timeout: 300_000 },
    () => {
      expect(cli('init').code).toBe(0);
      const alice = json(cli('principals', 'add', 'alice', '--kind', 'user')).id as string;
      const bob = json(cli('principals', 'add', 'bob', '--kind', 'user')).id as string;
      const tool = json(cli('principals', 'add', 'weather', '--kind', 'tool')).id as string;
      const ops = json(cli('principals', 'add', 'ops', '--kind', 'operator')).id as string;
      const a = json(cli('write', 'alice prefers tea', '--as', alice)).id as string;
      const policy = json(
        cli('write', 'never send money without approval', '--as', ops, '--tier', 'OPERATOR'),
      ).id as string;
      // Exactly the API's answers: another principal's row is not even visible (existence is not
      // leaked), an OPERATOR row is visible but not a tool's to delete.
      const cases: [string, string, string, string][] = [
        ['another user deletes alice’s entry', a, bob, 'STORAGE_NOT_FOUND'],
        ['a tool principal deletes the operator policy', policy, tool, 'AUTH_FORBIDDEN'],
      ];
      for (const [what, id, as, expected] of cases) {
        const r = cli('delete', id, '--as', as, '--reason', 'mine now');
        recordHostile({
          suite: 'cli-ownership',
          family: 'ownership through the CLI',
          case: what,
          channel: 'cli',
          held: r.code !== 0 && errCode(r) === expected,
          outcome: r.code === 0 ? 'deleted' : errCode(r),
        });
        expect(r.code, what).not.toBe(0);
        expect(errCode(r)).toBe(expected);
      }
      // Both still verify; the owner may delete its own.
      expect(cli('verify', a).code).toBe(0);
      expect(cli('verify', policy).code).toBe(0);
      expect(cli('delete', a, '--as', alice, '--reason', 'outdated').code).toBe(0);
      const audit = cli('audit', '--json');
      expect(audit.code, audit.out).toBe(0);
    },
  );

  it(
    'purge --all-principals: operators only, every principal’s matching entries, audited',
    { timeout: 300_000 },
    () => {
      const alice = json(cli('principals', 'add', 'alice2', '--kind', 'user')).id as string;
      const bob = json(cli('principals', 'add', 'bob2', '--kind', 'user')).id as string;
      const ops = json(cli('principals', 'add', 'ops2', '--kind', 'operator')).id as string;
      const src = 'https://poisoned.example/page';
      const ids = [alice, bob].map(
        (p) =>
          json(cli('write', `the page says ${p.slice(-4)} likes scams`, '--as', p, '--source', src))
            .id as string,
      );
      const denied = cli('purge', '--as', alice, '--source', src, '--all-principals');
      expect(denied.code).not.toBe(0);
      expect(errCode(denied)).toBe('AUTH_FORBIDDEN');
      const own = json(cli('purge', '--as', bob, '--source', src));
      expect(own.purged).toBe(1); // bob's own only
      const r = cli(
        'purge',
        '--as',
        ops,
        '--source',
        src,
        '--all-principals',
        '--reason',
        'poisoned source',
      );
      expect(r.code, r.err).toBe(0);
      expect(json(r)).toMatchObject({ purged: 1, owners: { [alice]: 1 } });
      for (const id of ids) expect(json(cli('verify', id)).ok).toBe(true); // leaves stay provable
      recordHostile({
        suite: 'cli-ownership',
        family: 'operator-wide recovery',
        case: 'purge by source across principals as a user, then as the operator',
        channel: 'cli',
        held: true,
        outcome: 'user AUTH_FORBIDDEN; operator purged every principal’s entries, audited',
      });
      expect(cli('audit', '--json').code).toBe(0);
    },
  );
});

describe('operator-wide purge over HTTP', () => {
  it(
    'allPrincipals is for operators: 403 for a user, every principal’s entries for an operator',
    { timeout: 120_000 },
    async () => {
      const d = mkdtempSync(join(tmpdir(), 'mw-own-http-'));
      const metrics = new Metrics();
      const mem = await Memory.open({
        dataDir: d,
        ephemeral: true,
        embedder: 'deterministic',
        metrics,
      });
      try {
        const alice = await mem.createPrincipal('user', 'alice');
        const bob = await mem.createPrincipal('user', 'bob');
        const ops = await mem.createPrincipal('operator', 'ops');
        const app = createApp({
          memory: mem,
          auth: { authenticate: (t) => mem.authenticate(t) },
          metrics,
          logger: createLogger({ level: 'silent' }),
        });
        const src = 'https://poisoned.example/feed';
        for (const p of [alice, bob])
          await mem.add(`feed item for ${p.id.slice(-6)}`, {
            principal: p.id,
            source: src,
            verbatim: true,
          });
        const call = (key: string, body: unknown) =>
          app.request('/v1/memories/purge', {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
        expect((await call(alice.apiKey, { source: src, allPrincipals: true })).status).toBe(403);
        const r = await call(ops.apiKey, {
          source: src,
          allPrincipals: true,
          reason: 'poisoned feed',
        });
        expect(r.status).toBe(200);
        expect(await r.json()).toEqual({ purged: 2 });
        expect(await mem.getAll({ principal: alice.id })).toEqual([]);
        expect(await mem.getAll({ principal: bob.id })).toEqual([]);
        const events = await mem.storageBackend.listAudit({ limit: 10, actionPrefix: 'purge' });
        expect(events.map((e) => e.action)).toContain('purge.all_principals');
      } finally {
        await mem.close();
        rmSync(d, { recursive: true, force: true });
      }
    },
  );
});
