/**
 * The CLI through the built binary (CONVENTIONS: "the CLI via the built binary").
 *
 * Every step is a process that opens the embedded store (PGlite's WASM, the migrations, the
 * ledger): ~1 s on a quiet machine, 15-50 s each at a load average of 20 (measured on the
 * shared 2-core machine, issue 24). So the steps run as child processes the test awaits (the
 * worker's event loop stays free and a hung process is killed and named, never waited on for
 * ever), each test states its own budget from the processes it starts, and no step is spawned
 * twice for the same answer.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/core/bytes.js';
import { verifyEd25519 } from '../../src/core/crypto/ed25519.js';
import {
  parseCheckpoint,
  parseVerifierKey,
  verifyCheckpoint,
  verifyInclusion,
} from '../../src/core/merkle/index.js';

const BIN = resolve('dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'mw-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Longest one CLI process may take before it is killed (a hang, not a slow machine). */
const STEP_MS = 120_000;
/** A test's budget: `steps` CLI processes at their worst under load, and some slack. */
const budget = (steps: number): number => steps * STEP_MS + 30_000;

function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [BIN, ...args, '--data', join(dir, 'data')],
      { encoding: 'utf8', timeout: STEP_MS, maxBuffer: 16 * 1024 * 1024 },
      (e, out, err) => {
        if (e !== null && e.killed === true)
          return fail(new Error(`memwarden ${args.join(' ')}: killed after ${STEP_MS} ms`));
        const code = e === null ? 0 : typeof e.code === 'number' ? e.code : -1;
        done({ code, out, err });
      },
    );
  });
}
const json = (r: { out: string }): Record<string, unknown> =>
  JSON.parse(r.out) as Record<string, unknown>;

beforeAll(() => {
  // `npm test` builds first; a bare `vitest run` on a fresh clone would otherwise fail each
  // step with an unhelpful "module not found".
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
});

describe('memwarden CLI', () => {
  let alice = '';
  let entry = '';

  it('registers a principal and writes a signed entry', { timeout: budget(3) }, async () => {
    expect((await cli('init')).code).toBe(0);
    const p = await cli('principals', 'add', 'alice', '--kind', 'user');
    expect(p.code).toBe(0);
    alice = json(p).id as string;
    expect(json(p).apiKey).toMatch(/^mwk_/);
    expect(alice).toMatch(/^user:[0-9a-f]{32}$/);
    const w = await cli(
      'write',
      'prefers dark mode',
      '--as',
      alice,
      '--tier',
      'USER_VERIFIED',
      '--kind',
      'fact',
    );
    expect(w.code).toBe(0);
    entry = json(w).id as string;
    // Leaves 0 and 1: alice's signed registration and her API key's issue (ADR 0033, 0070).
    expect(json(w).leafIndex).toBe(2);
  });

  it(
    'verifies the entry and proves it against a signed checkpoint',
    { timeout: budget(4) },
    async () => {
      const v = await cli('verify', entry);
      expect(v.code).toBe(0);
      expect(json(v).ok).toBe(true);
      const note = (await cli('checkpoint')).out;
      const vkey = (await cli('vkey')).out.trim();
      const { keyName, publicKey } = parseVerifierKey(vkey);
      expect(() =>
        verifyCheckpoint(note, keyName, publicKey, (m, s) => verifyEd25519(publicKey, m, s)),
      ).not.toThrow();
      const proof = json(await cli('prove', entry));
      const cp = parseCheckpoint(note.split('\n\n')[0] + '\n');
      const hashes = (proof.hashes as string[]).map(fromBase64);
      expect(
        verifyInclusion(
          proof.leafIndex as number,
          proof.treeSize as number,
          fromBase64(proof.leafHash as string),
          hashes,
          cp.root,
        ),
      ).toBe(true);
    },
  );

  it(
    'refuses bad input with a coded error and writes nothing',
    { timeout: budget(4) },
    async () => {
      const before = json(await cli('audit', '--json')).logSize;
      const r = await cli('write', 'x', '--as', alice, '--tier', 'OPERATOR');
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^error AUTH_FORBIDDEN:/);
      const u = await cli('write', 'x', '--as', 'user:' + '0'.repeat(32));
      expect(u.err).toMatch(/^error PRINCIPAL_UNKNOWN:/);
      expect(json(await cli('audit', '--json')).logSize).toBe(before);
    },
  );

  it(
    'detects an entry altered at rest (verify and audit exit 1)',
    { timeout: budget(4) },
    async () => {
      // Flip the stored content inside the signed bytes of the entry, as the database superuser.
      const db = new PGlite(join(dir, 'data', 'pgdata'), { extensions: { vector } });
      const row = await db.query<{ bytes: Uint8Array }>('SELECT bytes FROM entries WHERE id = $1', [
        entry,
      ]);
      const b = Buffer.from(row.rows[0]!.bytes);
      b.write('DARK', b.indexOf(Buffer.from('dark')));
      await db.query('UPDATE entries SET bytes = $1 WHERE id = $2', [b, entry]);
      await db.close();
      const v = await cli('verify', entry);
      expect(v.code).toBe(1);
      expect(json(v).ok).toBe(false);
      const a = await cli('audit', '--json');
      expect(a.code).toBe(1);
      const findings = json(a).findings as { code: string; subject: string }[];
      expect(new Set(findings.map((f) => f.subject))).toEqual(new Set([entry]));
      expect(findings.map((f) => f.code)).toContain('MAC_INVALID');
      const text = await cli('audit');
      expect(text.code).toBe(1);
      expect(text.out).toMatch(/^entries\.mac +1 +1$/m);
    },
  );
});
