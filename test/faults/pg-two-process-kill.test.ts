/**
 * Fault (issue 21): two `memwarden serve --postgres URL` processes (the built CLI) share one
 * schema, each with its in-process read model following the log (ADR 0037) and its group
 * commit pipelined (ADR 0038). Concurrent HTTP writers spread over both while each process in
 * turn is killed with SIGKILL — mid-commit, whatever it was doing — and restarted on the same
 * schema. Afterwards:
 * - no acknowledged write is lost: every 201 is stored, verifies and is provable from both
 *   processes, and is found by a vector search on both (the restarted process rebuilt its read
 *   model from the store; the other one followed the log);
 * - one consistent log: acknowledged leaf indices are distinct, `memwarden audit` recomputes
 *   the whole log (one entry per entry leaf, every signature) with no finding, and both
 *   processes sign the same checkpoint.
 * Each trial's kill lands at a different moment of the write stream.
 *
 * Needs MEMWARDEN_TEST_DATABASE_URL and a build (`npm run build`); skipped locally without the
 * URL, FAILS under CI without it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, pgProcesses } from '../helpers/pg-processes.js';

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const WRITERS = 8;
const TRIALS = 4;

describe('pg two-process kill: test database configured', () => {
  it.runIf(url === undefined && ci)('MEMWARDEN_TEST_DATABASE_URL is set under CI', () => {
    throw new Error('CI must run the two-process kill test: set MEMWARDEN_TEST_DATABASE_URL');
  });
});

type Server = ServeProcess;

describe.skipIf(url === undefined)(
  'two serve processes on PostgreSQL, killed and restarted',
  () => {
    const procs = pgProcesses(url, 'mwkill');
    let apiKey = '';
    // `audit` exits 1 when it has findings: the test reads them instead of failing here.
    const cli = (...args: string[]): string => procs.cli(args);
    const start = (): Promise<Server> => procs.serve(50);

    const kill = (s: Server): Promise<void> =>
      new Promise((r) => {
        if (s.child.exitCode !== null || s.child.signalCode !== null) return r();
        s.child.once('exit', () => r());
        s.child.kill('SIGKILL');
      });

    const call = async (base: string, path: string, body?: unknown): Promise<Response> =>
      fetch(base + path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    // After the kills every request must be answered: a failure names the server's state (did
    // it crash, and what did it print) instead of only "fetch failed".
    const ask = async (s: Server, path: string, body?: unknown): Promise<Response> => {
      try {
        return await call(s.url, path, body);
      } catch (e) {
        throw new Error(`${path} on ${s.url} failed (${String(e)}); the server: ${s.state()}`, {
          cause: e,
        });
      }
    };

    beforeAll(async () => {
      await procs.createSchema();
      apiKey = (JSON.parse(cli('principals', 'add', 'killer', '--json')) as { apiKey: string })
        .apiKey;
    }, 120_000);

    afterAll(() => procs.stop('SIGKILL'));

    it('no acknowledged write is lost and the log stays one', { timeout: 600_000 }, async () => {
      const servers: Server[] = [await start(), await start()];
      // `open` says which vector path runs and why: a log line, and /healthz.
      expect(servers[0]!.log).toMatch(/"vectorPath":"(pgvector|in-process)"/);
      const h0 = (await (await fetch(`${servers[0]!.url}/healthz`)).json()) as {
        storage: { vector: { sql: string; reason: string } };
      };
      expect(servers[0]!.log).toContain(`"vectorPath":"${h0.storage.vector.sql}"`);
      const want = process.env.MEMWARDEN_TEST_PGVECTOR;
      if (want !== undefined)
        expect(h0.storage.vector.sql).toBe(want === 'present' ? 'pgvector' : 'in-process');
      const acked = new Map<string, { content: string; leafIndex: number }>();
      let refused = 0;
      for (let trial = 0; trial < TRIALS; trial++) {
        const victim = trial % 2;
        let writing = true;
        const writers = Array.from({ length: WRITERS }, async (_, w) => {
          for (let i = 0; writing; i++) {
            const via = servers[(w + i) % 2]!;
            const content = `kill trial ${trial} note ${randomUUID()} from writer ${w}`;
            try {
              const r = await call(via.url, '/v1/memories', { content });
              if (r.status === 201) {
                const e = (await r.json()) as { id: string; leafIndex: number };
                acked.set(e.id, { content, leafIndex: e.leafIndex });
              } else {
                await r.body?.cancel();
                refused++; // held for review, or the dying process's last answers
              }
            } catch {
              refused++; // the connection died with the process: not acknowledged
              await new Promise((r) => setTimeout(r, 20));
            }
          }
        });
        // Kill at a different moment of the stream each trial.
        await new Promise((r) => setTimeout(r, 400 + trial * 230));
        await kill(servers[victim]!);
        await new Promise((r) => setTimeout(r, 300));
        servers[victim] = await start();
        await new Promise((r) => setTimeout(r, 300));
        writing = false;
        await Promise.all(writers);
      }
      expect(acked.size).toBeGreaterThan(50);

      // One log: acknowledged indices are distinct; the audit recomputes everything.
      const indices = [...acked.values()].map((a) => a.leafIndex);
      expect(new Set(indices).size).toBe(indices.length);
      // `audit` exits 1 when it has findings: the test reads them instead of failing here. Run
      // without blocking: the test's idle connections to the servers stay serviced meanwhile.
      const audit = JSON.parse(await procs.cliAsync(['audit', '--json'], [0, 1])) as {
        ok: boolean;
        logSize: number;
        checks: Record<string, { checked: number; failed: number }>;
        findings: unknown[];
      };
      expect(audit.findings).toEqual([]);
      expect(audit.ok).toBe(true);
      expect(audit.logSize).toBeGreaterThanOrEqual(acked.size);
      expect(audit.checks['entries.signature']!.failed).toBe(0);

      // Both processes sign the same checkpoint over the same log.
      const cps = await Promise.all(
        servers.map(
          async (s) =>
            (await (await ask(s, '/v1/log/checkpoint')).json()) as {
              size: number;
              root: string;
            },
        ),
      );
      expect(cps[0]!.size).toBe(audit.logSize);
      expect(cps[1]).toEqual(cps[0]);

      // Every acknowledged write is there, from both processes: get, proof, and vector search
      // (the read model: rebuilt by a restarted process, followed by the other).
      for (const [id, a] of acked) {
        for (const s of servers) {
          const g = await ask(s, `/v1/memories/${id}`);
          expect(g.status).toBe(200);
          await g.body?.cancel();
          const p = await ask(s, `/v1/memories/${id}/proof`);
          expect(p.status).toBe(200);
          expect(((await p.json()) as { leafIndex: number }).leafIndex).toBe(a.leafIndex);
        }
      }
      const sample = [...acked].filter((_, i) => i % 7 === 0);
      for (const [id, a] of sample) {
        for (const s of servers) {
          const r = (await (
            await ask(s, '/v1/memories/search', { query: a.content, limit: 3 })
          ).json()) as { results: { memory: { id: string } }[] };
          expect(r.results.map((x) => x.memory.id)).toContain(id);
        }
      }
      for (const s of servers) {
        const h = (await (await fetch(`${s.url}/healthz`)).json()) as {
          storage: { readModel: { on: boolean; follower: { synced: boolean } } };
        };
        expect(h.storage.readModel).toMatchObject({ on: true, follower: { synced: true } });
      }
      console.log(
        `pg two-process kill: ${acked.size} acknowledged, ${refused} refused or cut, log ${audit.logSize}`,
      );
    });
  },
);
