/**
 * @module adapters/sql/entries
 * Entry queries. Visibility is decided by row-level security, not here: under an agent scope
 * the same `SELECT` returns only that principal's rows plus global OPERATOR rows, and an
 * `INSERT` of another owner's or an OPERATOR row is refused by the database. An `UPDATE` the
 * policies filter out changes zero rows rather than failing, so the state changes below check
 * what they changed and classify a miss (not visible → not found; visible → denied).
 *
 * Embeddings live in `embedding_vec vector(384)` where pgvector exists and in `embedding real[]`
 * otherwise — never both, so a write pays for one conversion.
 */
import { MemwardenError } from '../../core/errors.js';
import { type SourceTier, SourceTiers } from '../../core/trust.js';
import type { BrowseQuery, StoredEntry, TierCount } from '../../ports/storage.js';
import type { JsonObject } from '../../core/entry/meta.js';
import type { EntryFilter } from '../../core/filter/index.js';
import { filterSql } from './filter-sql.js';
import { tokenize } from '../../core/text/index.js';
import { bigIn, bigOut, bigOutOpt, bytesIn, bytesOut, numOut, strOut } from './codec.js';
import type { RowVectorCache } from './row-vectors.js';
import type { Queryable } from './queryable.js';
import {
  checkEmbedding,
  checkScan,
  float4ArrayBinary,
  float4FromArraySend,
  float4FromVectorSend,
  float4Literal,
  float4Out,
  vectorBinary,
} from './rank.js';

/** What the connected database offers. */
export interface SqlFeatures {
  /** pgvector is installed and `entries.embedding_vec` exists. */
  readonly vector: boolean;
  /**
   * ANN session settings for vector search (pgvector ≥ 0.8: iterative scans): IVFFlat probes
   * (kind absent or `ivfflat`) or HNSW's `ef_search` (`hnsw`). Absent: the server's defaults
   * (exact scan when no ANN index exists either way).
   */
  readonly ann?: {
    readonly kind?: 'ivfflat' | 'hnsw';
    readonly probes: number;
    readonly efSearch?: number;
  };
  /**
   * The driver sends byte-array parameters in binary format whatever the parameter's type
   * (`pg` does; PGlite does not): embeddings then travel in their binary send format.
   */
  readonly binaryParams?: boolean;
  /**
   * Without pgvector: the backend's cache of row versions' embeddings for in-process ranking
   * (`./row-vectors.js`), shared by all its scopes. Absent: every search fetches them.
   */
  readonly rowVectors?: RowVectorCache;
}

const BASE = 'id, owner, tier, bytes, leaf_index, mac_kid, mac';
const META =
  'writer, kind, created_ns, expires_ns, content, uri, src_hash, deleted, superseded_by, memory_id, event_ns, metadata::text AS metadata, run_id, agent_id, lex_len';

/** The select list of a full entry, the embedding read from whichever column holds it. */
export function entryCols(f: SqlFeatures, alias = '', withEmbedding = true): string {
  const p = alias === '' ? '' : `${alias}.`;
  const cols = `${BASE}, ${META}`
    .split(', ')
    .map((c) => (c.startsWith('metadata::') ? `${p}metadata::text AS metadata` : p + c))
    .join(', ');
  if (!withEmbedding) return `${cols}, NULL AS emb`;
  return `${cols}, ${f.vector ? `${p}embedding_vec::text` : `${p}embedding`} AS emb`;
}

/** Insert once; an existing id is a unique violation → STORAGE_CONFLICT. A new entry is live. */
export async function putEntry(q: Queryable, f: SqlFeatures, e: StoredEntry): Promise<void> {
  await putEntries(q, f, [e]);
}

const PUT_COLS = 21;
/** `($1, …, $21::vector)` for row `i` of a multi-row INSERT, cached (built once per row number). */
const TUPLES = { vector: [] as string[], 'real[]': [] as string[] };
function tuple(i: number, embType: 'vector' | 'real[]'): string {
  const cache = TUPLES[embType];
  let t = cache[i];
  if (t === undefined) {
    const b = i * PUT_COLS;
    const ps = Array.from({ length: PUT_COLS }, (_, k) => `$${b + k + 1}`);
    ps[PUT_COLS - 1] += `::${embType}`;
    ps[9] += '::bigint';
    ps[10] += '::bigint';
    ps[15] += '::bigint';
    ps[16] += '::jsonb';
    t = cache[i] = `(${ps.join(', ')})`;
  }
  return t;
}
/** Rows per INSERT: PostgreSQL binds at most 65535 parameters per statement. */
const PUT_CHUNK = 1000;

