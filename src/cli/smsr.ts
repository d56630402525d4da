/**
 * @module cli/smsr
 * `memwarden smsr certificate|plan` (Theorem 2 and parameter selection, SMSR §VI-A, §VII-J)
 * and `memwarden eval smsr` (the evaluation harness, registered on the caller's `eval`
 * command by {@link registerEvalSmsr}).
 */
import { type Command, Option } from 'commander';
import { providerFromEnv } from '../adapters/llm/index.js';
import { MemwardenError } from '../core/errors.js';
import { certificate, planPoolSize } from '../core/smsr/index.js';
import { runSmsrEval, writeSmsrReport } from '../eval/smsr/index.js';

function int(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v))
      throw new MemwardenError('INPUT_INVALID', `--${name} must be a non-negative integer`);
    return Number(v);
  };
}
function num(name: string) {
  return (v: string): number => {
    const x = Number(v);
    if (v.trim() === '' || !Number.isFinite(x))
      throw new MemwardenError('INPUT_INVALID', `--${name} must be a number`);
    return x;
  };
}

const oddNote = (runs: number): string | undefined =>
  runs % 2 === 0
    ? `n_runs = ${runs} is even: Theorem 2 counts a ${runs / 2}–${runs / 2} tie against the defender, so δ(${runs}) ≥ δ(${runs - 1}); use an odd n_runs`
    : undefined;

const write = (s: string): void => {
  process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
};

/** Add `smsr certificate` and `smsr plan` to `program`. */
export function registerSmsr(program: Command): Command {
  const smsr = program
    .command('smsr')
    .description('SMSR certificate (Theorem 2) and parameter selection');
  smsr
    .command('certificate')
    .description('δ(t, m, k, n_runs): bound on P[majority verdict is malicious]')
    .requiredOption('--t <n>', 'adversarial entries in the candidate pool', int('t'))
    .requiredOption('--m <n>', 'candidate pool size', int('m'))
    .addOption(new Option('--k <n>', 'entries per ablation run').default(5).argParser(int('k')))
    .addOption(
      new Option('--runs <n>', 'ablation runs (odd recommended)').default(5).argParser(int('runs')),
    )
    .option('--json', 'print JSON')
    .action((o: { t: number; m: number; k: number; runs: number; json?: boolean }) => {
      const c = certificate(o.t, o.m, o.k, o.runs);
      const note = oddNote(o.runs);
      if (o.json === true) {
        write(
          JSON.stringify({
            delta: c.delta,
            pClean: c.pClean,
            t: c.t,
            m: c.m,
            k: c.k,
            runs: c.runs,
            threshold: c.threshold,
            exact: { num: c.exact.num.toString(), den: c.exact.den.toString() },
            ...(note === undefined ? {} : { note }),
          }),
        );
        return;
      }
      write(
        `δ(t=${c.t}, m=${c.m}, k=${c.k}, n_runs=${c.runs}) = ${c.delta.toFixed(3)}  (${c.delta}; p_clean = ${c.pClean.toFixed(4)})`,
      );
      if (note !== undefined) process.stderr.write(`note: ${note}\n`);
    });
  smsr
    .command('plan')
    .description('the smallest candidate pool m with δ(t, m, k, n_runs) ≤ target')
    .requiredOption('--t <n>', 'assumed adversary budget', int('t'))
    .requiredOption('--delta <x>', 'target δ in (0, 1]', num('delta'))
    .addOption(new Option('--k <n>', 'entries per ablation run').default(5).argParser(int('k')))
    .addOption(
      new Option('--runs <n>', 'ablation runs (odd recommended)').default(5).argParser(int('runs')),
    )
    .option('--json', 'print JSON')
    .action((o: { t: number; delta: number; k: number; runs: number; json?: boolean }) => {
      const p = planPoolSize(o.t, o.delta, o.k, o.runs);
      const note = oddNote(o.runs);
      if (o.json === true) {
        write(
          JSON.stringify({
            m: p.m,
            delta: p.certificate.delta,
            target: o.delta,
            t: o.t,
            k: o.k,
            runs: o.runs,
            deltaAtMMinus1: p.deltaAtMMinus1 ?? null,
            ...(note === undefined ? {} : { note }),
          }),
        );
        return;
      }
      write(
        `m = ${p.m}  (δ = ${p.certificate.delta.toFixed(4)} ≤ ${o.delta} at t=${o.t}, k=${o.k}, n_runs=${o.runs}${p.deltaAtMMinus1 === undefined ? '' : `; m−1 gives ${p.deltaAtMMinus1.toFixed(4)}`})`,
      );
      if (note !== undefined) process.stderr.write(`note: ${note}\n`);
    });
  return smsr;
}

