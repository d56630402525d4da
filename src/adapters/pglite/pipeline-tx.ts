/**
 * @module adapters/pglite/pipeline-tx
 * A whole transaction as ONE pipeline of binary statements (ADR 0028): PGlite's `transaction`
 * begins, the pipeline runs in one raw protocol exchange under the query lock, and the
 * transaction commits only if `pipelineVerdict` (`./pipeline-verdict.mjs`) finds every
 * statement completed with the rows expected of it — otherwise it rolls back and the caller
 * reads from the raw response (or the database) why. The group commit's statements are all
 * known before it starts (entries, leaves, nodes, the guarded head move, the quota upsert), so
 * the commit needs no round trip between them; with PGlite in a worker thread the whole commit
 * is one message instead of one per statement, and the main thread never waits between them.
 */
import { rawExchange } from './binary-rows.js';
import type { PgliteDb, PipelineOutcome, RowExpectation } from './db.js';
import { pipelineVerdict } from './pipeline-verdict.mjs';

/**
 * Run `message` (a pipeline of `statements` statements and one Sync, `./binary-params.ts`
 * `pipelineMessage`) as one transaction; committed iff the verdict holds. Durability is
 * PGlite's COMMIT, as for every other transaction. Rejects only if PGlite itself fails (BEGIN,
 * COMMIT, ROLLBACK, a dead worker); a failed statement is a rolled-back outcome.
 */
export function pipelineTransaction(
  db: PgliteDb,
  message: Uint8Array,
  statements: number,
  expect: readonly RowExpectation[],
): Promise<PipelineOutcome> {
  if (db.pipelineTransaction !== undefined)
    return db.pipelineTransaction(message, statements, expect);
  return db.transaction(async (tx) => {
    const raw = await rawExchange(db, message);
    const committed = pipelineVerdict(raw, statements, expect);
    if (!committed) await tx.rollback();
    return { raw, committed };
  });
}
