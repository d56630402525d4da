/**
 * @module adapters/sql/row-vectors
 * Embeddings of stored entry ROW VERSIONS, for vector ranking without pgvector (`./search.js`).
 * Without pgvector every search ranks its candidates in-process, and fetching every
 * candidate's `real[]` per query made a 10,000-entry search cost seconds on the server
 * backend (the embeddings are most of the bytes). An entry's embedding is written once, so a
 * search now reads only the candidates' ids and row versions and fetches the vectors it has
 * not seen.
 *
 * A vector is kept with the entry id AND the row version's `xmin` (the transaction that wrote
 * it): any change to a row — a flag set by supersede or delete, an edit at rest, a store
 * truncated and refilled under the same ids — is a new row version, so a cached vector is
 * never used for another version than the one it was read from, and ranking sees exactly what
 * a fetch would. Which rows are candidates is still decided by the database in the caller's
 * scope (row-level security), so the cache never widens what a principal can rank. Bounded:
 * oldest first out.
 */

import { norm2 } from './rank.js';

/** A cached row vector and its squared norm (`./rank.js` `norm2`). */
export interface RowVector {
  readonly version: string;
  readonly vec: Float32Array;
  readonly norm2: number;
}

/** A bounded map from entry id to the vector of one row version of it. */
export class RowVectorCache {
  private readonly m = new Map<string, RowVector>();

  /** `maxEntries`: how many row vectors stay (≈ 1.6 KB each at 384 dimensions). */
  constructor(readonly maxEntries: number) {}

  /** The vector of `id` at row version `version`, if this cache holds that very version. */
  get(id: string, version: string): RowVector | undefined {
    const r = this.m.get(id);
    return r !== undefined && r.version === version ? r : undefined;
  }

  /** Keep `vec` as `id`'s vector at `version` (replacing another version's); returns it. */
  set(id: string, version: string, vec: Float32Array): RowVector {
    const r = { version, vec, norm2: norm2(vec) };
    if (this.maxEntries <= 0) return r;
    if (!this.m.delete(id) && this.m.size >= this.maxEntries) {
      const oldest = this.m.keys().next().value;
      if (oldest !== undefined) this.m.delete(oldest);
    }
    this.m.set(id, r);
    return r;
  }

  get size(): number {
    return this.m.size;
  }
}