/**
 * Insert many entries with multi-row INSERTs (one statement per {@link PUT_CHUNK} rows): the
 * per-statement cost dominates single-row inserts, in PGlite especially. All-or-nothing only
 * inside the caller's transaction.
 */
export async function putEntries(
  q: Queryable,
  f: SqlFeatures,
  es: readonly StoredEntry[],
): Promise<void> {
  for (const st of putEntriesStatements(f, es)) await q.query(st.sql, st.params);
}

/** The multi-row INSERTs of {@link putEntries} (one per {@link PUT_CHUNK} rows), unsent. */
export function putEntriesStatements(
  f: SqlFeatures,
  es: readonly StoredEntry[],
): { sql: string; params: unknown[] }[] {
  const out: { sql: string; params: unknown[] }[] = [];
  const embCol = f.vector ? 'embedding_vec' : 'embedding';
  const embType = f.vector ? 'vector' : 'real[]';
  const embIn = (v: Float32Array): unknown =>
    f.binaryParams === true
      ? f.vector
        ? vectorBinary(v)
        : float4ArrayBinary(v)
      : float4Literal(v, f.vector ? '[' : '{', f.vector ? ']' : '}');
  for (let start = 0; start < es.length; start += PUT_CHUNK) {
    const chunk = es.slice(start, start + PUT_CHUNK);
    const params: unknown[] = [];
    const tuples = chunk.map((e, i) => {
      const emb = e.embedding === undefined ? null : embIn(checkEmbedding(e.embedding));
      params.push(
        e.id,
        e.owner,
        e.tier,
        bytesIn(e.bytes),
        e.leafIndex,
        e.macKid,
        bytesIn(e.mac),
        e.writer ?? null,
        e.kind ?? null,
        bigIn(e.createdAtNs),
        bigIn(e.expiresAtNs),
        e.content ?? null,
        e.uri ?? null,
        e.srcHash ?? null,
        e.memoryId ?? null,
        bigIn(e.eventAtNs),
        e.metadata === undefined ? null : JSON.stringify(e.metadata),
        e.runId ?? null,
        e.agentId ?? null,
        e.content === undefined ? null : tokenize(e.content).length,
        emb,
      );
      return tuple(i, embType);
    });
    out.push({
      sql: `INSERT INTO entries (${BASE}, writer, kind, created_ns, expires_ns, content, uri, src_hash, memory_id, event_ns, metadata, run_id, agent_id, lex_len, ${embCol})
       VALUES ${tuples.join(', ')}`,
      params,
    });
  }
  return out;
}

const optStr = (v: unknown): string | undefined =>
  v === null || v === undefined ? undefined : strOut(v);

/** The `metadata` column (selected as text): a JSON object, or absent. */
export function metadataOut(v: unknown): JsonObject | undefined {
  if (v === null || v === undefined) return undefined;
  const o = typeof v === 'string' ? (JSON.parse(v) as unknown) : v;
  if (typeof o !== 'object' || o === null || Array.isArray(o))
    throw new MemwardenError('STORAGE_FAILED', 'unexpected column value: metadata');
  return o as JsonObject;
}

/** Map a row selected with {@link entryCols}; optional fields absent (not undefined) when NULL. */
export function entryOut(r: Record<string, unknown>): StoredEntry {
  const tier = strOut(r.tier);
  if (!(SourceTiers as readonly string[]).includes(tier))
    throw new MemwardenError('STORAGE_FAILED', 'bad tier');
  const out: Record<string, unknown> = {
    id: strOut(r.id),
    owner: strOut(r.owner),
    tier: tier as SourceTier,
    bytes: bytesOut(r.bytes),
    leafIndex: numOut(r.leaf_index),
    macKid: strOut(r.mac_kid),
    mac: bytesOut(r.mac),
    deleted: r.deleted === true,
  };
  const opt: [string, unknown][] = [
    ['writer', optStr(r.writer)],
    ['kind', optStr(r.kind)],
    ['createdAtNs', bigOutOpt(r.created_ns)],
    ['expiresAtNs', bigOutOpt(r.expires_ns)],
    ['content', optStr(r.content)],
    ['uri', optStr(r.uri)],
    ['srcHash', optStr(r.src_hash)],
    ['supersededBy', optStr(r.superseded_by)],
    ['memoryId', optStr(r.memory_id)],
    ['eventAtNs', bigOutOpt(r.event_ns)],
    ['metadata', metadataOut(r.metadata)],
    ['runId', optStr(r.run_id)],
    ['agentId', optStr(r.agent_id)],
    ['lexLen', r.lex_len === null || r.lex_len === undefined ? undefined : numOut(r.lex_len)],
    ['embedding', r.emb === null || r.emb === undefined ? undefined : float4Out(r.emb)],
  ];
  for (const [k, v] of opt) if (v !== undefined) out[k] = v;
  return out as unknown as StoredEntry;
}

