/**
 * @module adapters/sql/search
 * `searchEntries` for both Postgres backends. Candidates are live rows visible in the scope
 * (row-level security applies as always), filtered by tier / kind / URI.
 *
 * - Vector ranking with pgvector: `ORDER BY embedding_vec <=> $q LIMIT k` (cosine distance;
 *   similarity = 1 − distance): an exact scan on small stores, served by the IVFFlat or HNSW
 *   index `./vector-index.js` maintains once the store is large (approximate; iterative scan).
 * - Vector ranking without pgvector (Debian's PostgreSQL 15): the candidates are ranked
 *   in-process, then the top `k` rows are loaded. Their embeddings come in binary form, and
 *   with the backend's row-vector cache (`./row-vectors.js`) only the ids and row versions of
 *   the candidates are read per query. Exact, but O(candidates) per query — fine for tens of
 *   thousands of rows, not for millions (use pgvector there).
 * - Lexical: BM25 (`core/text`, ADR 0050). PostgreSQL full text over the stored `content_tsv`
 *   (GIN index, `simple` configuration) finds the candidates — rows matching any query term —
 *   and the collection statistics (rows, mean `lex_len`, per-term document frequency); the
 *   candidates are scored in-process from their content, as the read model and the in-memory
 *   backend score them.
 */
import type { SearchHit, SearchQuery, StoredEntry } from '../../ports/storage.js';
import { type SqlFeatures, Where, entryCols, entryOut, live } from './entries.js';
import type { Queryable } from './queryable.js';
import { filterSql } from './filter-sql.js';
import {
  type Bm25Stats,
  bm25,
  queryTerms,
  termFrequencies,
  tokenize,
} from '../../core/text/index.js';
import { bytesOut } from './codec.js';
import {
  checkSearchQuery,
  cosine,
  cosineNormed,
  float4FromArraySend,
  float4Literal,
  norm2,
} from './rank.js';

function filters(q: SearchQuery): Where {
  const w = live(new Where(), { nowNs: q.nowNs });
  if (q.tiers !== undefined) w.add(`tier = ANY(${w.param([...q.tiers])}::text[])`);
  if (q.kinds !== undefined) w.add(`kind = ANY(${w.param([...q.kinds])}::text[])`);
  if (q.uri !== undefined) w.add(`uri = ${w.param(q.uri)}`);
  if (q.filter !== undefined) w.add(filterSql(q.filter, w));
  return w;
}

async function vectorTop(
  qr: Queryable,
  f: SqlFeatures,
  q: SearchQuery,
  emb: Float32Array,
): Promise<SearchHit[]> {
  const w = filters(q);
  if (f.vector) {
    // Rank on ids and distances only, then load the k winners: the select list of a sort is
    // computed for every candidate row, and a full row (bytes, the embedding as text) is costly.
    // The winners come back without their embedding (the score is computed; formatting and
    // parsing 384 floats per hit was a large part of a 100k search), as SearchHit allows.
    if (f.ann !== undefined) {
      // Transaction-local: probe `probes` lists (IVFFlat) or keep `ef_search` candidates (HNSW,
      // at least `limit`), and keep scanning (relaxed order) until `limit` rows pass the
      // filters — RLS and the live/tier filters are applied after the index scan, so without it
      // a principal owning a small share of the rows would get fewer than `limit`.
      await (f.ann.kind === 'hnsw'
        ? qr.query(
            `SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`,
            [String(Math.min(1000, Math.max(f.ann.efSearch ?? 40, q.limit)))],
          )
        : qr.query(
            `SELECT set_config('ivfflat.probes', $1, true), set_config('ivfflat.iterative_scan', 'relaxed_order', true)`,
            [String(f.ann.probes)],
          ));
    }
    const v = w.param(float4Literal(emb, '[', ']'));
    w.add('embedding_vec IS NOT NULL');
    const { rows } = await qr.query(
      `SELECT ${entryCols(f, 'e', false)}, 1 - t.d AS vscore
         FROM (SELECT id, embedding_vec <=> ${v}::vector AS d FROM entries
                WHERE ${w.sql()} ORDER BY embedding_vec <=> ${v}::vector LIMIT ${w.param(q.limit)}) t
         JOIN entries e ON e.id = t.id`,
      w.params,
    );
    // ORDER BY the distance alone, so an ivfflat/hnsw index can serve it; with an iterative
    // index scan (relaxed order) rows may arrive slightly out of order, so sort here.
    return rows
      .map((r) => ({ entry: entryOut(r), vectorScore: Number(r.vscore) }))
      .sort((a, b) => b.vectorScore - a.vectorScore || a.entry.leafIndex - b.entry.leafIndex);
  }
  w.add('embedding IS NOT NULL');
  const qn = norm2(emb);
  const scored = (await candidateVectors(qr, f, w))
    .map((c) => ({ c, s: cosineNormed(emb, qn, c.vec, c.norm2) }))
    .sort((a, b) => b.s - a.s || a.c.li - b.c.li)
    .slice(0, q.limit);
  if (scored.length === 0) return [];
  // The winners' rows without their embedding as text (384 decimals to parse each): the
  // vector ranked is the row's, already in hand (a copy: the cache's stays unshared).
  const full = await qr.query(
    `SELECT ${entryCols(f, '', false)} FROM entries WHERE id = ANY($1::text[])`,
    [scored.map((s) => s.c.id)],
  );
  const byId = new Map(full.rows.map((r) => [String(r.id), entryOut(r)]));
  return scored.flatMap((s) => {
    const entry = byId.get(s.c.id);
    return entry === undefined
      ? []
      : [{ entry: { ...entry, embedding: s.c.vec.slice() }, vectorScore: s.s }];
  });
}

