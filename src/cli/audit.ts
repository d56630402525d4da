/**
 * @module cli/audit
 * `memwarden audit`: verify a whole store offline (`memory/store-audit`) and print a report —
 * per-check counts, then one line per coded finding — or the report as JSON (`--json`).
 * Exit 0 when clean, 1 with findings, 2 when the store cannot be opened at all.
 *
 * Offline: an embedded data folder is opened under its LOCK, so auditing a folder a running
 * `memwarden serve` holds is refused (STORAGE_FAILED, reason locked) rather than racing it.
 * Nothing is created: a data folder without a store is STORAGE_NOT_FOUND.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type Command, Option } from 'commander';
import { DeterministicEmbedder, LocalMiniLmEmbedder } from '../adapters/embeddings/index.js';
import { MemwardenError, isMemwardenError } from '../core/errors.js';
import { AUDIT_CHECKS, type StoreAuditReport } from '../memory/log/store-audit.js';
import { type StoreOptions, defaultDataDir, withMemory } from './context.js';
import { printJson } from './format.js';

/** The report as text: a table of checks, then the findings. */
export function formatAuditReport(r: StoreAuditReport): string {
  const lines = [`memwarden audit: ${r.ok ? 'OK' : 'FAILED'} (log size ${r.logSize})`];
  const w = Math.max(...AUDIT_CHECKS.map((c) => c.length));
  lines.push(`${'check'.padEnd(w)}  ${'checked'.padStart(8)}  ${'failed'.padStart(6)}`);
  for (const c of AUDIT_CHECKS) {
    const { checked, failed } = r.checks[c];
    lines.push(`${c.padEnd(w)}  ${String(checked).padStart(8)}  ${String(failed).padStart(6)}`);
  }
  if (r.findings.length > 0) lines.push('', 'findings:');
  for (const f of r.findings) lines.push(`${f.code} ${f.check} ${f.subject}: ${f.message}`);
  return lines.join('\n') + '\n';
}

export function registerAudit(program: Command): void {
  program
    .command('audit')
    .description(
      'verify the whole store offline: log, checkpoints, entries, tombstones, registry (exit 1 on findings)',
    )
    .addOption(new Option('--data <dir>', 'data folder').default(defaultDataDir()))
    .addOption(
      new Option('--postgres <url>', 'audit a PostgreSQL server store').env(
        'MEMWARDEN_DATABASE_URL',
      ),
    )
    .option('--json', 'print the report as JSON')
    .option('--embeddings', "also recompute every entry's embedding and compare (slow)")
    .action(async (o: StoreOptions & { json?: boolean; embeddings?: boolean }) => {
      const server = o.postgres !== undefined && o.postgres !== '';
      if (!server && !existsSync(path.join(o.data, 'pgdata'))) {
        throw new MemwardenError('STORAGE_NOT_FOUND', `no store in ${o.data}`);
      }
      let report: StoreAuditReport;
      try {
        // The same embedder choice as Memory.open (MEMWARDEN_EMBEDDER=deterministic in tests).
        const embedder =
          o.embeddings !== true
            ? undefined
            : process.env.MEMWARDEN_EMBEDDER === 'deterministic'
              ? new DeterministicEmbedder()
              : new LocalMiniLmEmbedder();
        report = await withMemory(o, (m) =>
          m.auditStore(embedder === undefined ? {} : { embedder }),
        );
      } catch (e) {
        // A log whose head names nodes that are not stored cannot even be opened: that is a
        // finding about the store, not a failure of the tool.
        if (!isMemwardenError(e, 'LOG_CORRUPT')) throw e;
        report = openFailure(e);
      }
      if (o.json === true) printJson(report);
      else process.stdout.write(formatAuditReport(report));
      if (!report.ok) process.exitCode = 1;
    });
}

function openFailure(e: MemwardenError): StoreAuditReport {
  const checks = Object.fromEntries(
    AUDIT_CHECKS.map((c) => [c, { checked: 0, failed: 0 }]),
  ) as StoreAuditReport['checks'];
  checks['log.head'] = { checked: 1, failed: 1 };
  return {
    ok: false,
    logSize: -1,
    checks,
    findings: [
      {
        check: 'log.head',
        code: e.code,
        subject: 'log',
        message: `the log cannot be opened: ${e.message}`,
      },
    ],
  };
}
