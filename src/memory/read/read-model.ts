/**
 * @module memory/read/read-model
 * The verified in-process read model (ADR 0018): per-principal partitions of a principal's
 * live entries plus one shared partition of the global OPERATOR entries, each with a vector
 * index, serving vector-ranked search and the write path's near-duplicate check without a
 * database round trip.
 *
 * - Loaded on first use through the principal's RLS-scoped view (`storage.asPrincipal(p)`), in
 *   pages in log order (`scanEntries`: live embedded rows, embeddings read in binary form;
 *   `listEntries` where a backend lacks it): the database still decides what a principal can
 *   see, and a partition
 *   holds only rows the principal owns (OPERATOR rows go to the shared partition, whose first
 *   load rides along with the first principal load: every principal sees every OPERATOR row).
 * - Kept current by `observed-storage.ts`: every committed entry change through this process
 *   is applied after commit (never a rolled-back one). Changes arriving while a partition
 *   loads are queued and replayed after the load; every change is idempotent and monotone
 *   (an entry is inserted once, `deleted` and `superseded` only become set, an expiry only
 *   moves forward), so a replay over rows the load already saw changes nothing.
 * - Only for exclusive backends (this process is the only writer: the embedded store behind
 *   its data-folder lock, the in-memory backend): `withReadModel` refuses any other.
 * - Bounded: at most `maxEntries` entries in all partitions; whole principal partitions are
 *   evicted least recently used first, and a principal whose partition alone does not fit is
 *   served by the database path (retried after a while).
 * - The entries held are the exact rows read from (or written to) the database, bytes, MAC and
 *   all; the search path verifies them (`Ledger.verifyMany`) before returning anything, as it
 *   does rows fresh from the database.
 */
import { descending } from '../../core/compare.js';
import { MemwardenError } from '../../core/errors.js';
import { type SourceTier, SourceTiers } from '../../core/trust.js';
import type { RootStorage, SearchHit, StorageBackend, StoredEntry } from '../../ports/storage.js';
import { type VectorIndex, createVectorIndex } from '../../core/vector/index.js';
import { type EntryChange, LocalCommits, observeStorage } from './observed-storage.js';
import { LogFollower } from './follower.js';
import { type EntryFilter, matchFilter } from '../../core/filter/index.js';
import {
  LexicalIndex,
  combinedStats,
  queryTerms,
  relationKeys,
  words,
} from '../../core/text/index.js';
import { cosineWithNorms, cosinesWithNorms, sumSquares } from '../../core/smsr/near-duplicate.js';

export interface ReadModelOptions {
  /** Most entries held in all partitions together (default 200,000). */
  readonly maxEntries?: number;
  /** Rows per page when loading a partition (default 1,000). */
  readonly pageSize?: number;
}

/**
 * A query against the model: the database's `searchEntries` semantics — vector (`embedding`),
 * lexical BM25 (`text`), or both: the union of the two top-`limit` lists, every hit carrying
 * both scores (ADR 0050).
 */
export interface ModelQuery {
  readonly embedding?: Float32Array;
  /** Rank lexically (BM25, `core/text`) by these words. */
  readonly text?: string;
  readonly tiers?: readonly SourceTier[];
  readonly kinds?: readonly string[];
  readonly uri?: string;
  /** Only rows this filter admits (`core/filter`), as the database applies it. */
  readonly filter?: EntryFilter;
  readonly nowNs: bigint;
  readonly limit: number;
  /**
   * Only the hits of the `limit` nearest whose vector score is ≥ this (the same hits, filtered:
   * the index skips scoring rows its byte bound puts below it — the near-duplicate check).
   */
  readonly minScore?: number;
}

const DEFAULT_MAX_ENTRIES = 200_000;
const DEFAULT_PAGE = 1_000;
/** A principal over the bound is retried after this long (its partition may have shrunk). */
const OVER_BOUND_RETRY_NS = 60_000_000_000n;
const SHARED = Symbol('operator');
type PartKey = string | typeof SHARED;

/** Longest stretch of idle index maintenance per event-loop turn (ns). */
const MAINTAIN_TICK_NS = 4_000_000n;

/**
 * A held entry with the fields a query filters on copied into one fixed shape: the filter runs
 * for every row that would enter the top k, and the rows themselves come in several object
 * shapes (loaded pages, written rows, renewed copies), which made its property reads
 * megamorphic.
 */
export class Held {
  readonly tier: SourceTier;
  readonly kind: string | undefined;
  readonly uri: string | undefined;
  readonly expiresAtNs: bigint | undefined;
  /**
   * The tier as one bit of {@link TIER_BIT} (0: a tier outside `SourceTiers`, checked by name),
   * and the expiry rounded to a double (NaN: never expires). The filter reads these for every
   * candidate instead of comparing the tier string and the BigInt expiry: on rows decoded from
   * the database neither is an interned literal / small value, and those two comparisons cost
   * more than the rest of the filter (ADR 0086).
   */
  readonly tierBit: number;
  readonly expiresAt: number;
  /** `sumSquares(entry.embedding)`, computed on first use (NaN until then). */
  #sq = Number.NaN;
  constructor(readonly entry: StoredEntry) {
    this.tier = entry.tier;
    this.kind = entry.kind;
    this.uri = entry.uri;
    this.expiresAtNs = entry.expiresAtNs;
    this.tierBit = TIER_BIT.get(entry.tier) ?? 0;
    this.expiresAt = entry.expiresAtNs === undefined ? Number.NaN : Number(entry.expiresAtNs);
  }

