/**
 * @module eval/locomo
 * `memwarden eval locomo [path] [--data DIR]`: evidence recall@5 / @10 per LoCoMo category for default
 * memwarden, undefended dense retrieval and BM25 in one run (issue 20). Progress on stderr;
 * the table on stdout (`--json`: the report as JSON); `--out DIR` writes `report.json` and
 * `report.html` (with the charts). `path` defaults to locomo/locomo-dev5.json in the data folder
 * (`--data DIR`, else `MEMWARDEN_EVAL_DATA`); with neither the command stops with
 * `EVAL_DATA_MISSING` — no folder is guessed (eval/data-root.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { DeterministicEmbedder, LocalMiniLmEmbedder } from '../../adapters/embeddings/index.js';
import { EVAL_DATA_ENV, LOCOMO_DEV5, evalDataFile, existingEvalFile } from '../data-root.js';
import { loadLocomo } from './data.js';
import { htmlReport, textTable } from './report.js';
import { runLocomo } from './run.js';

export {
  loadLocomo,
  parseLocomo,
  parseSessionDate,
  CATEGORY_NAMES,
  type Conversation,
} from './data.js';
export { runLocomo, SYSTEMS, KS, type LocomoReport, type Cell } from './run.js';
export { htmlReport, textTable, checks } from './report.js';

export function registerEvalLocomo(parent: Command): Command {
  return parent
    .command('locomo')
    .description('LoCoMo evidence recall@5/@10 per category: memwarden, undefended dense, BM25')
    .argument('[path]', `the LoCoMo JSON file; default ${LOCOMO_DEV5} in the data folder`)
    .option('--data <dir>', `the data folder (else ${EVAL_DATA_ENV})`)
    .addOption(
      new Option('--embedder <kind>', 'embedding model (all three systems)')
        .choices(['minilm', 'deterministic'])
        .default('minilm'),
    )
    .option('--conversations <n>', 'only the first n conversations')
    .option('--out <dir>', 'write report.json and report.html here')
    .option('--json', 'print the report as JSON instead of the table')
    .action(
      async (
        pathArg: string | undefined,
        o: {
          embedder: string;
          data?: string;
          conversations?: string;
          out?: string;
          json?: boolean;
        },
      ) => {
        const progress = (line: string): void => void process.stderr.write(`[locomo] ${line}\n`);
        const path =
          pathArg === undefined
            ? evalDataFile(LOCOMO_DEV5, o.data)
            : existingEvalFile(resolve(pathArg));
        const data = loadLocomo(path);
        progress(`${data.length} conversations from ${path}`);
        const embedder =
          o.embedder === 'deterministic'
            ? new DeterministicEmbedder(384)
            : new LocalMiniLmEmbedder();
        const report = await runLocomo(data, {
          embedder,
          progress,
          ...(o.conversations === undefined ? {} : { limit: Number(o.conversations) }),
        });
        if (o.out !== undefined) {
          mkdirSync(o.out, { recursive: true });
          writeFileSync(join(o.out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
          const command = `memwarden eval locomo ${path}${o.embedder === 'minilm' ? '' : ` --embedder ${o.embedder}`}${o.conversations === undefined ? '' : ` --conversations ${o.conversations}`} --out ${o.out}`;
          writeFileSync(join(o.out, 'report.html'), htmlReport(report, { data: path, command }));
          progress(`wrote report.json and report.html to ${o.out}`);
        }
        process.stdout.write(
          o.json === true ? `${JSON.stringify(report, null, 2)}\n` : textTable(report),
        );
      },
    );
}
