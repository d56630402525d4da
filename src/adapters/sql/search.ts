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
 * - Lexical: PostgreSQL full text over the stored `content_tsv` (GIN index, `simple`
 *   configuration); the query's words are OR-ed (plainto_tsquery ANDs them) and ranked with
 *   `ts_rank(…, 32)` = rank/(rank+1) ∈ (0, 1).
 */
import type { SearchHit, SearchQuery, StoredEntry } from '../../ports/storage.js';
import { type SqlFeatures, Where, entryCols, entryOut, live } from './entries.js';
import type { Queryable } from './queryable.js';
import { bytesOut } from './codec.js';
import {
  checkSearchQuery,
  cosine,
  cosineNormed,
  float4FromArraySend,
  float4Literal,
  norm2,
} from './rank.js';

/** The tsquery of `$n`: its words OR-ed. The ' & ' separator never occurs inside a lexeme. */
const tsQuery = (p: string): string =>
  `replace(plainto_tsquery('simple', ${p})::text, ' & ', ' | ')::tsquery`;

function filters(q: SearchQuery): Where {
  const w = live(new Where(), { nowNs: q.nowNs });
  if (q.tiers !== undefined) w.add(`tier = ANY(${w.param([...q.tiers])}::text[])`);
  if (q.kinds !== undefined) w.add(`kind = ANY(${w.param([...q.kinds])}::text[])`);
  if (q.uri !== undefined) w.add(`uri = ${w.param(q.uri)}`);
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

async function lexicalTop(
  qr: Queryable,
  f: SqlFeatures,
  q: SearchQuery,
  text: string,
): Promise<SearchHit[]> {
  const w = filters(q);
  const t = tsQuery(w.param(text));
  const { rows } = await qr.query(
    `SELECT ${entryCols(f, 'e')}, t.lscore FROM (
       SELECT id, ts_rank(content_tsv, qq.query, 32) AS lscore, leaf_index
         FROM entries, (SELECT ${t} AS query) qq
        WHERE ${w.sql()} AND content_tsv @@ qq.query
        ORDER BY lscore DESC, leaf_index LIMIT ${w.param(q.limit)}) t
     JOIN entries e ON e.id = t.id ORDER BY t.lscore DESC, t.leaf_index`,
    w.params,
  );
  return rows.map((r) => ({ entry: entryOut(r), lexicalScore: Number(r.lscore) }));
}

/** Lexical scores (0 = no word matched) of the given rows. */
async function lexicalOf(
  qr: Queryable,
  ids: readonly string[],
  text: string,
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const { rows } = await qr.query(
    `SELECT e.id, CASE WHEN e.content_tsv @@ qq.query THEN ts_rank(e.content_tsv, qq.query, 32) ELSE 0 END AS lscore
       FROM entries e, (SELECT ${tsQuery('$2')} AS query) qq WHERE e.id = ANY($1::text[])`,
    [[...ids], text],
  );
  return new Map(rows.map((r) => [String(r.id), Number(r.lscore)]));
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
): Promise<SearchHit[]> {
  checkSearchQuery(q);
  const { embedding, text } = q;
  if (embedding !== undefined && text === undefined) return vectorTop(qr, f, q, embedding);
  if (embedding === undefined && text !== undefined) return lexicalTop(qr, f, q, text);
  if (embedding === undefined || text === undefined) return [];
  const [vec, lex] = [await vectorTop(qr, f, q, embedding), await lexicalTop(qr, f, q, text)];
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
  const need = [...merged.values()]
    .filter((m) => m.lexicalScore === undefined)
    .map((m) => m.entry.id);
  const lscores = await lexicalOf(qr, need, text);
  for (const id of need) merged.get(id)!.lexicalScore = lscores.get(id) ?? 0;
  return [...merged.values()].sort(byScores);
}