export async function getEntry(
  q: Queryable,
  f: SqlFeatures,
  id: string,
): Promise<StoredEntry | undefined> {
  const { rows } = await q.query(`SELECT ${entryCols(f)} FROM entries WHERE id = $1`, [id]);
  return rows.length === 0 ? undefined : entryOut(rows[0]!);
}

/** Entries in log order after `afterLeafIndex`; `LIMIT NULL` means no limit in PostgreSQL. */
export async function listEntries(
  q: Queryable,
  f: SqlFeatures,
  opts?: { afterLeafIndex?: number; limit?: number },
): Promise<StoredEntry[]> {
  const { rows } = await q.query(
    `SELECT ${entryCols(f)} FROM entries WHERE leaf_index > $1 ORDER BY leaf_index, id LIMIT $2`,
    [opts?.afterLeafIndex ?? -1, opts?.limit ?? null],
  );
  return rows.map(entryOut);
}

/** The live, embedded rows `scanEntries` returns: its WHERE clause (keyset `$1`) and ORDER/LIMIT (`$2`). */
export function scanWhere(f: SqlFeatures): string {
  const emb = f.vector ? 'embedding_vec' : 'embedding';
  return `leaf_index > $1 AND NOT deleted AND superseded_by IS NULL AND ${emb} IS NOT NULL
     ORDER BY leaf_index, id LIMIT $2`;
}

/**
 * `scanEntries` in a principal's scope: the rows the read policy admits there — the principal's
 * own and OPERATOR ones — as two keyset branches, each on an index in leaf order
 * (`entries_owner_idx (owner, leaf_index)`, the partial `entries_operator_leaf_idx`, migration
 * 61), merged. The one-branch form walked `entries_leaf_idx` over every row of every owner and let
 * RLS discard the others' (the planner cannot estimate `owner = memwarden_principal()`): a
 * partition load of a principal with 108 rows read all 100,000 (≈ 50–100 ms of server CPU each,
 * once per principal per process — the first writes after a start at 100k waited seconds).
 * The predicates only narrow what RLS admits (still applied to both branches); the second
 * excludes the first's rows, so none comes twice.
 */
function scanPrincipalSql(f: SqlFeatures, bin: string): string {
  const emb = f.vector ? 'embedding_vec' : 'embedding';
  const live = `leaf_index > $1 AND NOT deleted AND superseded_by IS NULL AND ${emb} IS NOT NULL`;
  const cols = `${entryCols(f, '', false)}, ${bin} AS emb_bin`;
  return `(SELECT ${cols} FROM entries WHERE owner = memwarden_principal() AND ${live}
             ORDER BY leaf_index, id LIMIT $2)
          UNION ALL
          (SELECT ${cols} FROM entries
            WHERE tier = 'OPERATOR' AND owner IS DISTINCT FROM memwarden_principal() AND ${live}
            ORDER BY leaf_index, id LIMIT $2)
          ORDER BY leaf_index, id LIMIT $2`;
}

/** The statement of {@link scanEntries} (`$1` after this leaf index, `$2` the page size). */
export function scanSql(f: SqlFeatures, principalScope: boolean): string {
  const bin = f.vector ? 'vector_send(embedding_vec)' : 'array_send(embedding)';
  return principalScope
    ? scanPrincipalSql(f, bin)
    : `SELECT ${entryCols(f, '', false)}, ${bin} AS emb_bin FROM entries WHERE ${scanWhere(f)}`;
}

/**
 * One page of live entries with their embeddings (the read model's loader): the embedding
 * travels in its binary send format (`vector_send` / `array_send`, a bytea) instead of text,
 * so neither side formats or parses decimals. Row-level security decides the rows, as for
 * every other SELECT here.
 */
export async function scanEntries(
  q: Queryable,
  f: SqlFeatures,
  opts: { afterLeafIndex?: number; limit: number },
  principalScope = false,
): Promise<StoredEntry[]> {
  const after = checkScan(opts);
  const { rows } = await q.query(scanSql(f, principalScope), [after, opts.limit]);
  return rows.map((r) => {
    const raw = bytesOut(r.emb_bin);
    const embedding = f.vector ? float4FromVectorSend(raw) : float4FromArraySend(raw);
    return { ...entryOut(r), embedding };
  });
}

