/**
 * @module eval/injections/cli
 * `memwarden eval injections [DEV_JSONL]`: registered on the `eval` command. Writes
 * `report.json`, `report.html` and `summary.txt` to `--out`, the summary to stdout, progress
 * to stderr. DEV_JSONL defaults to injections/dev.jsonl in the data folder — MEMWARDEN_EVAL_DATA,
 * else ../shared/data beside the package (resolved from this module's location, so the command
 * means the same file from any working directory); `--locomo` (default locomo/locomo-dev5.json
 * there, skipped when absent) adds the warm default stack and the detector-contribution table.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, Option } from 'commander';
import { MemwardenError } from '../../core/errors.js';
import { makeEmbedder } from '../detect/cli.js';
import { htmlReport, textSummary } from './report.js';
import { runInjectionsEval } from './run.js';

/** The package root: this module is src/eval/injections/cli.ts or dist/eval/injections/cli.js. */
export const PACKAGE_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** The public data folder: MEMWARDEN_EVAL_DATA, else ../shared/data beside the package. */
export const DATA_ROOT = resolve(
  process.env.MEMWARDEN_EVAL_DATA ?? resolve(PACKAGE_ROOT, '../shared/data'),
);
export const DEFAULT_DEV = join(DATA_ROOT, 'injections/dev.jsonl');
export const DEFAULT_LOCOMO = join(DATA_ROOT, 'locomo/locomo-dev5.json');

interface Opts {
  readonly embedder: string;
  readonly out: string;
  readonly cache: string;
  readonly locomo: string;
  readonly cv: boolean;
  readonly proactiveKappa?: string;
}

export function registerEvalInjections(parent: Command): Command {
  return parent
    .command('injections')
    .description(
      'write screening on public prompt-injection corpora: TPR / FPR per source and tier, ROC per tier, keyword baseline, cross-validation',
    )
    .argument('[dev]', 'the corpus (JSONL {text, label, source, category})', DEFAULT_DEV)
    .addOption(
      new Option('--embedder <kind>', 'embedding model')
        .choices(['minilm', 'deterministic'])
        .default('minilm'),
    )
    .option(
      '--locomo <file>',
      'LoCoMo file for the MemSAD / probes reference and query history',
      DEFAULT_LOCOMO,
    )
    .option('--no-cv', 'skip cross-validation (quick run)')
    .option(
      '--proactive-kappa <k>',
      'measure the default stack with one probe κ for every tier, uncorroborated (the policy before ADR 0052)',
    )
    .option('--out <dir>', 'report folder', 'eval-out/injections')
    .option('--cache <dir>', 'embedding cache folder', '.cache/eval-embeddings')
    .action(async (dev: string, o: Opts) => {
      const log = (m: string): void => {
        process.stderr.write(`eval injections: ${m}\n`);
      };
      const kappa = o.proactiveKappa === undefined ? undefined : Number(o.proactiveKappa);
      if (kappa !== undefined && !(Number.isFinite(kappa) && kappa > 0))
        throw new MemwardenError(
          'INPUT_INVALID',
          `--proactive-kappa must be a positive number, got ${o.proactiveKappa}`,
        );
      const locomo = existsSync(o.locomo) ? o.locomo : undefined;
      if (locomo === undefined)
        log(`no LoCoMo file at ${o.locomo}: detector contributions skipped`);
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
