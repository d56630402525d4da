/**
 * @module eval/data-root
 * Where the evals find the public data they measure on (issue 22's injection corpora, LoCoMo):
 * a folder the user names — `--data DIR`, else the `MEMWARDEN_EVAL_DATA` environment variable.
 * Nothing is guessed: with neither, or when the file is not in the folder, the eval stops with
 * `EVAL_DATA_MISSING` (the message names the flag, the variable and the path it looked for). A
 * checkout has no data beside it; the tests use the committed fixtures under test/fixtures.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { MemwardenError } from '../core/errors.js';

/** The environment variable naming the data folder when `--data` is not given. */
export const EVAL_DATA_ENV = 'MEMWARDEN_EVAL_DATA';
/** The injection corpus inside the data folder. */
export const INJECTIONS_DEV = 'injections/dev.jsonl';
/** The LoCoMo development split inside the data folder. */
export const LOCOMO_DEV5 = 'locomo/locomo-dev5.json';

const HOW = `pass --data DIR or set ${EVAL_DATA_ENV}=DIR (the folder holding ${INJECTIONS_DEV} and ${LOCOMO_DEV5})`;

/**
 * The data folder: `flag` (`--data`), else `env[MEMWARDEN_EVAL_DATA]`, resolved against the
 * working directory; `undefined` when neither is set (an empty value counts as unset).
 */
export function evalDataRoot(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const dir = flag !== undefined && flag !== '' ? flag : env[EVAL_DATA_ENV];
  return dir === undefined || dir === '' ? undefined : resolve(dir);
}

/**
 * The file `relative` inside the data folder, which must exist. Throws `EVAL_DATA_MISSING` when
 * no folder is named (`--data` / `MEMWARDEN_EVAL_DATA`) or the file is not there.
 */
export function evalDataFile(
  relative: string,
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const root = evalDataRoot(flag, env);
  if (root === undefined)
    throw new MemwardenError('EVAL_DATA_MISSING', `no data folder for ${relative}: ${HOW}`, {
      details: { file: relative },
    });
  return existingEvalFile(resolve(root, relative));
}

/** `path` itself when it exists; `EVAL_DATA_MISSING` (naming the flag and the variable) when not. */
export function existingEvalFile(path: string): string {
  if (!existsSync(path))
    throw new MemwardenError('EVAL_DATA_MISSING', `${path} does not exist: ${HOW}`, {
      details: { path },
    });
  return path;
}
