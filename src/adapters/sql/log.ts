/**
 * @module adapters/sql/log
 * Log queries (RFC 6962 leaves, subtree nodes, checkpoints). Every function runs on a
 * {@link Queryable} that is already inside a scoped transaction.
 *
 * Sequencing (ADR 0011): the single `log_head` row is the log's sequence point. The ledger's
 * commit transaction takes its row lock first (`lockLogHead`: `SELECT … FOR UPDATE`), so commit
 * transactions of every process queue on it and each appends at the size it read under the
 * lock. `appendLeaves` inserts the leaves and nodes and moves the head with
 * `UPDATE … WHERE size = start`: a caller whose `start` is stale (no lock taken, or the log
 * moved) gets `STORAGE_CONFLICT` — through the guarded update, or a unique violation on a leaf
 * or node index inserted by a concurrent appender. So processes sharing one server can never
 * fork the log.
 */
import { MemwardenError } from '../../core/errors.js';
import type { CheckpointRecord, LeafKind, LeafRecord, NodeRecord } from '../../ports/storage.js';
import { bigIn, bigOut, bytesIn, bytesOut, numOut, strOut } from './codec.js';
import { type Queryable, type Scope, scopeOwner } from './queryable.js';

/** Hex text of bytes: arrays of bytea are not portable across the two drivers, text[] is. */
const hexIn = (b: Uint8Array): string =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

const conflict = (what: string): MemwardenError => new MemwardenError('STORAGE_CONFLICT', what);

/** Number of leaves (global: the log head is not tenant data). */
export async function logSize(q: Queryable): Promise<number> {
  const { rows } = await q.query('SELECT size FROM log_head');
  return rows.length === 0 ? 0 : numOut(rows[0]!.size);
}

/** Lock the log head row until the transaction ends; the committed size. */
export async function lockLogHead(q: Queryable): Promise<number> {
  const { rows } = await q.query('SELECT size FROM log_head FOR UPDATE');
  if (rows.length === 0) throw new MemwardenError('STORAGE_FAILED', 'log head row is missing');
  return numOut(rows[0]!.size);
}

/**
 * Append leaves and nodes atomically at `start`; the head moves only from `start` (else
 * `STORAGE_CONFLICT`). Takes the head row lock at the latest at that update; the ledger takes
 * it first (`lockLogHead`).
 */
export async function appendLeaves(
  q: Queryable,
  scope: Scope,
  start: number,
  leaves: readonly LeafRecord[],
  nodes: readonly NodeRecord[],
): Promise<void> {
  if (leaves.length === 0) {
    const size = await lockLogHead(q);
    if (start !== size) throw conflict(`log append at ${start} but the log has ${size} leaves`);
    if (nodes.length > 0) throw new MemwardenError('STORAGE_FAILED', 'nodes without leaves');
    return;
  }
  checkLeafIndices(start, leaves);
  for (const st of appendStatements(scope, leaves, nodes)) await q.query(st.sql, st.params);
  const { rows } = await q.query(MOVE_HEAD_SQL, [leaves.length, start]);
  if (rows.length === 0) await headMoved(q, start);
}

/** One statement and its bound parameters. */
export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/**
 * The leaf and node inserts of an append (not the head move): one statement per table, rows
 * passed as parallel arrays (unnest) — the per-statement cost dominates a group commit of
 * hundreds of leaves, in PGlite especially. Leaf ownership follows the scope: an agent's leaves
 * are its own (RLS WITH CHECK enforces it); leaves appended by the system scope belong to no
 * principal. A node that already exists is a unique violation → STORAGE_CONFLICT.
 */