const notFound = (id: string): MemwardenError =>
  new MemwardenError('STORAGE_NOT_FOUND', `entry ${id} not found`);

/** The refusal RLS gives silently on UPDATE, made explicit (same shape as a 42501 from the database). */
export const deniedError = (what: string): MemwardenError =>
  new MemwardenError('STORAGE_FAILED', `denied: ${what}`, { details: { reason: 'denied' } });

/** Why an UPDATE of `id` changed nothing: the scope cannot see it, or may not change it. */
async function missed(q: Queryable, id: string): Promise<never> {
  const { rows } = await q.query('SELECT 1 FROM entries WHERE id = $1', [id]);
  throw rows.length === 0
    ? notFound(id)
    : deniedError(`entry ${id} may not be changed in this scope`);
}

export async function markDeleted(q: Queryable, id: string): Promise<void> {
  const { rows } = await q.query('UPDATE entries SET deleted = true WHERE id = $1 RETURNING id', [
    id,
  ]);
  if (rows.length === 0) await missed(q, id);
}

/** Set once: the WHERE makes a concurrent second setter change nothing (READ COMMITTED re-checks it). */
export async function markSuperseded(q: Queryable, id: string, byId: string): Promise<void> {
  const { rows } = await q.query(
    'UPDATE entries SET superseded_by = $2 WHERE id = $1 AND superseded_by IS NULL RETURNING id',
    [id, byId],
  );
  if (rows.length > 0) return;
  const seen = await q.query('SELECT superseded_by FROM entries WHERE id = $1', [id]);
  if (seen.rows.length > 0 && seen.rows[0]!.superseded_by !== null)
    throw new MemwardenError('STORAGE_CONFLICT', `entry ${id} is already superseded`);
  await missed(q, id);
}

/** Forward only: GREATEST keeps a later expiry; a never-expiring row (NULL) is left alone. */
export async function extendExpiry(
  q: Queryable,
  id: string,
  newExpiresAtNs: bigint,
): Promise<bigint | undefined> {
  const { rows } = await q.query(
    'UPDATE entries SET expires_ns = GREATEST(expires_ns, $2::bigint) WHERE id = $1 AND expires_ns IS NOT NULL RETURNING expires_ns',
    [id, bigIn(newExpiresAtNs)],
  );
  if (rows.length > 0) return bigOut(rows[0]!.expires_ns);
  const seen = await q.query('SELECT expires_ns FROM entries WHERE id = $1', [id]);
  if (seen.rows.length > 0 && seen.rows[0]!.expires_ns === null) return undefined;
  return missed(q, id);
}

/** Accumulates `$n` parameters and WHERE clauses. */
export class Where {
  readonly params: unknown[] = [];
  readonly clauses: string[] = [];
  param(v: unknown): string {
    this.params.push(v);
    return `$${this.params.length}`;
  }
  add(clause: string): this {
    this.clauses.push(clause);
    return this;
  }
  sql(): string {
    return this.clauses.length === 0 ? 'true' : this.clauses.join(' AND ');
  }
}

/** Clauses for "live": not deleted, not superseded and (given a now) unexpired. */
export function live(
  w: Where,
  opts: { includeDeleted?: boolean; includeSuperseded?: boolean; nowNs?: bigint },
): Where {
  if (opts.includeDeleted !== true) w.add('NOT deleted');
  if (opts.includeSuperseded !== true) w.add('superseded_by IS NULL');
  if (opts.nowNs !== undefined)
    w.add(`(expires_ns IS NULL OR expires_ns > ${w.param(bigIn(opts.nowNs))}::bigint)`);
  return w;
}

export async function listEntriesFor(
  q: Queryable,
  f: SqlFeatures,
  opts: {
    limit: number;
    offset?: number;
    includeDeleted?: boolean;
    includeSuperseded?: boolean;
    nowNs?: bigint;
    owner?: string;
    filter?: EntryFilter;
  },
): Promise<StoredEntry[]> {
  const w = live(new Where(), opts);
  if (opts.owner !== undefined) w.add(`owner = ${w.param(opts.owner)}`);
  if (opts.filter !== undefined) w.add(filterSql(opts.filter, w));
  const lim = w.param(opts.limit);
  const off = w.param(opts.offset ?? 0);
  const { rows } = await q.query(
    `SELECT ${entryCols(f)} FROM entries WHERE ${w.sql()} ORDER BY leaf_index, id LIMIT ${lim} OFFSET ${off}`,
    w.params,
  );
  return rows.map(entryOut);
}

