/**
 * @module cli/eval
 * `memwarden eval memlineage [--out DIR] [--json] [--model M --base-url URL]`: replay the
 * MemLineage §6 experiments on the deterministic harness and write CSVs, `summary.json` and a
 * self-contained `report.html`. Progress goes to stderr; `--json` prints the summary to stdout.
 * With `--model`, the Table 1 matrix is also run with a live OpenAI-compatible model (key from
 * `MEMWARDEN_LLM_API_KEY` or `OPENAI_API_KEY`) into `asr_matrix_llm.csv` (not byte-stable).
 */
import type { Command } from 'commander';
import { OpenAiCompatibleProvider } from '../adapters/llm/index.js';
import { registerEvalAuthselect } from '../eval/authselect/index.js';
import { registerEvalDetect } from '../eval/detect/index.js';
import { registerEvalInjections } from '../eval/injections/index.js';
import { measureTimings, timingsCsv } from '../eval/memlineage/timings.js';
import {
  LlmAgent,
  artifacts,
  csv,
  runLlmMatrix,
  runMemLineage,
  summary,
  writeArtifacts,
} from '../eval/memlineage/index.js';

interface EvalOptions {
  readonly out: string;
  readonly json?: boolean;
  readonly timings?: boolean;
  readonly model?: string;
  readonly baseUrl?: string;
}

/** Add `memwarden eval …`; returns the `eval` command so other harnesses can add theirs. */
export function registerEval(program: Command): Command {
  const ev = program.command('eval').description('run an evaluation harness');
  ev.command('memlineage')
    .description('replay the MemLineage §5–§6 experiments (deterministic; byte-identical reruns)')
    .option('--out <dir>', 'output folder', 'eval-out/memlineage')
    .option('--json', 'print the summary JSON to stdout')
    .option('--timings', 'also regenerate perf_baseline.csv (Table 7; wall-clock, not byte-stable)')
    .option('--model <name>', 'also run the Table 1 matrix with this OpenAI-compatible model')
    .option(
      '--base-url <url>',
      'OpenAI-compatible API root for --model',
      'https://api.openai.com/v1',
    )
    .action(async (o: EvalOptions) => {
      const progress = (line: string): void => {
        process.stderr.write(`[memlineage] ${line}\n`);
      };
      const results = await runMemLineage({ progress });
      const files = artifacts(results);
      if (o.model !== undefined) {
        const apiKey = process.env['MEMWARDEN_LLM_API_KEY'] ?? process.env['OPENAI_API_KEY'];
        const llm = new OpenAiCompatibleProvider({
          baseUrl: o.baseUrl ?? 'https://api.openai.com/v1',
          model: o.model,
          ...(apiKey === undefined ? {} : { apiKey }),
        });
        const cells = await runLlmMatrix(new LlmAgent(llm), { progress });
        files.set('asr_matrix_llm.csv', csv(cells, ['defense', 'attack', 'asr', 'evidence']));
      }
      if (o.timings === true) {
        files.set('perf_baseline.csv', timingsCsv(await measureTimings(progress)));
      }
      const names = await writeArtifacts(files, o.out);
      progress(`wrote ${names.length} files to ${o.out}`);
      if (o.json === true) process.stdout.write(`${JSON.stringify(summary(results), null, 2)}\n`);
    });
  registerEvalAuthselect(ev);
  registerEvalDetect(ev);
  registerEvalInjections(ev);
  return ev;
}