  /**
   * `cosine(q, entry.embedding)` (which must exist) given `qSq = sumSquares(q)`: the same float64,
   * with the entry's sum of squares computed once while it is held.
   */
  cosine(q: Float32Array, qSq: number): number {
    return cosineWithNorms(q, qSq, this.entry.embedding as Float32Array, this.sumSquares());
  }

  /** `sumSquares(entry.embedding)` (which must exist), computed once while the entry is held. */
  sumSquares(): number {
    let sq = this.#sq;
    if (sq !== sq) sq = this.#sq = sumSquares(this.entry.embedding as Float32Array);
    return sq;
  }

  /**
   * `rows[i].cosine(q, qSq)` for every i, bit for bit, computed four rows at a time
   * (`cosinesWithNorms`).
   */
  static cosines(q: Float32Array, qSq: number, rows: readonly Held[]): Float64Array {
    const out = new Float64Array(rows.length);
    cosinesWithNorms(
      q,
      qSq,
      rows.map((h) => h.entry.embedding as Float32Array),
      rows.map((h) => h.sumSquares()),
      out,
    );
    return out;
  }
}

/** One bit per source tier, for the filter's tier test. */
const TIER_BIT: ReadonlyMap<string, number> = new Map(SourceTiers.map((t, i) => [t, 1 << i]));

/**
 * The filter's tier and expiry tests on a held entry, with the results of
 * `tiers.includes(h.tier)` and `h.expiresAtNs === undefined || h.expiresAtNs > nowNs` exactly:
 * `Number(bigint)` rounds monotonically, so a strict order of the rounded values is the order
 * of the exact ones, and only equal rounded values need the BigInt comparison.
 */
export function heldAdmits(
  h: Held,
  tiers: readonly string[] | undefined,
  tierMask: number,
  nowNs: bigint,
  now: number,
): boolean {
  if (
    tiers !== undefined &&
    (h.tierBit === 0 ? !tiers.includes(h.tier) : (h.tierBit & tierMask) === 0)
  )
    return false;
  const at = h.expiresAt;
  return at !== at || at > now || (at === now && (h.expiresAtNs as bigint) > nowNs);
}

/** The bits of `tiers` in {@link TIER_BIT}. */
function tierMaskOf(tiers: readonly string[] | undefined): number {
  let m = 0;
  for (const t of tiers ?? []) m |= TIER_BIT.get(t) ?? 0;
  return m;
}

/**
 * What a relation-key index needs of a held row: the content and namespace of the record its
 * bytes decode to (not verified — a row that would not verify only adds keys), or undefined
 * when they do not decode.
 */
export type RecordOf = (
  row: StoredEntry,
) => { readonly ns: string; readonly content: string } | undefined;

/** A relation-key probe's query (see {@link ReadModel.mayRelate}). */
export interface RelateQuery {
  readonly nowNs: bigint;
  readonly dimensions: number;
  readonly recordOf: RecordOf;
  /**
   * The relation keys of the probing text (`relationKeysAndProbes`), remembered for a while:
   * the row a write commits next holds that text, and is indexed without splitting it again
   * (keys are a function of the text alone).
   */
  readonly text?: { readonly content: string; readonly keys: readonly number[] };
}

/** Rows a probe indexes before answering (each: a decode unless cached, and its keys). */
const REL_CATCH_UP = 64;
/** Probed texts whose relation keys are remembered (cleared when full). */
const REL_MEMO = 256;

/**
 * A partition's relation keys (ADR 0084): for each held row, the keys `relationKeys` gives the
 * words of its signed content (`core/text/relate`), counted, so a write can learn that none of
 * the principal's rows can be the same as or related to its text without searching them. Built
 * at the partition's first probe, kept with the partition's rows (a row held is a row pending
 * or indexed; a row removed takes its keys with it), never consulted while rows are pending.
 * The shared partition holds the OPERATOR rows of every owner: its keys are mixed with the
 * owner's.
 */
class RelIndex {
  readonly counts = new Map<number, number>();
  /** Held rows (by key) not indexed yet. */
  readonly pending = new Set<number>();
  /** The keys counted for each indexed row. */
  readonly keysOf = new Map<number, readonly number[]>();
  /** An idle catch-up is scheduled. */
  catchingUp = false;
  constructor(public recordOf: RecordOf) {}
}