export async function findEntriesBy(
  q: Queryable,
  f: SqlFeatures,
  opts: { uri?: string; srcHash?: string; memoryId?: string; includeDeleted?: boolean },
): Promise<StoredEntry[]> {
  const w = live(new Where(), {
    includeDeleted: opts.includeDeleted ?? false,
    includeSuperseded: true,
  });
  if (opts.uri !== undefined) w.add(`uri = ${w.param(opts.uri)}`);
  if (opts.srcHash !== undefined) w.add(`src_hash = ${w.param(opts.srcHash)}`);
  if (opts.memoryId !== undefined) {
    // A row written before memory ids were stored is its own memory (ADR 0049).
    const m = w.param(opts.memoryId);
    w.add(`(memory_id = ${m} OR (memory_id IS NULL AND id = ${m}))`);
  }
  const { rows } = await q.query(
    `SELECT ${entryCols(f)} FROM entries WHERE ${w.sql()} ORDER BY leaf_index, id`,
    w.params,
  );
  return rows.map(entryOut);
}

export async function countEntries(q: Queryable, opts?: { nowNs?: bigint }): Promise<TierCount[]> {
  const w = live(new Where(), opts?.nowNs === undefined ? {} : { nowNs: opts.nowNs });
  const { rows } = await q.query(
    `SELECT tier, count(*) AS n FROM entries WHERE ${w.sql()} GROUP BY tier`,
    w.params,
  );
  return rows
    .map((r) => ({ tier: strOut(r.tier) as SourceTier, count: numOut(r.n) }))
    .sort((a, b) => SourceTiers.indexOf(a.tier) - SourceTiers.indexOf(b.tier));
}

/** `translate` of ASCII capitals to lower case: the same folding on every backend and locale. */
const ASCII_LOWER = (x: string): string =>
  `translate(${x}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`;

/** An entry's state (`EntryStatus`) as SQL, given the `now` parameter. */
const STATUS_SQL = (now: string): string =>
  `CASE WHEN deleted THEN 'deleted' WHEN superseded_by IS NOT NULL THEN 'superseded'
     WHEN expires_ns IS NOT NULL AND expires_ns <= ${now}::bigint THEN 'expired' ELSE 'live' END`;

/**
 * One page of matching rows, newest first (`browseEntries`): every filter is a WHERE clause, the
 * keyset is `leaf_index < before`, and the order walks `entries_leaf_idx` (or, with an owner,
 * `entries_owner_idx`) backwards, so a page costs its rows plus the rows the filters skip.
 */
export async function browseEntries(
  q: Queryable,
  f: SqlFeatures,
  b: BrowseQuery,
): Promise<StoredEntry[]> {
  const w = new Where();
  if (b.beforeLeafIndex !== undefined) w.add(`leaf_index < ${w.param(b.beforeLeafIndex)}`);
  if (b.owner !== undefined) w.add(`owner = ${w.param(b.owner)}`);
  if (b.tiers !== undefined) w.add(`tier = ANY(${w.param([...b.tiers])}::text[])`);
  if (b.kinds !== undefined) w.add(`kind = ANY(${w.param([...b.kinds])}::text[])`);
  if (b.uri !== undefined) w.add(`uri = ${w.param(b.uri)}`);
  if (b.createdFromNs !== undefined)
    w.add(`created_ns >= ${w.param(bigIn(b.createdFromNs))}::bigint`);
  if (b.createdBeforeNs !== undefined)
    w.add(`created_ns < ${w.param(bigIn(b.createdBeforeNs))}::bigint`);
  if (b.text !== undefined)
    w.add(`strpos(${ASCII_LOWER('content')}, ${ASCII_LOWER(`${w.param(b.text)}::text`)}) > 0`);
  if (b.statuses !== undefined)
    w.add(`(${STATUS_SQL(w.param(bigIn(b.nowNs)))}) = ANY(${w.param([...b.statuses])}::text[])`);
  const lim = w.param(b.limit);
  const { rows } = await q.query(
    `SELECT ${entryCols(f, '', false)} FROM entries WHERE ${w.sql()}
     ORDER BY leaf_index DESC, id DESC LIMIT ${lim}`,
    w.params,
  );
  return rows.map(entryOut);
}