/** CLI options of `eval smsr`. */
interface EvalSmsrCliOptions {
  out: string;
  reps: number;
  certReps: number;
  seed: string;
  scenarios?: number;
  agentModel?: string;
  judgeModel?: string;
  baseUrl?: string;
  json?: boolean;
}

/**
 * Add `smsr` to an `eval` command: `memwarden eval smsr [--out DIR] [--reps N] [--cert-reps N]`.
 * `--agent-model` / `--judge-model` swap the scripted worst-case agent / reference judge for
 * real models (`providerFromEnv`: OPENAI_API_KEY / ANTHROPIC_API_KEY, MEMWARDEN_LLM_BASE_URL).
 */
export function registerEvalSmsr(evalCommand: Command): Command {
  return evalCommand
    .command('smsr')
    .description(
      'SMSR evaluation: attack classes × modes, and the certificate checked by measurement',
    )
    .addOption(new Option('--out <dir>', 'output folder').default('eval-out/smsr'))
    .addOption(
      new Option('--reps <n>', 'repetitions per scenario (attack table)')
        .default(10)
        .argParser(int('reps')),
    )
    .addOption(
      new Option('--cert-reps <n>', 'repetitions per scenario per certificate cell')
        .default(400)
        .argParser(int('cert-reps')),
    )
    .addOption(new Option('--seed <s>', 'seed').default('memwarden-smsr-eval'))
    .addOption(
      new Option('--scenarios <n>', 'use only the first N scenarios').argParser(int('scenarios')),
    )
    .option('--agent-model <id>', 'real agent model (e.g. gpt-4o-mini, anthropic:claude-…)')
    .option('--judge-model <id>', 'real judge model (JSON verdicts)')
    .option('--base-url <url>', 'OpenAI-compatible API root for the real models')
    .option('--json', 'print the summary JSON')
    .action(async (o: EvalSmsrCliOptions) => {
      const provider = (model: string) =>
        providerFromEnv({ model, ...(o.baseUrl === undefined ? {} : { baseUrl: o.baseUrl }) });
      const agent = o.agentModel === undefined ? undefined : provider(o.agentModel);
      const judge = o.judgeModel === undefined ? undefined : provider(o.judgeModel);
      const summary = await runSmsrEval({
        seed: o.seed,
        reps: o.reps,
        certReps: o.certReps,
        ...(o.scenarios === undefined ? {} : { scenarios: o.scenarios }),
        ...(agent === undefined ? {} : { agent: () => agent, agentName: o.agentModel }),
        ...(judge === undefined ? {} : { judge: () => judge, judgeName: o.judgeModel }),
      });
      const paths = writeSmsrReport(o.out, summary);
      if (o.json === true) {
        write(JSON.stringify({ ...summary, files: paths }));
      } else {
        for (const c of summary.certificate) {
          const verdict = c.holds
            ? 'holds'
            : c.holdsFamilywise
              ? 'holds family-wise (per-cell 95 % CI above δ: chance at a tight bound)'
              : 'VIOLATED';
          write(
            `t=${c.t} m=${c.m}: δ=${c.delta.toFixed(3)} ASR=${c.asr.rate.toFixed(3)} [${c.asr.lower.toFixed(3)}, ${c.asr.upper.toFixed(3)}] n=${c.asr.trials} ${verdict}`,
          );
        }
        write(`wrote ${paths.csv}, ${paths.summary}, ${paths.html}`);
      }
      if (summary.certificate.some((c) => !c.holdsFamilywise)) process.exitCode = 1;
    });
}
