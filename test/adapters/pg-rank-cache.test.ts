/**
 * Vector ranking without pgvector on the PostgreSQL server backend (`adapters/sql/row-vectors`):
 * with the row-vector cache a search reads only the candidates' ids and row versions and
 * fetches the embeddings of row versions it has not seen — and ranks exactly as a search that
 * fetches every embedding. Needs MEMWARDEN_TEST_DATABASE_URL; skipped where pgvector is
 * installed (the SQL ranks there and the cache is not used).
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgBackend } from '../../src/adapters/pg/index.js';
import { meta, NOW } from '../../src/testing/conformance/memory-api.js';
import type { SearchHit } from '../../src/ports/storage.js';

const url = process.env.MEMWARDEN_TEST_DATABASE_URL;
const run = `mwrc_${process.pid}_${Date.now().toString(36)}`;

/** A deterministic 384-d vector from a seed (not axis-aligned: scores differ in many digits). */
function vecOf(seed: number): Float32Array {
  let x = seed * 2654435761;
  return Float32Array.from({ length: 384 }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return Math.fround(x / 2 ** 30 - 1);
  });
}
const view = (hits: SearchHit[]) => hits.map((h) => [h.entry.id, h.vectorScore]);

describe.skipIf(url === undefined)(
  'PostgreSQL: in-process ranking with the row-vector cache',
  () => {
    let cached: PgBackend;
    let uncached: PgBackend;
    let admin: pg.Client;
    beforeAll(async () => {
      cached = await PgBackend.open({ connectionString: url!, schema: run });
      uncached = await PgBackend.open({ connectionString: url!, schema: run, rankCacheEntries: 0 });
      admin = new pg.Client({ connectionString: url });
      await admin.connect();
    }, 120_000);
    afterAll(async () => {
      await cached?.close();
      await uncached?.close();
      await admin?.query(`DROP SCHEMA IF EXISTS ${run} CASCADE`);
      await admin?.end();
    });

    it(
      'ranks exactly as fetching every embedding, across changes to the rows',
      { timeout: 120_000 },
      async () => {
        if (cached.hasVector) return; // pgvector ranks in SQL: nothing cached to test
        for (let i = 0; i < 60; i++)
          await cached.putEntry(meta(`e${i}`, i, { embedding: vecOf(i) }));
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 0, max: 1000 }),
            fc.integer({ min: 1, max: 25 }),
            fc.option(fc.integer({ min: 0, max: 59 }), { nil: undefined }),
            async (q, limit, touch) => {
              if (touch !== undefined) {
                // A row version changes (a new xmin) between searches: deleted or superseded.
                if (touch % 2 === 0) await cached.markDeleted(`e${touch}`).catch(() => undefined);
                else await cached.markSuperseded(`e${touch}`, `s${touch}`).catch(() => undefined);
              }
              const query = { embedding: vecOf(10_000 + q), nowNs: NOW, limit };
              expect(view(await cached.searchEntries(query))).toEqual(
                view(await uncached.searchEntries(query)),
              );
            },
          ),
          { numRuns: 40 },
        );
      },
    );

    it(
      'never ranks a refilled row with the vector of the row it replaced',
      { timeout: 120_000 },
      async () => {
        if (cached.hasVector) return;
        const query = { embedding: vecOf(7), nowNs: NOW, limit: 3 };
        await admin.query(`TRUNCATE ${run}.entries`);
        await cached.putEntry(meta('x', 1000, { embedding: vecOf(7) }));
        await cached.putEntry(meta('y', 1001, { embedding: vecOf(8) }));
        expect((await cached.searchEntries(query))[0]!.entry.id).toBe('x'); // cached now
        // The same ids written again with the vectors swapped (a store truncated and refilled; an
        // edit at rest): an id-keyed cache would still rank x first with its old vector.
        await admin.query(`TRUNCATE ${run}.entries`);
        await cached.putEntry(meta('x', 1000, { embedding: vecOf(8) }));
        await cached.putEntry(meta('y', 1001, { embedding: vecOf(7) }));
        const hits = await cached.searchEntries(query);
        expect(hits[0]!.entry.id).toBe('y');
        expect(view(hits)).toEqual(view(await uncached.searchEntries(query)));
        // An update in place (at rest, by the owner) is a new row version too.
        await admin.query(`UPDATE ${run}.entries SET embedding = $1 WHERE id = 'x'`, [
          [...vecOf(7)],
        ]);
        expect(view(await cached.searchEntries(query))).toEqual(
          view(await uncached.searchEntries(query)),
        );
      },
    );
  },
);