/** A 32-bit hash of an owner id (mixed into the shared partition's relation keys). */
function ownerHash(owner: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < owner.length; i++) h = Math.imul(h ^ owner.charCodeAt(i), 0x01000193);
  return h;
}
const withOwner = (k: number, oh: number): number => Math.imul(k ^ oh, 0x9e3779b1) ^ (oh >>> 7);

class Partition {
  /** Relation keys of the held rows (ADR 0084); undefined until the first probe. */
  rel: RelIndex | undefined;
  readonly byKey = new Map<number, Held>();
  readonly keyOf = new Map<string, number>();
  index: VectorIndex | undefined;
  /** BM25 over the held entries' content (same keys as the vector index). */
  readonly lex = new LexicalIndex();
  /** Changes seen while loading, replayed once the load is done. */
  pending: EntryChange[] | undefined = [];
  ready: Promise<void> | undefined;
  /** Entries this partition cannot rank like the database would (wrong dimensions). */
  unservable = false;
  /**
   * Rows read by the load, added to the index in one `addMany` when it finishes: the index then
   * trains once for the partition's size instead of at every doubling on the way (100k entries:
   * ~11 s of inserts and retrains one by one).
   */
  bulk: { keys: number[]; vectors: Float32Array[] } | undefined = { keys: [], vectors: [] };
  /** Dropped by a reset while it loaded: its load stops and nothing more enters it. */
  dead = false;
  constructor(readonly key: PartKey) {}
  get size(): number {
    return this.byKey.size;
  }
  get loading(): boolean {
    return this.pending !== undefined;
  }
}

export class ReadModel {
  readonly maxEntries: number;
  private readonly pageSize: number;
  private readonly parts = new Map<string, Partition>();
  private shared: Partition | undefined;
  /** Principals whose partition did not fit, and when that was found (ns, the query clock). */
  private readonly overBound = new Map<PartKey, bigint>();
  private nextKey = 0;
  private total = 0;
  /** The latest query's clock (timestamps an over-bound partition found while applying changes). */
  private lastNowNs = 0n;
  /** Where each held entry lives. */
  private readonly home = new Map<string, Partition>();
  /**
   * Whether the model may answer now. Always on an exclusive store; a model following a shared
   * store's feed (`follower.ts`) answers only while the feed is listening and caught up —
   * otherwise the database answers, never a model that may have missed a commit.
   */
  private serving = true;
  /**
   * State changes other processes made recently (deleted / superseded, or an expiry), by id: a
   * row of theirs read before such a change but applied after it takes the change with it.
   */
  private readonly late = new Map<string, { dead: boolean; expiresAtNs: bigint | undefined }>();
  /** Relation keys of recently probed texts (see {@link mayRelate}'s `text`). */
  private readonly relMemo = new Map<string, readonly number[]>();

