/**
 * End to end through the built CLI: two `memwarden witness` child processes and one
 * `memwarden serve --witness URL=VKEY ×2`; clients require N cosignatures with
 * `memwarden checkpoint --from … --witness-key … --min-cosignatures N`. A witness goes down,
 * the log restarts (and must learn the witnesses' sizes from their 409s), the witness comes
 * back with its state.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyCosignedCheckpoint } from '../../src/core/merkle/index.js';

const BIN = resolve('dist/cli/main.js');
const env = { ...process.env, MEMWARDEN_EMBEDDER: 'deterministic', MEMWARDEN_DATABASE_URL: '' };
const root = mkdtempSync(join(tmpdir(), 'mw-witness-e2e-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

/**
 * Run a CLI command. Asynchronously: a spawnSync would block this process's event loop, and
 * the HTTP client would then reuse a keep-alive socket the server closed meanwhile.
 */
function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [BIN, ...args], { env, encoding: 'utf8' }, (e, out, err) => {
      const code = e === null ? 0 : typeof e.code === 'number' ? e.code : -1;
      res({ code, out, err });
    });
  });
}

/** Start a long-running command; resolve with the first stdout match of `re`. */
function start(args: string[], re: RegExp): Promise<{ child: ChildProcess; m: RegExpExecArray }> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((res, rej) => {
    let out = '';
    let err = '';
    const t = setTimeout(() => rej(new Error(`did not start: ${out} ${err}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = re.exec(out);
      if (m) {
        clearTimeout(t);
        res({ child, m });
      }
    });
    child.once('exit', (code) => rej(new Error(`exited ${code}: ${out} ${err}`)));
  });
}

async function stop(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  await exited;
}

describe('witnessed log, end to end (built CLI, real processes)', () => {
  const data = join(root, 'log');
  const wdirs = [join(root, 'w1'), join(root, 'w2')];
  let apiKey = '';
  let logKey = '';
  const vkeys: string[] = [];
  const urls: string[] = [];
  const wchild: ChildProcess[] = [];
  let serveUrl = '';
  let serveChild: ChildProcess | undefined;

  const startWitness = async (i: number): Promise<void> => {
    if (wchild[i] !== undefined) await stop(wchild[i]);
    const { child, m } = await start(
      [
        'witness',
        '--data',
        wdirs[i]!,
        '--log-vkey',
        logKey,
        '--port',
        String(urls[i] ? new URL(urls[i]!).port : 0),
      ],
      /listening on (http:\/\/\S+)\nvkey (\S+)\n/,
    );
    urls[i] = m[1]!;
    expect(m[2]).toBe(vkeys[i]);
    wchild[i] = child;
  };
  const startServe = async (): Promise<void> => {
    const { child, m } = await start(
      [
        'serve',
        '--data',
        data,
        '--port',
        '0',
        ...urls.flatMap((u, i) => ['--witness', `${u}=${vkeys[i]}`]),
      ],
      /listening on (http:\/\/\S+)/,
    );
    serveUrl = m[1]!;
    serveChild = child;
  };
  const write = async (content: string): Promise<void> => {
    const r = await fetch(`${serveUrl}/v1/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
    });
    expect(r.status).toBe(201);
  };
  /** Leaves the log held before the first write (registry statements, ADR 0033). */
  let base = 0;
  const served = async (): Promise<{ size: number; note: string }> => {
    const r = await fetch(`${serveUrl}/v1/log/checkpoint`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(r.status).toBe(200);
    return (await r.json()) as { size: number; note: string };
  };
  const check = (min: number, ...extra: string[]) =>
    run(
      'checkpoint',
      '--from',
      serveUrl,
      '--api-key',
      apiKey,
      '--log-key',
      logKey,
      ...vkeys.flatMap((v) => ['--witness-key', v]),
      '--min-cosignatures',
      String(min),
      '--json',
      ...extra,
    );

  it('sets up a log and two witnesses (vkeys printed before the first run)', async () => {
    const add = await run('principals', 'add', 'writer', '--data', data);
    expect(add.code).toBe(0);
    apiKey = (JSON.parse(add.out) as { apiKey: string }).apiKey;
    logKey = (await run('vkey', '--data', data)).out.trim();
    for (const [i, d] of wdirs.entries()) {
      const v = await run('witness', 'vkey', '--data', d, '--name', `w${i + 1}.test/witness`);
      expect(v.code).toBe(0);
      vkeys.push(v.out.trim());
    }
    // The vkey is stable, and a witness refuses to be renamed.
    expect((await run('witness', 'vkey', '--data', wdirs[0]!)).out.trim()).toBe(vkeys[0]);
    expect((await run('witness', 'vkey', '--data', wdirs[0]!, '--name', 'other/name')).err).toMatch(
      /^error INPUT_INVALID/,
    );
    await startWitness(0);
    await startWitness(1);
    await startServe();
  }, 120_000);

  it('serves checkpoints cosigned by both witnesses; clients can require two', async () => {
    // The log already holds the principal's signed registry statement(s) (ADR 0033).
    base = (await served()).size;
    for (let i = 0; i < 3; i++) await write(`fact ${i}`);
    const cp = await served();
    expect(cp.size).toBe(base + 3);
    const r = verifyCosignedCheckpoint(cp.note, { logKey, witnesses: vkeys, minCosignatures: 2 });
    expect(r.cosignatures.map((c) => c.name)).toEqual(['w1.test/witness', 'w2.test/witness']);
    await write('fact 3');
    const c = await check(2);
    expect(c.code, c.err).toBe(0);
    expect(
      (JSON.parse(c.out) as { size: number; cosignatures: unknown[] }).cosignatures,
    ).toHaveLength(2);
    // More than the trusted witnesses can give is a usage error, not a pass.
    const c3 = await check(3);
    expect(c3.code).toBe(2);
    expect(c3.err).toMatch(/^error INPUT_INVALID/);
  }, 60_000);

  it('a witness down: too few cosignatures is a coded failure (exit 1); a replayed cosignature too', async () => {
    const before = await served();
    await stop(wchild[1]!);
    await write('fact 4');
    const cp = await served();
    expect(cp.size).toBe(before.size + 1);
    const c = await check(2);
    expect(c.code).toBe(1);
    expect(c.err).toMatch(/^error LOG_COSIGNATURES_INSUFFICIENT/);
    expect((await check(1)).code).toBe(0);
    // Replay: w2's cosignature of the earlier checkpoint pasted onto the new one.
    const w2line = before.note
      .trimEnd()
      .split('\n')
      .find((l) => l.startsWith('— w2.test/witness '))!;
    const forged = join(root, 'replayed.note');
    writeFileSync(forged, `${cp.note}${w2line}\n`);
    const r = await run(
      'checkpoint',
      '--note',
      forged,
      '--log-key',
      logKey,
      ...vkeys.flatMap((v) => ['--witness-key', v]),
      '--min-cosignatures',
      '2',
    );
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error LOG_COSIGNATURE_INVALID/);
    // Another log's key cannot vouch for this checkpoint.
    const other = (
      await run('witness', 'vkey', '--data', join(root, 'w3'), '--name', 'w3.test/witness')
    ).out.trim();
    const wrong = await run(
      'checkpoint',
      '--note',
      forged,
      '--log-key',
      logKey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'),
      '--witness-key',
      other,
    );
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/^error KEY_INVALID/);
  }, 60_000);

  it('after restarts (log and witness), the log learns each witness size from its 409 and both cosign again', async () => {
    await stop(serveChild!);
    await startWitness(1); // same folder and port: its state (size 4) survived
    await startServe(); // a fresh publisher: asks from old size 0
    await write('fact 5');
    const cp = await served();
    expect(cp.size).toBe(base + 6);
    const r = verifyCosignedCheckpoint(cp.note, { logKey, witnesses: vkeys, minCosignatures: 2 });
    expect(r.cosignatures).toHaveLength(2);
    expect((await check(2)).code).toBe(0);
    await stop(serveChild!);
    await Promise.all(wchild.map(stop));
  }, 120_000);
});
