/**
 * Crash safety (issue 10, "Faults"): `memwarden serve` is SIGKILLed at a random moment while
 * eight clients write concurrently over HTTP (some writes name an acknowledged earlier write as
 * their parent), repeated over many trials on the embedded store (PGlite) and on the PostgreSQL
 * server (a fresh schema per trial). After each crash the store is opened again and:
 * - every acknowledged write is readable by its principal and verifies (signature, MAC, leaf,
 *   inclusion under the log);
 * - the whole store audits clean (`auditStore`, what `memwarden audit` runs; the binary itself
 *   runs on the first trial of each backend): no write exists in part — every entry leaf has
 *   its entry row and the row its leaf, every signed parent is earlier in the log;
 * - the last checkpoint taken before the crash is consistent with the log after it.
 *
 * Kill moments come from a seeded generator; the seed is printed and can be replayed with
 * MEMWARDEN_FAULTS_SEED. MEMWARDEN_FAULTS_TRIALS sets the trials per backend (default 20).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/core/bytes.js';
import { verifyConsistency } from '../../src/core/merkle/index.js';
import { Memory } from '../../src/open.js';
import { mulberry32 } from '../../src/core/prng.js';

const BIN = resolve('dist/cli/main.js');
const TRIALS = Number(process.env.MEMWARDEN_FAULTS_TRIALS ?? 20);
const SEED = Number(process.env.MEMWARDEN_FAULTS_SEED ?? Date.now() % 2 ** 31);
const env = { ...process.env, MEMWARDEN_EMBEDDER: 'deterministic', MEMWARDEN_DATABASE_URL: '' };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const rng = mulberry32;

function startServe(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((res, rej) => {
    let out = '';
    const t = setTimeout(() => rej(new Error(`serve did not start: ${out}`)), 90_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        res({ child, url: m[1]! });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => rej(new Error(`serve exited ${code}: ${out}`)));
  });
}

async function post(
  url: string,
  key: string,
  body: unknown,
): Promise<Record<string, any> | undefined> {
  try {
    const r = await fetch(url + '/v1/memories', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    return r.status === 201 ? ((await r.json()) as Record<string, any>) : undefined;
  } catch {
    return undefined; // the connection died with the server: not acknowledged
  }
}

interface Backend {
  readonly name: string;
  /** Per trial: a data folder (key file, PGlite) and, for the server, a fresh schema. */
  prepare(trial: number): Promise<{ data: string; postgres?: string; cleanup(): Promise<void> }>;
}

/** A fresh embedded store per trial, copied from one template created once (saves a boot). */
let template: string | undefined;
const embedded: Backend = {
  name: 'PGlite',
  prepare: async () => {
    if (template === undefined) {
      template = mkdtempSync(join(tmpdir(), 'mw-kill-template-'));
      dirs.push(template);
      const init = spawnSync(process.execPath, [BIN, 'init', '--data', template], {
        env,
        encoding: 'utf8',
      });
      expect(init.status, init.stderr).toBe(0);
    }
    const data = mkdtempSync(join(tmpdir(), 'mw-kill-'));
    dirs.push(data);
    cpSync(template, data, { recursive: true });
    return { data, cleanup: async () => rmSync(data, { recursive: true, force: true }) };
  },
};

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const server: Backend = {
  name: 'PostgreSQL',
  prepare: async (trial) => {
    const data = mkdtempSync(join(tmpdir(), 'mw-kill-pg-'));
    dirs.push(data);
    const schema = `faults_kill_${process.pid}_${trial}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const sep = (url as string).includes('?') ? '&' : '?';
    const postgres = `${url}${sep}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
    return {
      data,
      postgres,
      cleanup: async () => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await c.end();
        rmSync(data, { recursive: true, force: true });
      },
    };
  },
};

function storeArgs(s: { data: string; postgres?: string }): string[] {
  return ['--data', s.data, ...(s.postgres === undefined ? [] : ['--postgres', s.postgres])];
}

const stats: Record<string, { trials: number; acked: number; killMs: number[]; ms: number[] }> = {};