/** A candidate of in-process ranking: its id, leaf index and embedding (with its `norm2`). */
interface Candidate {
  readonly id: string;
  readonly li: number;
  readonly vec: Float32Array;
  readonly norm2: number;
}

/**
 * Without pgvector: the candidates (rows passing `w` in the caller's scope) with their
 * embeddings, in binary form (`array_send`: no decimals formatted or parsed). With the
 * backend's row-vector cache (`./row-vectors.js`) only ids and row versions are read for
 * every candidate, and the vectors of row versions not seen before in a second query.
 */
async function candidateVectors(qr: Queryable, f: SqlFeatures, w: Where): Promise<Candidate[]> {
  const cache = f.rowVectors;
  if (cache === undefined) {
    const { rows } = await qr.query(
      `SELECT id, leaf_index, array_send(embedding) AS emb FROM entries WHERE ${w.sql()}`,
      w.params,
    );
    return rows.map((r) => {
      const vec = float4FromArraySend(bytesOut(r.emb));
      return { id: String(r.id), li: Number(r.leaf_index), vec, norm2: norm2(vec) };
    });
  }
  const { rows } = await qr.query(
    `SELECT id, leaf_index, xmin::text AS v FROM entries WHERE ${w.sql()}`,
    w.params,
  );
  const out: Candidate[] = [];
  const missing: { id: string; li: number }[] = [];
  for (const r of rows) {
    const id = String(r.id);
    const li = Number(r.leaf_index);
    const c = cache.get(id, String(r.v));
    if (c === undefined) missing.push({ id, li });
    else out.push({ id, li, vec: c.vec, norm2: c.norm2 });
  }
  if (missing.length > 0) {
    const got = await qr.query(
      `SELECT id, xmin::text AS v, array_send(embedding) AS emb FROM entries
        WHERE id = ANY($1::text[]) AND embedding IS NOT NULL`,
      [missing.map((m) => m.id)],
    );
    const fetched = new Map<string, { vec: Float32Array; norm2: number }>();
    for (const r of got.rows) {
      const id = String(r.id);
      fetched.set(id, cache.set(id, String(r.v), float4FromArraySend(bytesOut(r.emb))));
    }
    // A row gone or changed between the two statements ranks as this fetch found it (or not).
    for (const m of missing) {
      const c = fetched.get(m.id);
      if (c !== undefined) out.push({ ...m, vec: c.vec, norm2: c.norm2 });
    }
  }
  return out;
}

/** `to_tsquery('simple', …)` text OR-ing the terms (alphanumeric runs: nothing to escape). */
const orQuery = (terms: readonly string[]): string => terms.map((t) => `'${t}'`).join(' | ');

/** The counted-row predicate of BM25 statistics (see {@link bm25StatsOf}). */
const countedSql = (f: SqlFeatures): string =>
  `NOT deleted AND superseded_by IS NULL AND ${f.vector ? 'embedding_vec' : 'embedding'} IS NOT NULL`;

/**
 * BM25 statistics of the scope's current memories (not deleted, not superseded, embedded;
 * expired ones count until they are gone — what the read model holds): the rows, their mean
 * BM25 length (`lex_len`, stored on insert) and each term's document frequency, in one scan.
 * The system scope's path; a principal's comes with its candidates ({@link lexicalInScope}).
 */