  constructor(
    private readonly root: RootStorage,
    opts: ReadModelOptions = {},
  ) {
    this.maxEntries = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.pageSize = opts.pageSize ?? DEFAULT_PAGE;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1)
      throw new MemwardenError('INPUT_INVALID', 'readModel.maxEntries must be a positive integer');
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1 || this.pageSize > 10_000)
      throw new MemwardenError('INPUT_INVALID', 'readModel.pageSize must be 1 … 10000');
  }

  /** Entries held in all partitions. */
  get size(): number {
    return this.total;
  }

  /**
   * What the model holds now (for `/healthz` and the load bench): partitions, entries, how many
   * partitions are loading, and how many still rebuild their vector index in slices (searches
   * are exact, and slower, until that ends — ADR 0020).
   */
  status(): { partitions: number; entries: number; loading: number; indexing: number } {
    let loading = 0;
    let indexing = 0;
    const all = [...this.parts.values(), ...(this.shared === undefined ? [] : [this.shared])];
    for (const p of all) {
      if (p.loading) loading++;
      else if (p.index !== undefined && p.index.maintain(0)) indexing++;
    }
    return { partitions: all.length, entries: this.total, loading, indexing };
  }

  /** Whether `principal`'s partition is loaded (for tests and metrics). */
  isLoaded(principal: string): boolean {
    const p = this.parts.get(principal);
    return p !== undefined && !p.loading;
  }

  // ---- queries ------------------------------------------------------------------------------

  /**
   * The `limit` nearest live entries `principal` may see (its own and OPERATOR ones) that pass
   * the filters, best first (ties in log order) — or undefined when the model cannot serve this
   * principal (over the bound, a failed load): the caller then asks the database.
   */
  async search(principal: string, q: ModelQuery): Promise<SearchHit[] | undefined> {
    if (!this.serving) return undefined;
    const parts = await this.partitionsFor(principal, q.nowNs);
    if (parts === undefined) return undefined;
    const { tiers, kinds, uri, nowNs, filter, embedding } = q;
    const tierMask = tierMaskOf(tiers);
    const now = Number(nowNs);
    const terms = q.text === undefined ? undefined : queryTerms(q.text);
    const vec: SearchHit[] = [];
    const lex: SearchHit[] = [];
    // BM25 over everything the principal sees (its partition and the shared one), the
    // statistics the database's lexical ranking uses too.
    const stats = terms === undefined ? undefined : combinedStats(parts.map((p) => p.lex));
    const hybrid = terms !== undefined && embedding !== undefined;
    // Hybrid: every hit's score is the float64 cosine (the database's), computed once per row
    // after both sides are known — a lexical hit that is also a vector hit shares its row's —
    // and four rows at a time (`Held.cosines`): by key, the row's place in `cosRows`.
    const cosAt = hybrid ? new Map<number, number>() : undefined;
    const cosRows: Held[] = [];
    const cosHits: { vectorScore?: number }[] = [];
    const cosOf: number[] = [];
    const wantCosine = (key: number, held: Held, hit: { vectorScore?: number }): void => {
      const m = cosAt as Map<number, number>;
      let i = m.get(key);
      if (i === undefined) {
        i = cosRows.length;
        cosRows.push(held);
        m.set(key, i);
      }
      cosHits.push(hit);
      cosOf.push(i);
    };
    // The query's sum of squares, once per search (each held entry keeps its own).
    const qSq = hybrid ? sumSquares(embedding) : 0;
    const wantKeys: number[] = [];
    const wantHits: { lexicalScore?: number }[] = [];
    for (const part of parts) {
      if (part.index === undefined || part.size === 0) continue;
      if (embedding !== undefined && part.index.dimensions !== embedding.length) return undefined;
      const accept = (key: number): boolean => {
        const e = part.byKey.get(key);
        return (
          e !== undefined &&
          heldAdmits(e, tiers, tierMask, nowNs, now) &&
          (kinds === undefined || (e.kind !== undefined && kinds.includes(e.kind))) &&
          (uri === undefined || e.uri === uri) &&
          (filter === undefined || matchFilter(filter, e.entry))
        );
      };
      if (embedding !== undefined) {
        for (const h of part.index.search(embedding, q.limit, accept, q.minScore)) {
          const held = part.byKey.get(h.key);
          if (held === undefined) continue;
          const e = held.entry;
          const hit: { entry: StoredEntry; vectorScore: number; lexicalScore?: number } = {
            entry: e,
            vectorScore: h.score,
          };
          // Fused with a lexical score, the cosine is the database's (float64) one (below).
          if (cosAt !== undefined && e.embedding !== undefined) wantCosine(h.key, held, hit);
          if (terms !== undefined) {
            wantKeys.push(h.key);
            wantHits.push(hit);
          }
          vec.push(hit);
        }
      }
      if (terms !== undefined) {
        // The vector hits' BM25 comes with the lexical search (the accumulators it fills hold
        // `lex.score` of every document), instead of one `score` call per hit.
        const also = { keys: wantKeys, scores: new Array<number>(wantKeys.length) };
        const lexHits = part.lex.search(terms, q.limit, accept, stats, also);
        wantHits.forEach((hit, i) => (hit.lexicalScore = also.scores[i] as number));
        wantKeys.length = 0;
        wantHits.length = 0;
        for (const h of lexHits) {
          const held = part.byKey.get(h.key);
          if (held === undefined) continue;
          const e = held.entry;
          const hit: { entry: StoredEntry; vectorScore?: number; lexicalScore: number } = {
            entry: e,
            lexicalScore: h.score,
          };
          if (cosAt !== undefined && e.embedding !== undefined) wantCosine(h.key, held, hit);
          lex.push(hit);
        }
      }
    }
    if (cosRows.length > 0) {
      const cos = Held.cosines(embedding as Float32Array, qSq, cosRows);
      for (let i = 0; i < cosHits.length; i++)
        (cosHits[i] as { vectorScore?: number }).vectorScore = cos[cosOf[i] as number] as number;
    }
    // Descending by score (`descending`: the sign of `b − a` as a small integer, not a boxed
    // double per comparison), ties in log order.
    const byVec = (a: SearchHit, b: SearchHit): number =>
      descending(a.vectorScore ?? -Infinity, b.vectorScore ?? -Infinity) ||
      descending(a.lexicalScore ?? 0, b.lexicalScore ?? 0) ||
      a.entry.leafIndex - b.entry.leafIndex;
    const byLex = (a: SearchHit, b: SearchHit): number =>
      descending(a.lexicalScore as number, b.lexicalScore as number) ||
      a.entry.leafIndex - b.entry.leafIndex;
    vec.sort(byVec);
    lex.sort(byLex);
    const topVec = vec.length > q.limit ? vec.slice(0, q.limit) : vec;
    const topLex = lex.length > q.limit ? lex.slice(0, q.limit) : lex;
    if (terms === undefined) return topVec;
    if (embedding === undefined) return topLex;
    // By the held row itself: one object per id in the model (an entry lives in one partition),
    // so the same union as by id, without hashing each hit's id string.
    const merged = new Map<StoredEntry, SearchHit>();
    for (const h of topVec) merged.set(h.entry, h);
    for (const h of topLex) if (!merged.has(h.entry)) merged.set(h.entry, h);
    return [...merged.values()].sort(byVec);
  }

  /**
   * Whether a row `principal` owns that {@link search} could return for a query of `dimensions`
   * may hold one of `probes` among its relation keys (`core/text` `relationKeys`, of the words
   * of its signed content, as `recordOf` decodes it): false means none can — so no such row is
   * the same as or related to the text the probes came from (ADR 0084). Undefined when the model
   * cannot tell now (it would not serve the search, or rows are still being indexed): ask the
   * search. Rows of every kind, scope and expiry count (a superset of any filtered search).
   */
  async mayRelate(
    principal: string,
    probes: readonly number[],
    q: RelateQuery,
  ): Promise<boolean | undefined> {
    const now = this.mayRelateNow(principal, probes, q);
    if (now !== null) return now;
    const parts = await this.partitionsFor(principal, q.nowNs);
    return parts === undefined ? undefined : this.relAnswer(parts, principal, probes, q);
  }

  /**
   * {@link mayRelate} answered without waiting when it can be (ADR 0088): the answer when both
   * partitions are loaded (or the model would not serve the search: undefined); null when a
   * partition must load first — then ask {@link mayRelate}.
   */
  mayRelateNow(
    principal: string,
    probes: readonly number[],
    q: RelateQuery,
  ): boolean | undefined | null {
    if (q.text !== undefined) {
      if (this.relMemo.size >= REL_MEMO) this.relMemo.clear();
      this.relMemo.set(q.text.content, q.text.keys);
    }
    if (!this.serving) return undefined;
    const parts = this.partitionsNow(principal, q.nowNs);
    if (parts === null || parts === undefined) return parts;
    return this.relAnswer(parts, principal, probes, q);
  }

  /** The answer of {@link mayRelate} over the loaded partitions. */
  private relAnswer(
    parts: readonly Partition[],
    principal: string,
    probes: readonly number[],
    q: RelateQuery,
  ): boolean | undefined {
    // As `search`: a partition of other dimensions sends the query to the database.
    for (const part of parts)
      if (part.index !== undefined && part.size > 0 && part.index.dimensions !== q.dimensions)
        return undefined;
    let ready = true;
    for (const part of parts) if (!this.relCaughtUp(part, q.recordOf, REL_CATCH_UP)) ready = false;
    if (!ready) return undefined;
    for (const part of parts) {
      const counts = (part.rel as RelIndex).counts;
      if (counts.size === 0) continue;
      const oh = part.key === SHARED ? ownerHash(principal) : undefined;
      for (const k of probes) if (counts.has(oh === undefined ? k : withOwner(k, oh))) return true;
    }
    return false;
  }

  /**
   * Index up to `budget` of `part`'s pending rows (building its relation index at the first
   * call); true when none are left pending. Leftovers are indexed in idle turns.
   */
  private relCaughtUp(part: Partition, recordOf: RecordOf, budget: number): boolean {
    let rel = part.rel;
    if (rel === undefined) {
      rel = part.rel = new RelIndex(recordOf);
      for (const key of part.byKey.keys()) rel.pending.add(key);
    }
    rel.recordOf = recordOf;
    if (rel.pending.size === 0) return true;
    let n = 0;
    for (const key of rel.pending) {
      if (n++ >= budget) break;
      rel.pending.delete(key);
      const held = part.byKey.get(key);
      if (held !== undefined) this.relIndexRow(part, rel, key, held.entry);
    }
    if (rel.pending.size === 0) return true;
    if (!rel.catchingUp) {
      rel.catchingUp = true;
      const r = rel;
      const tick = (): void => {
        if (part.rel !== r) return; // dropped meanwhile
        const until = process.hrtime.bigint() + MAINTAIN_TICK_NS;
        let done = false;
        while (!done && process.hrtime.bigint() < until)
          done = this.relCaughtUp(part, r.recordOf, 64);
        if (done) r.catchingUp = false;
        else setImmediate(tick);
      };
      setImmediate(tick);
    }
    return false;
  }

  /** Count the relation keys of one held row (none when its record does not decode or names another owner). */
  private relIndexRow(part: Partition, rel: RelIndex, key: number, row: StoredEntry): void {
    const rec = rel.recordOf(row);
    // Never a candidate: the search keeps the owner's rows, verification those whose record
    // names the owner (the stored owner is checked against the signed bytes).
    if (rec === undefined || rec.ns !== row.owner) {
      rel.keysOf.set(key, []);
      return;
    }
    let keys = this.relMemo.get(rec.content) ?? relationKeys(words(rec.content));
    if (part.key === SHARED) {
      const oh = ownerHash(row.owner);
      keys = keys.map((k) => withOwner(k, oh));
    }
    rel.keysOf.set(key, keys);
    for (const k of keys) rel.counts.set(k, (rel.counts.get(k) ?? 0) + 1);
  }

  /** Forget a held row's relation keys (it leaves the partition). */
  private relForget(part: Partition, key: number): void {
    const rel = part.rel;
    if (rel === undefined) return;
    if (rel.pending.delete(key)) return;
    const keys = rel.keysOf.get(key);
    if (keys === undefined) return;
    rel.keysOf.delete(key);
    for (const k of keys) {
      const c = (rel.counts.get(k) ?? 0) - 1;
      if (c > 0) rel.counts.set(k, c);
      else rel.counts.delete(k);
    }
  }

  /**
   * {@link partitionsFor} when both partitions are already loaded: the same answer without a
   * promise (ADR 0088); null when a load must be started or waited for.
   */
  private partitionsNow(principal: string, nowNs: bigint): Partition[] | undefined | null {
    this.lastNowNs = nowNs;
    if (this.blocked(SHARED, nowNs) || this.blocked(principal, nowNs)) return undefined;
    const own = this.parts.get(principal);
    const sh = this.shared;
    if (own === undefined || own.loading || sh === undefined || sh.loading) return null;
    if (!this.serving) return undefined;
    if (own.unservable || sh.unservable) return undefined;
    // Least recently used last: re-insert.
    this.parts.delete(principal);
    this.parts.set(principal, own);
    return [own, sh];
  }

  /** The shared and the principal's partition, loaded; undefined when one cannot be held. */
  private async partitionsFor(principal: string, nowNs: bigint): Promise<Partition[] | undefined> {
    // Loaded already, blocked or not serving: answered there (which also notes `nowNs`).
    const now = this.partitionsNow(principal, nowNs);
    if (now !== null) return now;
    let own = this.parts.get(principal);
    if (own === undefined || (this.shared === undefined && !own.loading)) {
      if (own !== undefined) this.drop(own);
      own = this.startLoad(principal, nowNs);
    }
    const shared = this.shared;
    if (own.loading || shared === undefined || shared.loading) {
      try {
        await Promise.all([own.ready, shared?.ready]);
      } catch {
        return undefined; // the load failed (and removed itself): the database path answers
      }
    }
    const sh = this.shared;
    // Evicted, over the bound, failed or reset meanwhile: let the database answer this one.
    if (
      !this.serving ||
      this.parts.get(principal) !== own ||
      own.loading ||
      sh === undefined ||
      sh.loading
    )
      return undefined;
    if (own.unservable || sh.unservable) return undefined;
    // Least recently used last: re-insert.
    this.parts.delete(principal);
    this.parts.set(principal, own);
    return [own, sh];
  }

  private blocked(k: PartKey, nowNs: bigint): boolean {
    const at = this.overBound.get(k);
    if (at === undefined) return false;
    if (nowNs - at < OVER_BOUND_RETRY_NS) return true;
    this.overBound.delete(k);
    return false;
  }

  // ---- loading ------------------------------------------------------------------------------

  /** Start loading `principal`'s partition (and the shared one, when it is not held). */
  private startLoad(principal: string, nowNs: bigint): Partition {
    const own = new Partition(principal);
    this.parts.set(principal, own);
    const shared = this.shared === undefined ? new Partition(SHARED) : undefined;
    if (shared !== undefined) this.shared = shared;
    const run = this.scan(principal, own, shared, nowNs);
    own.ready = run;
    if (shared !== undefined) shared.ready = run;
    run.catch(() => undefined); // observed by the awaiting callers
    return own;
  }

  private async scan(
    principal: string,
    own: Partition,
    shared: Partition | undefined,
    nowNs: bigint,
  ): Promise<void> {
    const view: StorageBackend = this.root.asPrincipal(principal);
    const budget = this.maxEntries;
    // The backend's scan of live embedded rows with binary embeddings where it has one (every
    // shipped backend): the same rows `insert` would keep from `listEntries`, ~10x cheaper.
    const page =
      view.scanEntries !== undefined
        ? view.scanEntries.bind(view)
        : (o: { afterLeafIndex: number; limit: number }) => view.listEntries(o);
    try {
      let after = -1;
      for (;;) {
        const rows = await page({ afterLeafIndex: after, limit: this.pageSize });
        if (own.dead) throw new Reset();
        for (const e of rows) {
          if (e.tier === 'OPERATOR') {
            if (shared !== undefined) this.insert(shared, e);
          } else if (e.owner === principal) {
            this.insert(own, e);
          } // else: not this principal's row (RLS should never return it): never held
        }
        if (own.size + (shared?.size ?? 0) > budget) {
          throw new OverBound(own.size > budget - (shared?.size ?? 0) ? principal : SHARED);
        }
        const last = rows[rows.length - 1];
        if (last === undefined || rows.length < this.pageSize) break;
        after = last.leafIndex;
      }
      this.finish(own);
      if (shared !== undefined) this.finish(shared);
      this.evictOver(own);
    } catch (e) {
      if (e instanceof OverBound) this.overBound.set(e.which, nowNs);
      if (e instanceof Reset) throw e; // already dropped, with everything else
      if (this.parts.get(principal) === own) this.drop(own);
      if (shared !== undefined && this.shared === shared) this.drop(shared);
      throw e;
    }
  }

  /** Replay what happened during the load; the partition is then current. */
  private finish(part: Partition): void {
    const bulk = part.bulk;
    part.bulk = undefined;
    if (bulk !== undefined && bulk.keys.length > 0 && part.index !== undefined) {
      for (const i of part.index.addMany(bulk.keys, bulk.vectors)) {
        // A zero vector: no cosine, never a vector result in the database either.
        const key = bulk.keys[i] as number;
        const e = part.byKey.get(key)?.entry;
        if (e === undefined) continue;
        this.relForget(part, key);
        part.lex.remove(key);
        part.byKey.delete(key);
        part.keyOf.delete(e.id);
        this.home.delete(e.id);
        this.total--;
      }
      this.maintainSoon(part);
    }
    const pending = part.pending ?? [];
    part.pending = undefined;
    for (const c of pending) this.applyTo(part, c);
  }

  // ---- changes ------------------------------------------------------------------------------

  /**
   * Apply a state change another process committed (the log follower): as {@link apply}, and
   * remembered for a while so a row read before it but applied after it takes it too.
   */
  applyRemote(c: Exclude<EntryChange, { op: 'put' }>): void {
    const prev = this.late.get(c.id);
    const dead = prev?.dead === true || c.op !== 'expiry';
    const exp = c.op === 'expiry' ? c.expiresAtNs : prev?.expiresAtNs;
    if (prev !== undefined) this.late.delete(c.id);
    else if (this.late.size >= LATE_MAX) this.late.delete(this.late.keys().next().value as string);
    this.late.set(c.id, {
      dead,
      expiresAtNs:
        prev?.expiresAtNs !== undefined && exp !== undefined && prev.expiresAtNs > exp
          ? prev.expiresAtNs
          : exp,
    });
    this.apply([c]);
  }

  /** Whether the model answers queries (see `serving`); off also stops new partition loads. */
  setServing(on: boolean): void {
    this.serving = on;
  }

  /**
   * Forget every partition (the follower lost the feed and cannot tell what it missed): they
   * reload from the store on their next use, in-flight loads stop.
   */
  reset(): void {
    for (const p of [...this.parts.values()]) {
      p.dead = true;
      this.drop(p);
    }
    if (this.shared !== undefined) {
      this.shared.dead = true;
      this.drop(this.shared);
    }
    this.overBound.clear();
    this.late.clear();
  }

  /** Apply committed changes (the observed-storage sink). */
  apply(changes: readonly EntryChange[]): void {
    const loading: Partition[] = [];
    for (const p of this.parts.values()) if (p.loading) loading.push(p);
    if (this.shared?.loading === true) loading.push(this.shared);
    for (const c of changes) {
      for (const p of loading) p.pending?.push(c);
      if (c.op === 'put') {
        const part = c.entry.tier === 'OPERATOR' ? this.shared : this.parts.get(c.entry.owner);
        if (part !== undefined && !part.loading) this.applyTo(part, c);
      } else {
        const part = this.home.get(c.id);
        if (part !== undefined && !part.loading) this.applyTo(part, c);
      }
    }
    for (const p of new Set(
      changes.map((c) => (c.op === 'put' ? this.home.get(c.entry.id) : undefined)),
    )) {
      if (p !== undefined) this.evictOver(p);
    }
  }

  private applyTo(part: Partition, c: EntryChange): void {
    if (c.op === 'put') {
      const e = c.entry;
      const mine =
        part.key === SHARED ? e.tier === 'OPERATOR' : e.tier !== 'OPERATOR' && e.owner === part.key;
      if (mine) this.insert(part, e);
      return;
    }
    const key = part.keyOf.get(c.id);
    if (key === undefined) return;
    if (c.op === 'deleted' || c.op === 'superseded') {
      this.remove(part, c.id, key);
      return;
    }
    const e = (part.byKey.get(key) as Held).entry;
    if (c.expiresAtNs === undefined || e.expiresAtNs === undefined) return; // never expires
    if (c.expiresAtNs > e.expiresAtNs)
      part.byKey.set(key, new Held({ ...e, expiresAtNs: c.expiresAtNs }));
  }

  /** Hold `e` if it can be a vector search result (live, with an embedding). Idempotent. */
  private insert(part: Partition, row: StoredEntry): void {
    let e = row;
    if (e.deleted === true || e.supersededBy !== undefined) return;
    const embedding = e.embedding;
    if (embedding === undefined || part.dead || part.keyOf.has(e.id)) return;
    const late = this.late.get(e.id);
    if (late !== undefined) {
      if (late.dead) return;
      if (
        late.expiresAtNs !== undefined &&
        e.expiresAtNs !== undefined &&
        late.expiresAtNs > e.expiresAtNs
      )
        e = { ...e, expiresAtNs: late.expiresAtNs };
    }
    if (part.index === undefined) part.index = createVectorIndex(embedding.length);
    if (part.index.dimensions !== embedding.length) {
      part.unservable = true;
      return;
    }
    const key = this.nextKey++;
    if (part.bulk !== undefined) {
      part.bulk.keys.push(key);
      part.bulk.vectors.push(embedding);
    } else {
      try {
        part.index.add(key, embedding);
      } catch {
        return; // a zero vector: no cosine, never a vector result in the database either
      }
    }
    part.byKey.set(key, new Held(e));
    part.keyOf.set(e.id, key);
    part.lex.add(key, e.content ?? '');
    part.rel?.pending.add(key);
    this.home.set(e.id, part);
    this.total++;
  }

  /**
   * Finish the index's rebuild (the training a bulk load planned) in idle turns of the event
   * loop, a few ms at a time, instead of only by the slices searches and writes do — until then
   * searches scan the untrained layout (exact, slower). Stops when the partition is dropped.
   */
  private maintainSoon(part: Partition): void {
    const index = part.index;
    if (index === undefined) return;
    const tick = (): void => {
      if (part.index !== index) return; // dropped or replaced meanwhile
      const until = process.hrtime.bigint() + MAINTAIN_TICK_NS;
      let more = true;
      while (more && process.hrtime.bigint() < until) more = index.maintain(4);
      if (more) setImmediate(tick);
    };
    setImmediate(tick);
  }

  private remove(part: Partition, id: string, key: number): void {
    this.relForget(part, key);
    part.index?.remove(key);
    part.lex.remove(key);
    part.byKey.delete(key);
    part.keyOf.delete(id);
    this.home.delete(id);
    this.total--;
  }

  /** Forget a partition entirely. */
  private drop(part: Partition): void {
    for (const id of part.keyOf.keys()) this.home.delete(id);
    this.total -= part.size;
    part.byKey.clear();
    part.keyOf.clear();
    part.index = undefined;
    part.bulk = undefined;
    part.rel = undefined;
    if (part.key === SHARED) {
      if (this.shared === part) this.shared = undefined;
    } else if (this.parts.get(part.key) === part) this.parts.delete(part.key);
  }

  /** Evict least recently used principal partitions (not `keep`) until the bound holds. */
  private evictOver(keep: Partition): void {
    if (this.total <= this.maxEntries) return;
    for (const p of [...this.parts.values()]) {
      if (this.total <= this.maxEntries) return;
      if (p !== keep && !p.loading) this.drop(p);
    }
    if (this.total > this.maxEntries && !keep.loading) {
      // `keep` alone (with the shared partition) is over the bound: the database serves it.
      this.overBound.set(keep.key, this.lastNowNs);
      this.drop(keep);
    }
  }
}

