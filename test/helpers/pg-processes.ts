/**
 * Several real `memwarden serve --postgres URL` processes (the built CLI, dist/) on one
 * PostgreSQL schema of their own and one key folder: the setup the multi-process tests share
 * (test/server/scale-out.test.ts, test/faults/pg-two-process-kill.test.ts). `createSchema()` in
 * `beforeAll`, `stop()` in `afterAll` (ends every child, removes the key folder, drops the
 * schema). Needs a build (`npm run build`).
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';

const BIN = resolve('dist/cli/main.js');

/** A started `memwarden serve`. */
export interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** What it printed until it listened (its startup log lines; the tail when long). */
  readonly log: string;
  /**
   * Everything it has printed so far (the tail when long) and how it ended, if it has: what a
   * failed request to it is reported with, so a crash is told apart from a dropped connection.
   */
  state(): string;
}

export interface PgProcesses {
  /** The test's PostgreSQL URL with `search_path` set to its own schema. */
  readonly dbUrl: string;
  /** Every child started so far. */
  readonly children: ChildProcess[];
  /** Run `memwarden ARGS --data … --postgres …`; stdout, or throws on an exit code not in `ok`. */
  cli(args: readonly string[], ok?: readonly number[]): string;
  /**
   * The same, run without blocking this process: its event loop keeps serving timers and
   * sockets meanwhile (a `spawnSync` of several seconds leaves idle keep-alive connections to
   * the servers unread; the next request may then be sent on one the server has closed).
   */
  cliAsync(args: readonly string[], ok?: readonly number[]): Promise<string>;
  /** Start `memwarden serve --port 0`; resolves `settleMs` after it prints where it listens. */
  serve(settleMs?: number): Promise<ServeProcess>;
  createSchema(): Promise<void>;
  /** End every child still running (`signal`, waiting for each exit), then clean up. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * `prefix` names the schema (`PREFIX_pid_time`) and the key folder (`mw-PREFIX-…`). `url` may be
 * undefined while a skipped `describe` is collected: nothing connects until `createSchema()`.
 */
export function pgProcesses(url: string | undefined, prefix: string): PgProcesses {
  const schema = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  const dbUrl = `${url}${url?.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
  const data = mkdtempSync(join(tmpdir(), `mw-${prefix}-`));
  const env = {
    ...process.env,
    MEMWARDEN_EMBEDDER: 'deterministic',
    MEMWARDEN_DATABASE_URL: '',
    MEMWARDEN_DATA: '',
  };
  const children: ChildProcess[] = [];
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };

  return {
    dbUrl,
    children,
    cli(args, ok = [0]) {
      const r = spawnSync(process.execPath, [BIN, ...args, '--data', data, '--postgres', dbUrl], {
        env,
        encoding: 'utf8',
      });
      if (r.status === null || !ok.includes(r.status))
        throw new Error(`memwarden ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    },
    cliAsync(args, ok = [0]) {
      return new Promise((res, rej) => {
        execFile(
          process.execPath,
          [BIN, ...args, '--data', data, '--postgres', dbUrl],
          { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
          (err, stdout, stderr) => {
            const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
            if (code === null || !ok.includes(code))
              rej(new Error(`memwarden ${args.join(' ')}: ${stderr}`));
            else res(stdout);
          },
        );
      });
    },
    serve(settleMs = 0) {
      const child = spawn(
        process.execPath,
        [BIN, 'serve', '--data', data, '--postgres', dbUrl, '--port', '0'],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.push(child);
      return new Promise((res, rej) => {
        let out = '';
        const state = (): string =>
          `${child.exitCode !== null || child.signalCode !== null ? `exited (code ${child.exitCode}, signal ${child.signalCode})` : 'running'}; output tail:\n${out.slice(-4_000)}`;
        const t = setTimeout(() => rej(new Error(`serve did not start: ${out}`)), 90_000);
        let listening = false;
        child.stdout!.on('data', (d: Buffer) => {
          out = (out + d.toString()).slice(-20_000);
          const m = listening ? null : /listening on (http:\/\/\S+)/.exec(out);
          if (m) {
            listening = true;
            clearTimeout(t);
            setTimeout(() => res({ child, url: m[1]!, log: out, state }), settleMs); // the lines after it
          }
        });
        child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
        child.once('exit', (code) => rej(new Error(`serve exited ${code}: ${out}`)));
      });
    },
    createSchema: () => admin(`CREATE SCHEMA ${schema}`),
    async stop(signal = 'SIGTERM') {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((r) => {
              if (c.exitCode !== null || c.signalCode !== null) return r();
              c.once('exit', () => r());
              c.kill(signal);
            }),
        ),
      );
      rmSync(data, { recursive: true, force: true });
      await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },
  };
}