async function bm25StatsOf(
  qr: Queryable,
  f: SqlFeatures,
  terms: readonly string[],
): Promise<Bm25Stats> {
  const params: unknown[] = [];
  const dfs = terms.map((t) => {
    params.push(`'${t}'`);
    return `count(*) FILTER (WHERE content_tsv @@ to_tsquery('simple', $${params.length})) AS df${params.length - 1}`;
  });
  const { rows } = await qr.query(
    `SELECT count(*) AS n, avg(lex_len)::float8 AS avg${dfs.map((d) => `, ${d}`).join('')}
       FROM entries WHERE ${countedSql(f)}`,
    params,
  );
  return statsOut(rows[0] ?? {}, terms);
}

function statsOut(r: Record<string, unknown>, terms: readonly string[]): Bm25Stats {
  const df = new Map(terms.map((t, i) => [t, Number(r[`df${i}`] ?? 0)]));
  return { n: Number(r.n ?? 0), avgLen: Number(r.avg ?? 0), df: (t) => df.get(t) ?? 0 };
}

/** Full-text candidates examined per lexical search (re-scored with BM25 here). */
const LEXICAL_POOL = 200;

interface LexicalCandidates {
  readonly rows: readonly Record<string, unknown>[];
  /** Absent when there is no candidate (not needed then). */
  readonly stats?: Bm25Stats;
}

/**
 * A principal's candidates and statistics in one statement (ADR 0075). The matches come from
 * `memwarden_lexical_match` (migration 60): the GIN index finds them and the function applies
 * the read policy's own predicate, with the principal of this transaction. Rows and lengths
 * come from the per-owner counters `entry_lex_stats` (read under RLS), each term's document
 * frequency from the same matches — the figures {@link bm25StatsOf}'s scan computes (the
 * mean is the numeric division `avg` performs).
 */
async function lexicalInScope(
  qr: Queryable,
  f: SqlFeatures,
  q: SearchQuery,
  terms: readonly string[],
): Promise<LexicalCandidates> {
  const w = filters(q);
  const query = w.param(orQuery(terms));
  const dfs = terms.map(
    (t, i) =>
      `count(*) FILTER (WHERE content_tsv @@ to_tsquery('simple', ${w.param(`'${t}'`)})) AS df${i}`,
  );
  const { rows } = await qr.query(
    `WITH m AS MATERIALIZED (
       SELECT * FROM memwarden_lexical_match(to_tsquery('simple', ${query}), ${f.vector ? 'true' : 'false'}))
     SELECT (SELECT coalesce(json_agg(json_build_array(c.id, c.content, c.leaf_index)
                                      ORDER BY c.rank DESC, c.leaf_index), '[]')
               FROM (SELECT id, content, leaf_index, rank FROM m entries WHERE ${w.sql()}
                      ORDER BY rank DESC, leaf_index
                      LIMIT ${w.param(Math.max(q.limit * 4, LEXICAL_POOL))}) c) AS cands,
            s.n, s.avg, d.*
       FROM (SELECT coalesce(sum(n), 0) AS n,
                    CASE WHEN coalesce(sum(len_n), 0) = 0 THEN NULL
                         ELSE (sum(len_sum)::numeric / sum(len_n)::numeric)::float8 END AS avg
               FROM entry_lex_stats) s,
            (SELECT ${dfs.join(', ')} FROM m WHERE NOT deleted AND superseded_by IS NULL AND embedded) d`,
    w.params,
  );
  const r = rows[0] ?? {};
  const raw: unknown = typeof r.cands === 'string' ? JSON.parse(r.cands) : r.cands;
  const cands = (Array.isArray(raw) ? raw : []) as [unknown, unknown, unknown][];
  return {
    rows: cands.map(([id, content, li]) => ({ id, content, leaf_index: li })),
    stats: statsOut(r, terms),
  };
}

/** The system scope's candidates: one full-text query (RLS grants that scope every row). */
async function lexicalAll(
  qr: Queryable,
  f: SqlFeatures,
  q: SearchQuery,
  terms: readonly string[],
): Promise<LexicalCandidates> {
  const w = filters(q);
  const t = `to_tsquery('simple', ${w.param(orQuery(terms))})`;
  const { rows } = await qr.query(
    `SELECT id, content, leaf_index FROM entries, (SELECT ${t} AS query) qq
      WHERE ${w.sql()} AND content_tsv @@ qq.query
      ORDER BY ts_rank(content_tsv, qq.query, 32) DESC, leaf_index
      LIMIT ${w.param(Math.max(q.limit * 4, LEXICAL_POOL))}`,
    w.params,
  );
  return rows.length === 0 ? { rows } : { rows, stats: await bm25StatsOf(qr, f, terms) };
}

