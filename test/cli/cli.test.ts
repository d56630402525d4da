/**
 * The CLI through the built binary (CONVENTIONS: "the CLI via the built binary").
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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

function cli(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [BIN, ...args, '--data', join(dir, 'data')], {
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}
const json = (r: { out: string }): Record<string, unknown> =>
  JSON.parse(r.out) as Record<string, unknown>;

describe('memwarden CLI', () => {
  let alice = '';
  let entry = '';

  it('registers a principal and writes a signed entry', () => {
    expect(cli('init').code).toBe(0);
    const p = cli('principals', 'add', 'alice', '--kind', 'user');
    expect(p.code).toBe(0);
    alice = json(p).id as string;
    expect(json(p).apiKey).toMatch(/^mwk_/);
    expect(alice).toMatch(/^user:[0-9a-f]{32}$/);
    const w = cli(
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
    expect(json(w).leafIndex).toBe(1); // leaf 0: alice's signed registration (ADR 0033)
  });

  it('verifies the entry and proves it against a signed checkpoint', () => {
    const v = cli('verify', entry);
    expect(v.code).toBe(0);
    expect(json(v).ok).toBe(true);
    const note = cli('checkpoint').out;
    const vkey = cli('vkey').out.trim();
    const { keyName, publicKey } = parseVerifierKey(vkey);
    expect(() =>
      verifyCheckpoint(note, keyName, publicKey, (m, s) => verifyEd25519(publicKey, m, s)),
    ).not.toThrow();
    const proof = json(cli('prove', entry));
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
  });

  it('refuses bad input with a coded error and writes nothing', () => {
    const before = json(cli('audit', '--json')).logSize;
    const r = cli('write', 'x', '--as', alice, '--tier', 'OPERATOR');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^error AUTH_FORBIDDEN:/);
    const u = cli('write', 'x', '--as', 'user:' + '0'.repeat(32));
    expect(u.err).toMatch(/^error PRINCIPAL_UNKNOWN:/);
    expect(json(cli('audit', '--json')).logSize).toBe(before);
  });

  it('detects an entry altered at rest (verify and audit exit 1)', async () => {
    // Flip the stored content inside the signed bytes of the entry, as the database superuser.
    const db = new PGlite(join(dir, 'data', 'pgdata'), { extensions: { vector } });
    const row = await db.query<{ bytes: Uint8Array }>('SELECT bytes FROM entries WHERE id = $1', [
      entry,
    ]);
    const b = Buffer.from(row.rows[0]!.bytes);
    b.write('DARK', b.indexOf(Buffer.from('dark')));
    await db.query('UPDATE entries SET bytes = $1 WHERE id = $2', [b, entry]);
    await db.close();
    const v = cli('verify', entry);
    expect(v.code).toBe(1);
    expect(json(v).ok).toBe(false);
    const a = cli('audit', '--json');
    expect(a.code).toBe(1);
    const findings = json(a).findings as { code: string; subject: string }[];
    expect(new Set(findings.map((f) => f.subject))).toEqual(new Set([entry]));
    expect(findings.map((f) => f.code)).toContain('MAC_INVALID');
    const text = cli('audit');
    expect(text.code).toBe(1);
    expect(text.out).toMatch(/^entries\.mac +1 +1$/m);
  });
});
