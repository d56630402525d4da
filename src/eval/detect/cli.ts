/**
 * @module eval/detect/cli
 * `memwarden eval detect`: registered on the `eval` command by `registerEvalDetect(evalCmd)`.
 * Writes `report.json` and `report.html` to `--out` and a text summary to stdout.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { DeterministicEmbedder, LocalMiniLmEmbedder } from '../../adapters/embeddings/index.js';
import type { Embedder } from '../../ports/embedder.js';
import { htmlReport, textSummary } from './report.js';
import { runDetectEval } from './run.js';

export interface EvalDetectCliOptions {
  readonly embedder: 'minilm' | 'deterministic';
  readonly seeds: string;
  readonly out: string;
  readonly cache: string;
  readonly synonymEntries: string;
  readonly historyQueries: string;
  readonly mixedHistoryQueries: string;
  readonly kappa?: string;
  readonly targetFpr: string;
  readonly workloadWrites: string;
}

export function makeEmbedder(kind: string): Embedder {
  return kind === 'deterministic' ? new DeterministicEmbedder(384) : new LocalMiniLmEmbedder();
}

export function registerEvalDetect(parent: Command): Command {
  return parent
    .command('detect')
    .description(
      'write-time poisoning detection: attack × defence matrix, ROC, synonym evasion, compound exposure',
    )
    .addOption(
      new Option('--embedder <kind>', 'embedding model')
        .choices(['minilm', 'deterministic'])
        .default('minilm'),
    )
    .option('--seeds <n>', 'seeds (corpus permutations)', '5')
    .option('--kappa <k>', 'fixed MemSAD κ in τ = mean + κσ (default: tuned on the tuning split)')
    .option('--target-fpr <p>', 'per-detector FPR target when tuning κ on the tuning split', '0.003')
    .option(
      '--history-queries <n>',
      'benign queries mixed into the MemSAD history (0 = paper protocol)',
      '0',
    )
    .option(
      '--mixed-history-queries <n>',
      'benign queries in the second, realistic history regime (0 skips it)',
      '200',
    )
    .option('--workload-writes <n>', 'benign writes of the Memory.add workload (0 skips it)', '400')
    .option('--synonym-entries <n>', 'entries per attack for the synonym attack', '5')
    .option('--out <dir>', 'report folder', 'eval-out/detect')
    .option('--cache <dir>', 'embedding cache folder', '.cache/eval-embeddings')
    .action(async (o: EvalDetectCliOptions) => {
      const report = await runDetectEval({
        embedder: makeEmbedder(o.embedder),
        cacheDir: o.cache,
        seeds: Math.max(1, Number.parseInt(o.seeds, 10) || 5),
        synonymEntries: Math.max(0, Number.parseInt(o.synonymEntries, 10) || 0),
        historyQueries: Math.max(0, Number.parseInt(o.historyQueries, 10) || 0),
        mixedHistoryQueries: Math.max(0, Number.parseInt(o.mixedHistoryQueries, 10) || 0),
        workloadWrites: Math.max(0, Number.parseInt(o.workloadWrites, 10) || 0),
        ...(o.kappa !== undefined && Number.isFinite(Number.parseFloat(o.kappa))
          ? { kappa: Number.parseFloat(o.kappa) }
          : {}),
        ...(Number.isFinite(Number.parseFloat(o.targetFpr)) ? { targetFpr: Number.parseFloat(o.targetFpr) } : {}),
        log: (m) => process.stderr.write(`eval detect: ${m}\n`),
      });
      mkdirSync(o.out, { recursive: true });
      writeFileSync(join(o.out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(join(o.out, 'report.html'), htmlReport(report));
      process.stdout.write(`${textSummary(report)}\n\nwrote ${join(o.out, 'report.html')}\n`);
    });
}
