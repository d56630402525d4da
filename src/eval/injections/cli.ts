/**
 * @module eval/injections/cli
 * `memwarden eval injections [DEV_JSONL]`: registered on the `eval` command. Writes
 * `report.json`, `report.html` and `summary.txt` to `--out`, the summary to stdout, progress
 * to stderr. DEV_JSONL defaults to ../shared/data/injections/dev.jsonl (relative to the
 * working directory, i.e. the repository); `--locomo` (default
 * ../shared/data/locomo/locomo-dev5.json, skipped when absent) adds the detector-contribution
 * table with MemSAD / MemSAD+ / probes on a mixed query history.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { makeEmbedder } from '../detect/cli.js';
import { htmlReport, textSummary } from './report.js';
import { runInjectionsEval } from './run.js';

export const DEFAULT_DEV = '../shared/data/injections/dev.jsonl';
export const DEFAULT_LOCOMO = '../shared/data/locomo/locomo-dev5.json';

interface Opts {
  readonly embedder: string;
  readonly out: string;
  readonly cache: string;
  readonly locomo: string;
  readonly cv: boolean;
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
    .option('--out <dir>', 'report folder', 'eval-out/injections')
    .option('--cache <dir>', 'embedding cache folder', '.cache/eval-embeddings')
    .action(async (dev: string, o: Opts) => {
      const log = (m: string): void => {
        process.stderr.write(`eval injections: ${m}\n`);
      };
      const locomo = existsSync(o.locomo) ? o.locomo : undefined;
      if (locomo === undefined)
        log(`no LoCoMo file at ${o.locomo}: detector contributions skipped`);
      const report = await runInjectionsEval({
        data: dev,
        embedder: makeEmbedder(o.embedder),
        cacheDir: o.cache,
        crossValidate: o.cv,
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
