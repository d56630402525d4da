/**
 * @module eval/locomo
 * `memwarden eval locomo [path]`: evidence recall@5 / @10 per LoCoMo category for default
 * memwarden, undefended dense retrieval and BM25 in one run (issue 20). Progress on stderr;
 * the table on stdout (`--json`: the report as JSON); `--out DIR` writes `report.json` and
 * `report.html` (with the charts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, Option } from 'commander';
import { DeterministicEmbedder, LocalMiniLmEmbedder } from '../../adapters/embeddings/index.js';
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

/** The default data path: the shared LoCoMo dev split beside the repository. */
export const DEFAULT_LOCOMO = '../shared/data/locomo/locomo-dev5.json';

export function registerEvalLocomo(parent: Command): Command {
  return parent
    .command('locomo')
    .description('LoCoMo evidence recall@5/@10 per category: memwarden, undefended dense, BM25')
    .argument('[path]', 'the LoCoMo JSON file', DEFAULT_LOCOMO)
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
        path: string,
        o: { embedder: string; conversations?: string; out?: string; json?: boolean },
      ) => {
        const progress = (line: string): void => void process.stderr.write(`[locomo] ${line}\n`);
        // The default is relative to the repository (the package root), not to the caller's cwd.
        if (path === DEFAULT_LOCOMO)
          path = resolve(fileURLToPath(new URL('../../../', import.meta.url)), DEFAULT_LOCOMO);
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