/** How many recent state changes of other processes are remembered (`late`). */
const LATE_MAX = 100_000;

/** A load stopped by {@link ReadModel.reset}. */
class Reset extends Error {
  constructor() {
    super('read model reset during a partition load');
  }
}

class OverBound extends Error {
  constructor(readonly which: PartKey) {
    super('read model partition over its bound');
  }
}

const models = new WeakMap<object, ReadModel>();
const followers = new WeakMap<object, LogFollower>();

/**
 * `storage` observed by a new read model: use the returned storage for everything (ledger,
 * Memory), so every write reaches the model after it commits. On an exclusive backend
 * (`storage.exclusive`: this process is the only writer) that is all; on a store other
 * processes write too, its change feed (`storage.feed`) must exist, and a log follower
 * (`follower.ts`, ADR 0037) applies their commits — `start` it via {@link followerOf}
 * (`Memory.open` does, and waits for its first sync). Neither: `INPUT_INVALID`, since the model
 * would miss other writers' changes.
 */
export function withReadModel(storage: RootStorage, opts: ReadModelOptions = {}): RootStorage {
  const feed = storage.feed;
  if (storage.exclusive !== true && feed === undefined) {
    throw new MemwardenError(
      'INPUT_INVALID',
      'the read model needs an exclusive backend (this process the only writer) or a change feed',
    );
  }
  const model = new ReadModel(storage, opts);
  if (storage.exclusive === true || feed === undefined) {
    const observed = observeStorage(storage, (cs) => model.apply(cs));
    models.set(observed, model);
    return observed;
  }
  const local = new LocalCommits();
  const ref: { follower?: LogFollower } = {};
  const observed = observeStorage(
    storage,
    (cs) => {
      ref.follower?.noteLocal(cs);
      model.apply(cs);
    },
    local,
  );
  const follower = (ref.follower = new LogFollower(observed, feed, model, local));
  models.set(observed, model);
  followers.set(observed, follower);
  return observed;
}

/** The read model a storage from {@link withReadModel} carries, if any. */
export function readModelOf(storage: RootStorage): ReadModel | undefined {
  return models.get(storage);
}

/** The log follower of a storage from {@link withReadModel} on a shared store, if any. */
export function followerOf(storage: RootStorage): LogFollower | undefined {
  return followers.get(storage);
}
