/**
 * @module test/adapters/helpers-pglite
 * Shared by the PGlite adapter tests that reuse one database across cases.
 */
import type { PgliteDb } from '../../src/adapters/pglite/db.js';
import { DATA_TABLES } from '../../src/adapters/sql/schema.js';

/** Empty every data table as the superuser (TRUNCATE is not subject to RLS). */
export async function resetPglite(db: PgliteDb): Promise<void> {
  await db.exec(
    `TRUNCATE ${DATA_TABLES.join(', ')} RESTART IDENTITY; UPDATE log_head SET size = 0;`,
  );
}