export function appendStatements(
  scope: Scope,
  leaves: readonly LeafRecord[],
  nodes: readonly NodeRecord[],
): Statement[] {
  const out: Statement[] = [
    {
      sql: `INSERT INTO log_leaves (idx, data, hash, entry_id, kind, owner)
     SELECT t.idx, decode(t.data, 'hex'), decode(t.hash, 'hex'), t.entry_id, t.kind, $6::text
       FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[])
            AS t(idx, data, hash, entry_id, kind)`,
      params: [
        leaves.map((l) => l.index),
        leaves.map((l) => hexIn(l.data)),
        leaves.map((l) => hexIn(l.hash)),
        leaves.map((l) => l.entryId),
        leaves.map((l) => l.kind),
        scopeOwner(scope),
      ],
    },
  ];
  if (nodes.length > 0) {
    out.push({
      sql: `INSERT INTO log_nodes (level, idx, hash)
       SELECT t.level, t.idx, decode(t.hash, 'hex')
         FROM unnest($1::int[], $2::bigint[], $3::text[]) AS t(level, idx, hash)`,
      params: [
        nodes.map((n) => n.level),
        nodes.map((n) => n.index),
        nodes.map((n) => hexIn(n.hash)),
      ],
    });
  }
  return out;
}

/**
 * The head move of a pipelined append ($1 leaves from exactly $2) as a statement that FAILS when
 * the head is elsewhere: the size becomes −1 and `log_head`'s CHECK (size ≥ 0) refuses it
 * (SQLSTATE 23514), aborting the transaction — so a commit sent in the same pipeline can never
 * commit leaves whose head did not move. (The step-by-step path reads the row count instead.)
 */
export const MOVE_HEAD_OR_FAIL_SQL =
  'UPDATE log_head SET size = CASE WHEN size = $2::bigint THEN size + $1::bigint ELSE -1 END RETURNING size';

/** Moves the log head by $1 leaves from exactly $2 (no row back: it had moved). */
export const MOVE_HEAD_SQL =
  'UPDATE log_head SET size = size + $1::bigint WHERE size = $2::bigint RETURNING size';

/** Leaves must carry the indices `start`, `start+1`, … */
export function checkLeafIndices(start: number, leaves: readonly LeafRecord[]): void {
  leaves.forEach((l, i) => {
    if (l.index !== start + i)
      throw new MemwardenError('STORAGE_FAILED', 'leaf indices must be consecutive');
  });
}

/** {@link MOVE_HEAD_SQL} found the head elsewhere than `start`: the append's conflict. */
export async function headMoved(q: Queryable, start: number): Promise<never> {
  const size = await lockLogHead(q);
  throw conflict(`log append at ${start} but the log has ${size} leaves`);
}

function leafOut(r: Record<string, unknown>): LeafRecord {
  const kind = strOut(r.kind);
  if (kind !== 'entry' && kind !== 'tombstone' && kind !== 'registry')
    throw new MemwardenError('STORAGE_FAILED', 'bad leaf kind');
  return {
    index: numOut(r.idx),
    data: bytesOut(r.data),
    hash: bytesOut(r.hash),
    entryId: strOut(r.entry_id),
    kind,
  };
}

const LEAF_COLS = 'idx, data, hash, entry_id, kind';

export async function getLeaf(q: Queryable, index: number): Promise<LeafRecord | undefined> {
  const { rows } = await q.query(`SELECT ${LEAF_COLS} FROM log_leaves WHERE idx = $1`, [index]);
  return rows.length === 0 ? undefined : leafOut(rows[0]!);
}

/** Leaves in [start, end) visible in this scope, in index order. */
export async function getLeaves(q: Queryable, start: number, end: number): Promise<LeafRecord[]> {
  if (end <= start) return [];
  const { rows } = await q.query(
    `SELECT ${LEAF_COLS} FROM log_leaves WHERE idx >= $1 AND idx < $2 ORDER BY idx`,
    [Math.max(0, start), end],
  );
  return rows.map(leafOut);
}

/** Leaves of one kind in [start, end), in index order (partial indices of migration 10). */
export async function getLeavesOfKind(
  q: Queryable,
  kind: LeafKind,
  start: number,
  end: number,
): Promise<LeafRecord[]> {
  if (end <= start) return [];
  const { rows } = await q.query(
    `SELECT ${LEAF_COLS} FROM log_leaves WHERE kind = $1 AND idx >= $2 AND idx < $3 ORDER BY idx`,
    [kind, Math.max(0, start), end],
  );
  return rows.map(leafOut);
}

