/**
 * The table of hostile inputs and faults the suites try (issue 17: "a table … produced by the
 * suites themselves"). A suite calls `recordHostile` once per case it tried, saying whether the
 * defence held; rows go to `test-results/hostile/<suite>.jsonl` (one file per test file and
 * process, rewritten each run), and `node scripts/hostile-table.mjs` renders them into
 * `docs/hostile-inputs.md`. A row never replaces an assertion: the test still fails on its own
 * when a defence does not hold; the row says what was tried and that it was checked.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

export interface HostileRow {
  /** The suite (test file or fault suite) that tried it, e.g. `channel-matrix`. */
  readonly suite: string;
  /** The family of input or fault, e.g. `role tokens`, `key rotation under load`. */
  readonly family: string;
  /** The case, short: what exactly was sent or done. */
  readonly case: string;
  /** The channel or backend it went through (`http`, `mcp`, `cli`, `pglite`, `postgres`, …). */
  readonly channel?: string;
  /** Did the defence hold (the expected outcome was observed)? */
  readonly held: boolean;
  /** The observed outcome (a code, a status, `stored`, `held for review`, …). */
  readonly outcome?: string;
}

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rows = new Map<string, HostileRow[]>();
let hooked = false;

/** Record one tried case (see the module comment). */
export function recordHostile(row: HostileRow): void {
  let list = rows.get(row.suite);
  if (list === undefined) {
    list = [];
    rows.set(row.suite, list);
  }
  list.push(row);
  if (!hooked) {
    hooked = true;
    afterAll(flushHostile);
  }
}

/** Write the rows recorded so far (called after the file's tests; callable directly too). */
export function flushHostile(): void {
  const dir = process.env['MEMWARDEN_HOSTILE_OUT'] ?? path.join(repo, 'test-results', 'hostile');
  mkdirSync(dir, { recursive: true });
  for (const [suite, list] of rows) {
    const file = path.join(dir, `${suite.replace(/[^a-z0-9_-]+/gi, '_')}.${process.pid}.jsonl`);
    writeFileSync(file, list.map((r) => JSON.stringify(r)).join('\n') + '\n');
  }
}
