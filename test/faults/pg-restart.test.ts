/**
 * Fault (issue 10): PostgreSQL restarted under load. A real `memwarden serve --postgres URL`
 * (the built CLI) takes concurrent HTTP writes while its database server is restarted — once
 * with a fast shutdown (connections terminated: SQLSTATE 57P01) and once with an immediate
 * one (no clean shutdown: crash recovery on start). Meanwhile every refused write is a
 * retryable coded error — 503 STORAGE_UNAVAILABLE with Retry-After, never a 500 — and the
 * service recovers by itself (no restart of memwarden). Afterwards nothing is half-written:
 * every acknowledged write is present and verifies, the stored log recomputes with one entry
 * per leaf, and the checkpoint taken before the restarts is consistent with the log after.
 *
 * Runs against its OWN throwaway cluster (initdb into a temp folder, another port), never the
 * shared test server. Needs PostgreSQL's binaries (scripts/pg-test-server.sh installs them)
 * and, when run as root, the `postgres` OS user to own the cluster; skipped locally without
 * them, FAILS under CI without them.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/core/bytes.js';
import { verifyConsistency } from '../../src/core/merkle/index.js';

const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const BIN = resolve('dist/cli/main.js');
const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const v = readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))[0];
  return v === undefined ? undefined : join(root, v, 'bin');
})();
const root = process.getuid?.() === 0;
const pgUser = root ? spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).status === 0 : true;
const available = PG_BIN !== undefined && pgUser;

describe('pg-restart: PostgreSQL binaries available', () => {
  it.runIf(!available && ci)('initdb and pg_ctl are installed under CI', () => {
    throw new Error('CI must run the PostgreSQL restart test: install postgresql');
  });
});

/** Run a PostgreSQL binary as the cluster's owner (the postgres user when we are root). */
function pgRun(bin: string, args: string[]): string {
  const cmd = join(PG_BIN!, bin);
  const r = root
    ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
    : spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

interface Ack {
  id: string;
}

describe.skipIf(!available)('PostgreSQL restarted under load', () => {
  const base = mkdtempSync(join(tmpdir(), 'mw-pgrestart-'));
  const cluster = join(base, 'cluster');
  const data = join(base, 'memwarden');
  // A port of our own, away from the shared server's 5432 and below Linux's ephemeral range
  // (32768–60999): a port in it can be held by any outgoing connection, and the cluster then
  // fails to start ("could not bind", seen once in a run of three).
  const port = 20_000 + (process.pid % 12_000);
  const url = `postgres://memwarden:memwarden@127.0.0.1:${port}/mw`;
  const env = {
    ...process.env,
    MEMWARDEN_EMBEDDER: 'deterministic',
    MEMWARDEN_DATABASE_URL: '',
    MEMWARDEN_DATA: '',
  };
  let serve: ChildProcess | undefined;
  let serveLog = '';
  let started = false;

  const pgCtl = (...args: string[]) =>
    pgRun('pg_ctl', ['-D', cluster, '-l', join(cluster, 'server.log'), '-w', '-t', '60', ...args]);
  const psql = (db: string, sql: string) =>
    pgRun('psql', [
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-U',
      'postgres',
      '-d',
      db,
      '-v',
      'ON_ERROR_STOP=1',
      '-qAtc',
      sql,
    ]);
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args, '--data', data, '--postgres', url], {
      env,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`memwarden ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  beforeAll(async () => {
    if (root)
      chownSync(base, Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout), 0);
    pgRun('initdb', ['-D', cluster, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    pgCtl(
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -k ${base} -c fsync=on -c synchronous_commit=on`,
      'start',
    );
    started = true;
    psql(
      'postgres',
      `CREATE ROLE memwarden LOGIN PASSWORD 'memwarden' NOSUPERUSER NOBYPASSRLS CREATEROLE`,
    );
    psql('postgres', 'CREATE DATABASE mw OWNER memwarden');
    // CI's pgvector configuration: the extension created by the superuser, as a DBA does.
    if (process.env.MEMWARDEN_TEST_PGVECTOR === 'present') psql('mw', 'CREATE EXTENSION vector');
  }, 120_000);

  afterAll(async () => {
    if (serve !== undefined && serve.exitCode === null) {
      const exited = new Promise((r) => serve!.once('exit', r));
      serve.kill('SIGKILL');
      await exited;
    }
    if (started) {
      try {
        pgCtl('-m', 'immediate', 'stop');
      } catch {
        // already down
      }
    }
    rmSync(base, { recursive: true, force: true });
  });

  function startServe(): Promise<string> {
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--data', data, '--postgres', url, '--port', '0'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    serve = child;
    return new Promise((res, rej) => {
      let out = '';
      const t = setTimeout(() => rej(new Error(`serve did not start: ${out}`)), 90_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(t);
          res(m[1]!);
        }
      });
      child.stderr!.on('data', (d: Buffer) => {
        serveLog = (serveLog + d.toString()).slice(-20_000);
      });
      child.once('exit', (code) => rej(new Error(`serve exited ${code}: ${out}`)));
    });
  }

  it(
    'clients get 503 + Retry-After, never 500; every acknowledged write survives; the service recovers',
    { timeout: 300_000 },
    async () => {
      const key = (JSON.parse(cli('principals', 'add', 'writer', '--json')) as { apiKey: string })
        .apiKey;
      const auth = { authorization: `Bearer ${key}` };
      const svc = await startServe();
      const getJson = async (path: string): Promise<any> => {
        const r = await fetch(svc + path, { headers: auth });
        expect(r.status, `${path}: ${await r.clone().text()}`).toBe(200);
        return r.json();
      };

      // The log already holds the principal's signed registry statement(s) (ADR 0033).
      const registryLeaves = ((await getJson('/v1/log/checkpoint')) as { size: number }).size;
      for (let i = 0; i < 10; i++) {
        const r = await fetch(`${svc}/v1/memories`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ content: `warm-up ${randomUUID()}` }),
        });
        expect(r.status).toBe(201);
      }
      const before = (await getJson('/v1/log/checkpoint')) as { size: number; root: string };

      const acked: Ack[] = [];
      const refused: { status: number; code: string; retryAfter: string | null }[] = [];
      let phase = 0; // writes acknowledged per phase: 0 before, 1 during/after restart 1, 2 after restart 2
      const ackedIn = [0, 0, 0];
      let stop = false;
      const writers = Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const r = await fetch(`${svc}/v1/memories`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify({ content: `restart note ${randomUUID()} ${w}.${i}` }),
            signal: AbortSignal.timeout(60_000),
          });
          const body = (await r.json()) as { id?: string; error?: { code: string } };
          if (r.status === 201) {
            acked.push({ id: body.id! });
            ackedIn[phase]!++;
          } else {
            refused.push({
              status: r.status,
              code: body.error?.code ?? '?',
              retryAfter: r.headers.get('retry-after'),
            });
            // Honour Retry-After (scaled down: the test need not idle a full second).
            await new Promise((res) => setTimeout(res, 100));
          }
        }
      });
      const waitFor = async (cond: () => boolean, what: string) => {
        for (let i = 0; i < 600 && !cond(); i++) await new Promise((r) => setTimeout(r, 100));
        const seen = new Map<string, number>();
        for (const r of refused)
          seen.set(`${r.status} ${r.code}`, (seen.get(`${r.status} ${r.code}`) ?? 0) + 1);
        expect(
          cond(),
          `${what}; acked ${ackedIn.join('/')}; refused ${JSON.stringify([...seen])}; serve log: ${serveLog.slice(-3000)}`,
        ).toBe(true);
      };

      await waitFor(() => ackedIn[0]! >= 40, 'writes acknowledged before the restart');
      phase = 1;
      pgCtl('-m', 'fast', 'restart'); // terminates every connection (57P01), then starts
      await waitFor(() => ackedIn[1]! >= 40, 'writes acknowledged after a fast restart');
      phase = 2;
      pgCtl('-m', 'immediate', 'stop'); // no clean shutdown: crash recovery on the next start
      await new Promise((r) => setTimeout(r, 500)); // writes meanwhile hit a dead server
      pgCtl('-o', `-p ${port} -c listen_addresses=127.0.0.1 -k ${base}`, 'start');
      await waitFor(() => ackedIn[2]! >= 40, 'writes acknowledged after crash recovery');
      stop = true;
      await Promise.all(writers);

      // While the database was away, every refusal was a retryable 503 with Retry-After.
      expect(refused.length).toBeGreaterThan(0);
      for (const r of refused)
        expect(r).toEqual({ status: 503, code: 'STORAGE_UNAVAILABLE', retryAfter: '1' });

      // Every acknowledged write is present and verifies (GET re-verifies signature and proof).
      for (const a of acked) {
        const e = (await getJson(`/v1/memories/${a.id}`)) as { id: string };
        expect(e.id).toBe(a.id);
      }
      // Nothing half-written: the checkpoint covers every leaf, the log before the restarts is
      // a prefix of the log after, and the whole store audits (one verified entry per leaf).
      const after = (await getJson('/v1/log/checkpoint')) as { size: number; root: string };
      expect(after.size).toBeGreaterThanOrEqual(registryLeaves + 10 + acked.length);
      const c = (await getJson(`/v1/log/consistency?from=${before.size}&to=${after.size}`)) as {
        hashes: string[];
      };
      expect(
        verifyConsistency(
          before.size,
          after.size,
          c.hashes.map(fromBase64),
          fromBase64(before.root),
          fromBase64(after.root),
        ),
      ).toBe(true);
      const exited = new Promise((r) => serve!.once('exit', r));
      serve!.kill('SIGTERM');
      await exited;
      const audit = JSON.parse(cli('audit', '--json')) as {
        ok: boolean;
        logSize: number;
        checks: Record<string, { checked: number; failed: number }>;
        findings: unknown[];
      };
      expect(audit).toMatchObject({ ok: true, logSize: after.size, findings: [] });
      // One verified entry per leaf: no leaf without its entry, no entry without its leaf.
      expect(audit.checks['entries.signature']).toEqual({
        checked: after.size - registryLeaves,
        failed: 0,
      });
    },
  );
});