/** Hashes of the leaves in [start, end) visible in this scope, concatenated in index order. */
export async function getLeafHashes(q: Queryable, start: number, end: number): Promise<Uint8Array> {
  if (end <= start) return new Uint8Array(0);
  // One row holding one bytea: 100k rows of 32 bytes cost PGlite ~10× more as separate rows.
  const { rows } = await q.query(
    "SELECT string_agg(hash, ''::bytea ORDER BY idx) AS h FROM log_leaves WHERE idx >= $1 AND idx < $2",
    [Math.max(0, start), end],
  );
  const h = rows[0]?.h;
  return h === null || h === undefined ? new Uint8Array(0) : bytesOut(h);
}

export async function getNodes(
  q: Queryable,
  refs: readonly { level: number; index: number }[],
): Promise<(Uint8Array | undefined)[]> {
  if (refs.length === 0) return [];
  const { rows } = await q.query(
    'SELECT n.level, n.idx, n.hash FROM log_nodes n JOIN unnest($1::int[], $2::bigint[]) AS r(level, idx) ON n.level = r.level AND n.idx = r.idx',
    [refs.map((r) => r.level), refs.map((r) => r.index)],
  );
  const found = new Map<string, Uint8Array>();
  for (const r of rows) found.set(`${numOut(r.level)}:${numOut(r.idx)}`, bytesOut(r.hash));
  return refs.map((r) => {
    const h = found.get(`${r.level}:${r.index}`);
    return h === undefined ? undefined : h.slice();
  });
}

/** The entry leaf (not a tombstone) committing `entryId`. */
export async function findLeafIndex(q: Queryable, entryId: string): Promise<number | undefined> {
  const { rows } = await q.query(
    "SELECT idx FROM log_leaves WHERE entry_id = $1 AND kind = 'entry' ORDER BY idx LIMIT 1",
    [entryId],
  );
  return rows.length === 0 ? undefined : numOut(rows[0]!.idx);
}

export async function putCheckpoint(q: Queryable, cp: CheckpointRecord): Promise<void> {
  // The log never shrinks, so reading the size without a lock is safe for this bound.
  if (cp.size > (await logSize(q)))
    throw new MemwardenError('LOG_SIZE_INVALID', 'checkpoint beyond the log');
  // An existing size is a unique violation → STORAGE_CONFLICT: checkpoints are never replaced.
  await q.query('INSERT INTO checkpoints (size, root, note, created_ns) VALUES ($1, $2, $3, $4)', [
    cp.size,
    bytesIn(cp.root),
    cp.note,
    bigIn(cp.createdAtNs),
  ]);
}

function checkpointOut(r: Record<string, unknown>): CheckpointRecord {
  return {
    size: numOut(r.size),
    root: bytesOut(r.root),
    note: strOut(r.note),
    createdAtNs: bigOut(r.created_ns),
  };
}

export async function latestCheckpoint(q: Queryable): Promise<CheckpointRecord | undefined> {
  const { rows } = await q.query(
    'SELECT size, root, note, created_ns FROM checkpoints ORDER BY size DESC LIMIT 1',
  );
  return rows.length === 0 ? undefined : checkpointOut(rows[0]!);
}

export async function getCheckpoint(
  q: Queryable,
  size: number,
): Promise<CheckpointRecord | undefined> {
  const { rows } = await q.query(
    'SELECT size, root, note, created_ns FROM checkpoints WHERE size = $1',
    [size],
  );
  return rows.length === 0 ? undefined : checkpointOut(rows[0]!);
}

/** Every checkpoint, smallest size first. */
export async function listCheckpoints(q: Queryable): Promise<CheckpointRecord[]> {
  const { rows } = await q.query(
    'SELECT size, root, note, created_ns FROM checkpoints ORDER BY size',
  );
  return rows.map(checkpointOut);
}
