/**
 * @module cli/eval
 * `memwarden eval memlineage [--out DIR] [--json] [--attacks FILE.jsonl] [--profile P,…]
 * [--tau T] [--mode M] [--model M --base-url URL --trials N]`: replay the MemLineage §6
 * experiments and the issue 18 adaptive-attacker suite on the deterministic harness and write
 * CSVs, `summary.json` and a self-contained `report.html`; print the adaptive table. Progress
 * goes to stderr; `--json` prints the summary to stdout instead of the table.
 *
 * `--attacks` replaces the built-in adaptive suite with the researcher's specs (JSONL, see
 * `eval/README.md`); `--profile`, `--tau` and `--mode` set the profiles, the lineage τ and the
 * gate's verdict mode of the adaptive table (the reproduction of the paper's tables keeps the
 * paper's settings). With `--model`, the Table 1 matrix is also run `--trials` times with a live
 * OpenAI-compatible model (key from `MEMWARDEN_LLM_API_KEY` or `OPENAI_API_KEY`) into
 * `asr_matrix_llm.csv` with Wilson 95% intervals; the model is named in every row.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { OpenAiCompatibleProvider } from '../adapters/llm/index.js';
import { MemwardenError } from '../core/errors.js';
import { VerdictModes, type VerdictMode } from '../core/gate/index.js';
import { DEFAULT_LINEAGE_OPTIONS } from '../core/lineage/index.js';
import { registerEvalAuthselect } from '../eval/authselect/index.js';
import { registerEvalDetect } from '../eval/detect/index.js';
import { registerEvalInjections } from '../eval/injections/index.js';
import { measureTimings, timingsCsv } from '../eval/memlineage/timings.js';
import {
  LlmAgent,
  ProfileNames,
  adaptiveText,
  artifacts,
  llmMatrixCsv,
  parseAttackSpecs,
  profile,
  runLlmTrials,
  runMemLineage,
  summary,
  writeArtifacts,
  type Profile,
  type ProfileName,
} from '../eval/memlineage/index.js';

interface EvalOptions {
  readonly out: string;
  readonly json?: boolean;
  readonly timings?: boolean;
  readonly model?: string;
  readonly baseUrl?: string;
  readonly attacks?: string;
  readonly profile?: string;
  readonly tau?: string;
  readonly mode?: string;
  readonly trials?: string;
}

const invalid = (message: string): MemwardenError => new MemwardenError('INPUT_INVALID', message);

/** The adaptive table's profiles from the command line (`--profile`, `--tau`, `--mode`). */
function profilesFrom(o: EvalOptions): Profile[] | undefined {
  if (o.profile === undefined && o.tau === undefined && o.mode === undefined) return undefined;
  const names = (o.profile ?? ProfileNames.join(',')).split(',').map((x) => x.trim());
  for (const n of names)
    if (!(ProfileNames as readonly string[]).includes(n))
      throw invalid(`--profile: unknown profile "${n}" (one of ${ProfileNames.join(', ')})`);
  if (o.mode !== undefined && !(VerdictModes as readonly string[]).includes(o.mode))
    throw invalid(`--mode: one of ${VerdictModes.join(', ')}`);
  const tau = o.tau === undefined ? undefined : Number(o.tau);
  if (tau !== undefined && !(Number.isFinite(tau) && tau >= 0 && tau <= 1))
    throw invalid('--tau: a number in [0, 1]');
  return names.map((n) => {
    const p = profile(n as ProfileName, (o.mode ?? 'deny') as VerdictMode);
    if (tau === undefined) return p;
    return {
      ...p,
      name: `${p.name}@tau=${tau}`,
      lineage: { ...(n === 'strict' ? p.lineage : DEFAULT_LINEAGE_OPTIONS), tau },
    };
  });
}

/** Add `memwarden eval …`; returns the `eval` command so other harnesses can add theirs. */
export function registerEval(program: Command): Command {
  const ev = program.command('eval').description('run an evaluation harness');
  ev.command('memlineage')
    .description(
      'replay the MemLineage §5–§6 experiments and the adaptive-attacker suite (deterministic; byte-identical reruns)',
    )
    .option('--out <dir>', 'output folder', 'eval-out/memlineage')
    .option('--json', 'print the summary JSON to stdout (instead of the adaptive table)')
    .option('--timings', 'also regenerate perf_baseline.csv (Table 7; wall-clock, not byte-stable)')
    .option('--attacks <file>', 'adaptive attack specs (JSONL) replacing the built-in suite')
    .option(
      '--profile <names>',
      `adaptive table profiles, comma-separated (${ProfileNames.join(', ')})`,
    )
    .option('--tau <t>', 'lineage threshold τ of the adaptive table profiles')
    .option('--mode <mode>', `gate verdict mode of the adaptive table (${VerdictModes.join(', ')})`)
    .option('--model <name>', 'also run the Table 1 matrix with this OpenAI-compatible model')
    .option(
      '--base-url <url>',
      'OpenAI-compatible API root for --model',
      'https://api.openai.com/v1',
    )
    .option('--trials <n>', 'repetitions of each live-model cell (Wilson 95% intervals)', '1')
    .action(async (o: EvalOptions) => {
      const progress = (line: string): void => {
        process.stderr.write(`[memlineage] ${line}\n`);
      };
      const attacks =
        o.attacks === undefined ? undefined : parseAttackSpecs(await readFile(o.attacks, 'utf8'));
      const profiles = profilesFrom(o);
      const trials = Number(o.trials ?? '1');
      if (!Number.isInteger(trials) || trials < 1 || trials > 1000)
        throw invalid('--trials: an integer in 1…1000');
      const results = await runMemLineage({
        progress,
        ...(attacks === undefined ? {} : { attacks }),
        ...(profiles === undefined ? {} : { profiles }),
      });
      const files = artifacts(results);
      if (o.model !== undefined) {
        const apiKey = process.env['MEMWARDEN_LLM_API_KEY'] ?? process.env['OPENAI_API_KEY'];
        const llm = new OpenAiCompatibleProvider({
          baseUrl: o.baseUrl ?? 'https://api.openai.com/v1',
          model: o.model,
          ...(apiKey === undefined ? {} : { apiKey }),
        });
        const cells = await runLlmTrials(new LlmAgent(llm), { trials, model: o.model, progress });
        files.set('asr_matrix_llm.csv', llmMatrixCsv(cells));
      }
      if (o.timings === true) {
        files.set('perf_baseline.csv', timingsCsv(await measureTimings(progress)));
      }
      const names = await writeArtifacts(files, o.out);
      progress(`wrote ${names.length} files to ${o.out}`);
      if (o.json === true) process.stdout.write(`${JSON.stringify(summary(results), null, 2)}\n`);
      else process.stdout.write(adaptiveText(results));
    });
  registerEvalAuthselect(ev);
  registerEvalDetect(ev);
  registerEvalInjections(ev);
  return ev;
}
