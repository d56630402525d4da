/**
 * @module eval/injections/cli
 * `memwarden eval injections [DEV_JSONL]`: registered on the `eval` command. Writes
 * `report.json`, `report.html` and `summary.txt` to `--out`, the summary to stdout, progress
 * to stderr. DEV_JSONL defaults to injections/dev.jsonl in the data folder MEMWARDEN_EVAL_DATA;
 * with neither, the command refuses (INPUT_INVALID naming both) — it never guesses a folder beside
 * the package, which a user's clone does not have. `--locomo` (default locomo/locomo-dev5.json
 * there, skipped when absent) adds the warm default stack and the detector-contribution table.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { MemwardenError } from '../../core/errors.js';
import { makeEmbedder } from '../detect/cli.js';
import { htmlReport, textSummary } from './report.js';
import { runInjectionsEval } from './run.js';

/** The public data folder when named by MEMWARDEN_EVAL_DATA (never guessed). */
export const DATA_ROOT: string | undefined =
  process.env.MEMWARDEN_EVAL_DATA === undefined || process.env.MEMWARDEN_EVAL_DATA === ''
    ? undefined
    : resolve(process.env.MEMWARDEN_EVAL_DATA);
export const DEFAULT_DEV: string | undefined =
  DATA_ROOT === undefined ? undefined : join(DATA_ROOT, 'injections/dev.jsonl');
export const DEFAULT_LOCOMO: string | undefined =
  DATA_ROOT === undefined ? undefined : join(DATA_ROOT, 'locomo/locomo-dev5.json');

interface Opts {
  readonly embedder: string;
  readonly out: string;
  readonly cache: string;
  readonly locomo?: string;
  readonly cv: boolean;
  readonly proactiveKappa?: string;
}

export function registerEvalInjections(parent: Command): Command {
  return parent
    .command('injections')
    .description(
      'write screening on public prompt-injection corpora: TPR / FPR per source and tier, ROC per tier, keyword baseline, cross-validation',
    )
    .argument(
      '[dev]',
      'the corpus (JSONL {text, label, source, category}); default: injections/dev.jsonl in MEMWARDEN_EVAL_DATA',
    )
    .addOption(
      new Option('--embedder <kind>', 'embedding model')
        .choices(['minilm', 'deterministic'])
        .default('minilm'),
    )
    .option(
      '--locomo <file>',
      'LoCoMo file for the MemSAD / probes reference and query history (default: locomo/locomo-dev5.json in MEMWARDEN_EVAL_DATA)',
    )
    .option('--no-cv', 'skip cross-validation (quick run)')
    .option(
      '--proactive-kappa <k>',
      'measure the default stack with one probe κ for every tier, uncorroborated (the policy before ADR 0052)',
    )
    .option('--out <dir>', 'report folder', 'eval-out/injections')
    .option('--cache <dir>', 'embedding cache folder', '.cache/eval-embeddings')
    .action(async (devArg: string | undefined, o: Opts) => {
      const dev = devArg ?? DEFAULT_DEV;
      if (dev === undefined)
        throw new MemwardenError(
          'INPUT_INVALID',
          'name the corpus: memwarden eval injections DEV_JSONL, or set MEMWARDEN_EVAL_DATA to the data folder',
          { details: { field: 'dev' } },
        );
      const log = (m: string): void => {
        process.stderr.write(`eval injections: ${m}\n`);
      };
      const kappa = o.proactiveKappa === undefined ? undefined : Number(o.proactiveKappa);
      if (kappa !== undefined && !(Number.isFinite(kappa) && kappa > 0))
        throw new MemwardenError(
          'INPUT_INVALID',
          `--proactive-kappa must be a positive number, got ${o.proactiveKappa}`,
        );
      const locomoPath = o.locomo ?? DEFAULT_LOCOMO;
      const locomo = locomoPath !== undefined && existsSync(locomoPath) ? locomoPath : undefined;
      if (locomo === undefined)
        log(`no LoCoMo file (${locomoPath ?? 'none named'}): detector contributions skipped`);
      const report = await runInjectionsEval({
        data: dev,
        embedder: makeEmbedder(o.embedder),
        cacheDir: o.cache,
        crossValidate: o.cv,
        ...(kappa === undefined ? {} : { stackConfig: { proactive: { kappa } } }),
        ...(locomo === undefined ? {} : { locomo }),
        log,
      });
      mkdirSync(o.out, { recursive: true });
      const summary = textSummary(report);
      writeFileSync(join(o.out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(join(o.out, 'report.html'), htmlReport(report));
      writeFileSync(join(o.out, 'summary.txt'), `${summary}\n`);
      process.stdout.write(`${summary}\n\nwrote ${join(o.out, 'report.html')}\n`);
    });
}