/**
 * Lexical ranking: BM25 (`core/text`). The database finds the candidates — rows matching any
 * query term (GIN full-text index), at most max(4·limit, 200) by `ts_rank` — and the
 * collection statistics; the candidates are scored with BM25 here, from their content.
 * Returns the statistics too (for the hybrid path's other rows).
 */
async function lexicalTop(
  qr: Queryable,
  f: SqlFeatures,
  q: SearchQuery,
  text: string,
  principal: boolean,
): Promise<{ hits: SearchHit[]; stats?: Bm25Stats }> {
  const terms = queryTerms(text);
  if (terms.length === 0) return { hits: [] };
  const { rows, stats } = await (principal ? lexicalInScope : lexicalAll)(qr, f, q, terms);
  if (rows.length === 0 || stats === undefined) return { hits: [] };
  const scored = rows
    .map((r) => {
      const toks = tokenize(typeof r.content === 'string' ? r.content : '');
      return {
        id: String(r.id),
        li: Number(r.leaf_index),
        s: bm25(terms, termFrequencies(toks), toks.length, stats),
      };
    })
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s || a.li - b.li)
    .slice(0, q.limit);
  if (scored.length === 0) return { hits: [], stats };
  // The hits themselves are read from `entries`, under row-level security as always.
  const full = await qr.query(`SELECT ${entryCols(f)} FROM entries WHERE id = ANY($1::text[])`, [
    scored.map((x) => x.id),
  ]);
  const byId = new Map(full.rows.map((r) => [String(r.id), entryOut(r)]));
  return {
    hits: scored.flatMap((x) => {
      const entry = byId.get(x.id);
      return entry === undefined ? [] : [{ entry, lexicalScore: x.s }];
    }),
    stats,
  };
}

/** BM25 scores (0 = no term matched) of rows already in hand, with the scope's statistics. */
async function lexicalOf(
  qr: Queryable,
  f: SqlFeatures,
  entries: readonly StoredEntry[],
  text: string,
  known: Bm25Stats | undefined,
): Promise<Map<string, number>> {
  const terms = queryTerms(text);
  if (entries.length === 0 || terms.length === 0) return new Map();
  const stats = known ?? (await bm25StatsOf(qr, f, terms));
  return new Map(
    entries.map((e) => {
      const toks = tokenize(e.content ?? '');
      return [e.id, bm25(terms, termFrequencies(toks), toks.length, stats)];
    }),
  );
}

const byScores = (a: SearchHit, b: SearchHit): number =>
  (b.vectorScore ?? -Infinity) - (a.vectorScore ?? -Infinity) ||
  (b.lexicalScore ?? 0) - (a.lexicalScore ?? 0) ||
  a.entry.leafIndex - b.entry.leafIndex;

/** See the module comment and {@link SearchHit} for the result contract. */
export async function searchEntries(
  qr: Queryable,
  f: SqlFeatures,
  q: SearchQuery,
  principal = false,
): Promise<SearchHit[]> {
  checkSearchQuery(q);
  const { embedding, text } = q;
  if (embedding !== undefined && text === undefined) return vectorTop(qr, f, q, embedding);
  if (embedding === undefined && text !== undefined)
    return (await lexicalTop(qr, f, q, text, principal)).hits;
  if (embedding === undefined || text === undefined) return [];
  const vec = await vectorTop(qr, f, q, embedding);
  const { hits: lex, stats } = await lexicalTop(qr, f, q, text, principal);
  const merged = new Map<
    string,
    { entry: StoredEntry; vectorScore?: number; lexicalScore?: number }
  >();
  for (const h of vec) merged.set(h.entry.id, { ...h });
  for (const h of lex) {
    const m = merged.get(h.entry.id);
    if (m === undefined) {
      const e = h.entry.embedding;
      merged.set(
        h.entry.id,
        e === undefined ? { ...h } : { ...h, vectorScore: cosine(embedding, e) },
      );
    } else m.lexicalScore = h.lexicalScore ?? 0;
  }
  const need = [...merged.values()].filter((m) => m.lexicalScore === undefined).map((m) => m.entry);
  const lscores = await lexicalOf(qr, f, need, text, stats);
  for (const e of need) merged.get(e.id)!.lexicalScore = lscores.get(e.id) ?? 0;
  return [...merged.values()].sort(byScores);
}