function crashSuite(b: Backend, seed: number): void {
  const next = rng(seed);
  // Kill moments drawn up front so a trial's moment does not depend on earlier trials' timing.
  const moments = Array.from({ length: TRIALS }, () => 150 + Math.floor(next() * 1850));
  stats[b.name] = { trials: 0, acked: 0, killMs: moments, ms: [] };
  for (let trial = 0; trial < TRIALS; trial++) {
    it(`${b.name} trial ${trial}: kill at ${moments[trial]} ms loses no acknowledged write`, async () => {
      const t0 = Date.now();
      const store = await b.prepare(trial);
      const add = spawnSync(
        process.execPath,
        [BIN, 'principals', 'add', 'writer', ...storeArgs(store)],
        { env, encoding: 'utf8' },
      );
      expect(add.stderr).toBe('');
      expect(add.status).toBe(0);
      const key = (JSON.parse(add.stdout) as { apiKey: string }).apiKey;

      const { child, url: base } = await startServe(storeArgs(store));
      const exited = new Promise((r) => child.once('exit', r));
      let killed = false;
      try {
        // A checkpoint taken before the crash: the writer's signed registry statements (how many
        // is the registry's business, ADR 0033/0070) and then exactly 5 writes.
        const regRes = await fetch(base + '/v1/log/checkpoint', {
          headers: { authorization: `Bearer ${key}` },
        });
        const registryLeaves = ((await regRes.json()) as { size: number }).size;
        expect(registryLeaves).toBeGreaterThan(0);
        for (let i = 0; i < 5; i++)
          expect(
            await post(base, key, { content: `warm-up ${i} of trial ${trial}` }),
          ).toBeDefined();
        const cpRes = await fetch(base + '/v1/log/checkpoint', {
          headers: { authorization: `Bearer ${key}` },
        });
        const before = (await cpRes.json()) as { size: number; root: string };
        expect(before.size).toBe(registryLeaves + 5);

        const acked: string[] = [];
        let stop = false;
        const writers = Array.from({ length: 8 }, async (_, w) => {
          for (let i = 0; !stop; i++) {
            // Every third write derives from an acknowledged one (lineage must survive too).
            const parent = i % 3 === 2 ? acked[acked.length - 1] : undefined;
            const r = await post(base, key, {
              content: `writer ${w} fact ${i} trial ${trial}`,
              ...(parent === undefined ? {} : { parents: [parent] }),
            });
            if (r !== undefined) acked.push(r.id as string);
          }
        });
        await new Promise((r) => setTimeout(r, moments[trial]));
        child.kill('SIGKILL');
        killed = true;
        stop = true;
        await Promise.all(writers);
        await exited;
        expect(acked.length, 'writes were acknowledged before the kill').toBeGreaterThan(0);

        // Restart: open the store again.
        const mem = await Memory.open({
          dataDir: store.data,
          embedder: 'deterministic',
          postgres: store.postgres ?? '',
        });
        try {
          const principal = (await mem.authenticate(key))!;
          expect(principal).toBeDefined();
          for (const id of acked) {
            const v = await mem.ledger.verifyEntry(id);
            expect(v.ok, `acknowledged ${id} must verify`).toBe(true);
            expect(
              (await mem.get(id, { principal }))?.id,
              `acknowledged ${id} must be readable`,
            ).toBe(id);
          }
          const report = await mem.auditStore();
          expect(report.findings, 'the whole store audits clean after the crash').toEqual([]);
          expect(report.checks['entries.leaf'].checked).toBeGreaterThanOrEqual(acked.length + 5);
          expect(report.logSize).toBeGreaterThanOrEqual(acked.length + 5);
          const after = await mem.checkpoint();
          const proof = (await mem.consistency(before.size, after.size)).hashes.map(fromBase64);
          expect(
            verifyConsistency(
              before.size,
              after.size,
              proof,
              fromBase64(before.root),
              fromBase64(after.root),
            ),
          ).toBe(true);
          stats[b.name]!.acked += acked.length;
        } finally {
          await mem.close();
        }
        if (trial === 0) {
          // The binary on the crashed store (offline: the server is dead, the LOCK is stale).
          const a = spawnSync(process.execPath, [BIN, 'audit', '--json', ...storeArgs(store)], {
            env,
            encoding: 'utf8',
          });
          expect(a.stderr).toBe('');
          expect(a.status).toBe(0);
          expect((JSON.parse(a.stdout) as { ok: boolean }).ok).toBe(true);
        }
        stats[b.name]!.trials++;
        stats[b.name]!.ms.push(Date.now() - t0);
      } finally {
        if (!killed) child.kill('SIGKILL');
        await store.cleanup();
      }
    }, 240_000);
  }
}

describe('SIGKILL during concurrent writes', () => {
  process.stdout.write(
    `\nsigkill trials: seed ${SEED} (replay with MEMWARDEN_FAULTS_SEED=${SEED}), ${TRIALS} trials per backend\n`,
  );
  describe('embedded store (PGlite)', () => crashSuite(embedded, SEED));
  describe.runIf(url !== undefined)('PostgreSQL server', () => crashSuite(server, SEED ^ 0x5eed));
  afterAll(() => {
    for (const [name, s] of Object.entries(stats)) {
      const total = s.ms.reduce((x, y) => x + y, 0);
      process.stdout.write(
        `sigkill ${name}: ${s.trials}/${TRIALS} trials passed, ${s.acked} acknowledged writes checked, ` +
          `kill moments ${Math.min(...s.killMs)}–${Math.max(...s.killMs)} ms, ${total} ms total (seed ${SEED})\n`,
      );
    }
  });
});
