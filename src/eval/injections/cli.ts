/**
 * @module eval/injections/cli
 * `memwarden eval injections [DEV_JSONL] [--data DIR]`: registered on the `eval` command. Writes
 * `report.json`, `report.html` and `summary.txt` to `--out`, the summary to stdout, progress
 * to stderr. DEV_JSONL defaults to injections/dev.jsonl in the data folder — `--data DIR`, else
 * `MEMWARDEN_EVAL_DATA`; with neither (and no DEV_JSONL) the command stops with
 * `EVAL_DATA_MISSING` (eval/data-root.ts: no folder is guessed). `--locomo` (default
 * locomo/locomo-dev5.json in the data folder, skipped when absent) adds the warm default stack
 * and the detector-contribution table.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { MemwardenError } from '../../core/errors.js';
import {
  EVAL_DATA_ENV,
  INJECTIONS_DEV,
  LOCOMO_DEV5,
  evalDataFile,
  evalDataRoot,
  existingEvalFile,
} from '../data-root.js';
import { makeEmbedder } from '../detect/cli.js';
import { htmlReport, textSummary } from './report.js';
import { runInjectionsEval } from './run.js';

interface Opts {
  readonly embedder: string;
  readonly out: string;
  readonly cache: string;
  readonly data?: string;
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
      `the corpus (JSONL {text, label, source, category}); default ${INJECTIONS_DEV} in the data folder`,
    )
    .option('--data <dir>', `the data folder (else ${EVAL_DATA_ENV})`)
    .addOption(
      new Option('--embedder <kind>', 'embedding model')
        .choices(['minilm', 'deterministic'])
        .default('minilm'),
    )
    .option(
      '--locomo <file>',
      `LoCoMo file for the MemSAD / probes reference and query history (default ${LOCOMO_DEV5} in the data folder; skipped when absent)`,
    )
    .option('--no-cv', 'skip cross-validation (quick run)')
    .option(
      '--proactive-kappa <k>',
      'measure the default stack with one probe κ for every tier, uncorroborated (the policy before ADR 0052)',
    )
    .option('--out <dir>', 'report folder', 'eval-out/injections')
    .option('--cache <dir>', 'embedding cache folder', '.cache/eval-embeddings')
    .action(async (devArg: string | undefined, o: Opts) => {
      const log = (m: string): void => {
        process.stderr.write(`eval injections: ${m}\n`);
      };
      const kappa = o.proactiveKappa === undefined ? undefined : Number(o.proactiveKappa);
      if (kappa !== undefined && !(Number.isFinite(kappa) && kappa > 0))
        throw new MemwardenError(
          'INPUT_INVALID',
          `--proactive-kappa must be a positive number, got ${o.proactiveKappa}`,
        );
      const dev =
        devArg === undefined
          ? evalDataFile(INJECTIONS_DEV, o.data)
          : existingEvalFile(resolve(devArg));
      const root = evalDataRoot(o.data);
      const locomoPath = o.locomo ?? (root === undefined ? undefined : join(root, LOCOMO_DEV5));
      const locomo = locomoPath !== undefined && existsSync(locomoPath) ? locomoPath : undefined;
      if (locomo === undefined)
        log(
          `no LoCoMo file ${locomoPath === undefined ? '(no --locomo, no data folder)' : `at ${locomoPath}`}: detector contributions skipped`,
        );
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
