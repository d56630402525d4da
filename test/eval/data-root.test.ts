/**
 * The evals' data folder is named, never guessed (eval/data-root.ts): `--data DIR`, else
 * MEMWARDEN_EVAL_DATA; with neither — or when the file is not in the folder — `memwarden eval
 * locomo` / `eval injections` stop with EVAL_DATA_MISSING before reading anything, and the
 * message tells the user both ways to name it. The runs use the committed fixtures
 * (test/fixtures/locomo, test/fixtures/injections, SOURCE notes there), copied into a temp folder
 * laid out as the data folder is.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { MemwardenError } from '../../src/core/errors.js';
import {
  EVAL_DATA_ENV,
  INJECTIONS_DEV,
  LOCOMO_DEV5,
  evalDataFile,
  evalDataRoot,
} from '../../src/eval/data-root.js';
import { runEval } from '../helpers/eval-cli.js';

const fixture = (p: string): string => fileURLToPath(new URL(`../fixtures/${p}`, import.meta.url));
const data = mkdtempSync(join(tmpdir(), 'mw-eval-data-'));
mkdirSync(join(data, 'locomo'));
mkdirSync(join(data, 'injections'));
copyFileSync(fixture('locomo/locomo-mini.json'), join(data, LOCOMO_DEV5));
copyFileSync(fixture('injections/sample.jsonl'), join(data, INJECTIONS_DEV));
const empty = mkdtempSync(join(tmpdir(), 'mw-eval-empty-'));
afterAll(() => {
  rmSync(data, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});
afterEach(() => void vi.unstubAllEnvs());

/** stdout of `memwarden eval ARGS`; rejects with the action's error. */
const evalCli = async (...args: string[]): Promise<string> => (await runEval(args)).out;

async function missing(run: Promise<unknown>): Promise<MemwardenError> {
  const e: unknown = await run.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(MemwardenError);
  expect((e as MemwardenError).code).toBe('EVAL_DATA_MISSING');
  return e as MemwardenError;
}

describe('the eval data folder', () => {
  it('is --data, else MEMWARDEN_EVAL_DATA, else nothing (an empty value is unset)', () => {
    expect(evalDataRoot(data, { [EVAL_DATA_ENV]: empty })).toBe(data);
    expect(evalDataRoot(undefined, { [EVAL_DATA_ENV]: empty })).toBe(empty);
    expect(evalDataRoot('', { [EVAL_DATA_ENV]: empty })).toBe(empty);
    expect(evalDataRoot(undefined, {})).toBeUndefined();
    expect(evalDataRoot(undefined, { [EVAL_DATA_ENV]: '' })).toBeUndefined();
    expect(evalDataFile(LOCOMO_DEV5, data, {})).toBe(join(data, LOCOMO_DEV5));
  });

  it('unnamed: EVAL_DATA_MISSING, and the message names the flag and the variable', async () => {
    expect(() => evalDataFile(INJECTIONS_DEV, undefined, {})).toThrow(MemwardenError);
    vi.stubEnv(EVAL_DATA_ENV, '');
    for (const cmd of ['locomo', 'injections']) {
      const e = await missing(evalCli(cmd, '--embedder', 'deterministic'));
      // The one place a message is the contract: it must tell the user how to name the folder.
      expect(e.message).toContain('--data');
      expect(e.message).toContain(EVAL_DATA_ENV);
    }
  });

  it('named but without the file: EVAL_DATA_MISSING (from the flag, the variable or a path)', async () => {
    await missing(evalCli('locomo', '--data', empty, '--embedder', 'deterministic'));
    await missing(evalCli('injections', '--data', empty, '--embedder', 'deterministic'));
    await missing(evalCli('locomo', join(empty, 'absent.json'), '--embedder', 'deterministic'));
    vi.stubEnv(EVAL_DATA_ENV, empty);
    await missing(evalCli('locomo', '--embedder', 'deterministic'));
  });

  it('eval locomo reads the file in the folder --data names', async () => {
    vi.stubEnv(EVAL_DATA_ENV, empty); // the flag wins over the variable
    const flags = ['--data', data, '--conversations', '1', '--embedder', 'deterministic', '--json'];
    const report = JSON.parse(await evalCli('locomo', ...flags));
    expect(report.conversations.map((c: { id: string }) => c.id)).toEqual(['mini-1']);
  }, 120_000);
});
