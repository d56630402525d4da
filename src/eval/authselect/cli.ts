/**
 * @module eval/authselect/cli
 * `memwarden eval authselect [--json] [--out DIR] [--seed N] [--attack-seeds N] [-k N]`.
 * `--json` prints exactly one JSON object (the summary: per defence `harm`, `overblock`,
 * `ifcBlindRows`, …) on stdout; progress goes to stderr. Files go to `--out`
 * (default `eval-out/authselect`).
 */
import type { Command } from 'commander';
import { writeAuthSelectReport } from './report.js';
import { runAuthSelectEval } from './run.js';

/** Add the `authselect` subcommand to the `eval` command (the lead wires `eval`). */
export function registerEvalAuthselect(evalCommand: Command): Command {
  return evalCommand
    .command('authselect')
    .description(
      'AuthSelect evaluation: structural-write attacks vs defences on graph memory (issue 8)',
    )
    .option('--json', 'print the summary as one JSON object on stdout', false)
    .option(
      '--out <dir>',
      'directory for rows.csv, criterion.csv, summary.json, report.html',
      'eval-out/authselect',
    )
    .option('--no-files', 'do not write the report files')
    .option('--seed <n>', 'corpus seed', '1')
    .option('--attack-seeds <n>', 'attack seeds per cell', '3')
    .option('-k <n>', 'top-k', '5')
    .action(
      async (o: {
        json: boolean;
        out: string;
        files: boolean;
        seed: string;
        attackSeeds: string;
        k: string;
      }) => {
        const res = await runAuthSelectEval({
          seed: Number(o.seed),
          attackSeeds: Number(o.attackSeeds),
          k: Number(o.k),
          log: (m) => process.stderr.write(`authselect: ${m}\n`),
        });
        const files = o.files ? await writeAuthSelectReport(res, o.out) : [];
        if (o.json) process.stdout.write(`${JSON.stringify(res.summary)}\n`);
        else {
          const s = res.summary;
          process.stdout.write(
            `AuthSelect eval — ${s.corpus.cleanCorrect} clean-correct questions, ${s.runtimeMs} ms\n`,
          );
          for (const [d, v] of Object.entries(s.defences))
            process.stdout.write(
              `  ${d.padEnd(22)} harm ${v.harm.toFixed(4)}  overblock ${v.overblock.toFixed(4)}  ifcBlindRows ${v.ifcBlindRows}\n`,
            );
          process.stdout.write(
            `  ledger: misdirected none=${s.ledger.misdirected.none} justIFC=${s.ledger.misdirected.justification_ifc} authselect=${s.ledger.misdirected.authselect}\n`,
          );
          for (const [a, x] of Object.entries(s.byAttacker))
            process.stdout.write(
              `  attacker ${a} (${x.tier}, ${x.lineage}): labels ${JSON.stringify(x.labels)}, held ${x.held}; harm none ${x.defences.none.harm} authselect ${x.defences.authselect.harm}, overblock authselect ${x.defences.authselect.overblock}\n`,
            );
          for (const r of s.reliance.rows)
            process.stdout.write(
              `  reliance ρ ${r.selector} (swap ${r.swap}): ours ${r.rho}  paper ${r.paperRho}\n`,
            );
          for (const [arm, p] of Object.entries(s.paper.tableIII))
            process.stdout.write(
              `  ${arm.padEnd(14)} harm none ours ${s.arms[arm]?.defences.none.harm ?? '-'} paper ${p.none}; AuthSelect ours ${s.arms[arm]?.defences.authselect.harm ?? '-'} paper ${p.authselect}\n`,
            );
          process.stdout.write(`  paper Table IV: ${s.paper.tableIV}\n  ${s.producedBy}\n`);
          for (const f of files) process.stdout.write(`  wrote ${f}\n`);
        }
      },
    );
}
