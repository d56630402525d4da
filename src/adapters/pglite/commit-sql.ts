/**
 * @module adapters/pglite/commit-sql
 * The group commit's statements on PGlite with binary parameters (`./binary-params.js`): the
 * scope switch, the log append (leaves, nodes and the guarded head move in ONE round trip) and
 * the entries insert — each the same SQL semantics as the shared dialect (`../sql/log.js`,
 * `../sql/entries.js`), with the values bound in their send formats instead of as text.
 *
 * Entries: one `INSERT INTO entries … SELECT * FROM unnest(<15 binary arrays>)` in the
 * transaction's scope role, so every row-level-security `WITH CHECK`, unique key and constraint
 * applies to it exactly as to the shared multi-row INSERT; pgvector's `vector_recv` gets raw
 * float4s (no `strtof` per value). It replaces a binary COPY into a session temp table (COPY
 * is refused on RLS tables, so that path ran `RESET ROLE`, `TRUNCATE`, COPY, a second scope
 * switch and `INSERT … SELECT`): measured per batch of 16 on PGlite 0.5.14, ~3.4 ms → ~1.7 ms
 * of CPU including BEGIN and COMMIT (ADR 0024).
 */
import type { PgliteDb, RowExpectation } from './db.js';
import type { DataOp } from './staged.js';
import { MemwardenError } from '../../core/errors.js';
import type { LeafRecord, NodeRecord, StoredEntry } from '../../ports/storage.js';
import { checkEmbedding } from '../sql/rank.js';
import { tokenize } from '../../core/text/index.js';
import { type Scope, ENTER_SCOPE_SQL, scopeOwner, scopeParams } from '../sql/queryable.js';
import { MOVE_HEAD_SQL, checkLeafIndices } from '../sql/log.js';
import { QUOTA_UPSERT_SQL, type QuotaUpsertArgs, fastQuotaUpsert } from '../sql/records.js';
import {
  type BinaryStatement,
  type StatementResult,
  arrayParam,
  byteaArray,
  int4Array,
  int8Array,
  int4ArrayOpt,
  int8Param,
  jsonbArray,
  runPipeline,
  textArray,
  textParam,
  vectorSend,
} from './binary-params.js';

/** The statement entering `scope` for the rest of the transaction (`../sql/queryable.js`). */
export function enterScopeStatement(scope: Scope): BinaryStatement {
  const [role, principal] = scopeParams(scope);
  return { sql: ENTER_SCOPE_SQL, params: [textParam(role), textParam(principal)] };
}

/** Enter `scope` for the rest of the current transaction (`../sql/queryable.js` `enterScope`). */
export async function enterScopeBinary(db: PgliteDb, scope: Scope): Promise<void> {
  await runPipeline(db, [enterScopeStatement(scope)]);
}

/** The new-entry columns, in the order of {@link putEntriesStatement}'s arrays. */
const ENTRY_COLS =
  'id, owner, tier, bytes, leaf_index, mac_kid, mac, writer, kind, created_ns, expires_ns, content, uri, src_hash, embedding_vec, memory_id, event_ns, metadata, run_id, agent_id, lex_len';

const PUT_ENTRIES_SQL = `INSERT INTO entries (${ENTRY_COLS})
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::bigint[], $6::text[],
    $7::bytea[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::text[], $13::text[],
    $14::text[], $15::vector[], $16::text[], $17::bigint[], $18::jsonb[], $19::text[], $20::text[], $21::int[])`;

/** The entries insert; `vectorOid`: the OID of pgvector's `vector` type in this database. */
export function putEntriesStatement(
  es: readonly StoredEntry[],
  vectorOid: number,
): BinaryStatement {
  return {
    sql: PUT_ENTRIES_SQL,
    params: [
      textArray(es.map((e) => e.id)),
      textArray(es.map((e) => e.owner)),
      textArray(es.map((e) => e.tier)),
      byteaArray(es.map((e) => e.bytes)),
      int8Array(es.map((e) => e.leafIndex)),
      textArray(es.map((e) => e.macKid)),
      byteaArray(es.map((e) => e.mac)),
      textArray(es.map((e) => e.writer)),
      textArray(es.map((e) => e.kind)),
      int8Array(es.map((e) => e.createdAtNs)),
      int8Array(es.map((e) => e.expiresAtNs)),
      textArray(es.map((e) => e.content)),
      textArray(es.map((e) => e.uri)),
      textArray(es.map((e) => e.srcHash)),
      arrayParam(
        vectorOid,
        es.map((e) => (e.embedding === undefined ? null : vectorSend(checkEmbedding(e.embedding)))),
      ),
      textArray(es.map((e) => e.memoryId)),
      int8Array(es.map((e) => e.eventAtNs)),
      jsonbArray(
        es.map((e) => (e.metadata === undefined ? undefined : JSON.stringify(e.metadata))),
      ),
      textArray(es.map((e) => e.runId)),
      textArray(es.map((e) => e.agentId)),
      int4ArrayOpt(
        es.map((e) => (e.content === undefined ? undefined : tokenize(e.content).length)),
      ),
    ],
  };
}

export async function putEntriesBinary(
  db: PgliteDb,
  es: readonly StoredEntry[],
  vectorOid: number,
): Promise<void> {
  if (es.length === 0) return;
  await runPipeline(db, [putEntriesStatement(es, vectorOid)]);
}

const LEAVES_SQL = `INSERT INTO log_leaves (idx, data, hash, entry_id, kind, owner)
  SELECT t.idx, t.data, t.hash, t.entry_id, t.kind, $6::text
    FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::text[], $5::text[])
         AS t(idx, data, hash, entry_id, kind)`;

const NODES_SQL = `INSERT INTO log_nodes (level, idx, hash)
  SELECT t.level, t.idx, t.hash FROM unnest($1::int[], $2::bigint[], $3::bytea[]) AS t(level, idx, hash)`;

/**
 * `../sql/log.js` `appendLeaves` for a non-empty append, in one round trip: the leaves (owned
 * by the scope's principal, RLS `WITH CHECK` as there), the nodes (an existing one is a unique
 * violation) and the head move guarded by `WHERE size = start`. Returns whether the head moved
 * (false: it was not at `start`; the caller reports the conflict and the transaction must not
 * commit).
 */
export async function appendLeavesBinary(
  db: PgliteDb,
  scope: Scope,
  start: number,
  leaves: readonly LeafRecord[],
  nodes: readonly NodeRecord[],
): Promise<boolean> {
  const statements = appendLeavesStatements(scope, start, leaves, nodes);
  const results: StatementResult[] = await runPipeline(db, statements);
  return results[results.length - 1]!.rows.length === 1;
}

/**
 * {@link appendLeavesBinary}'s statements (a non-empty append): the leaves, the nodes if any,
 * and last the guarded head move, which returns one row iff the head was at `start`.
 */
export function appendLeavesStatements(
  scope: Scope,
  start: number,
  leaves: readonly LeafRecord[],
  nodes: readonly NodeRecord[],
): BinaryStatement[] {
  checkLeafIndices(start, leaves);
  const owner = scopeOwner(scope);
  const statements: BinaryStatement[] = [
    {
      sql: LEAVES_SQL,
      params: [
        int8Array(leaves.map((l) => l.index)),
        byteaArray(leaves.map((l) => l.data)),
        byteaArray(leaves.map((l) => l.hash)),
        textArray(leaves.map((l) => l.entryId)),
        textArray(leaves.map((l) => l.kind)),
        owner === null ? null : textParam(owner),
      ],
    },
  ];
  if (nodes.length > 0) {
    statements.push({
      sql: NODES_SQL,
      params: [
        int4Array(nodes.map((n) => n.level)),
        int8Array(nodes.map((n) => n.index)),
        byteaArray(nodes.map((n) => n.hash)),
      ],
    });
  }
  statements.push({ sql: MOVE_HEAD_SQL, params: [int8Param(leaves.length), int8Param(start)] });
  return statements;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const textOut = (f: Uint8Array | null): string => {
  if (f === null) throw new MemwardenError('STORAGE_FAILED', 'unexpected NULL in a quota row');
  return utf8.decode(f);
};

/** {@link QUOTA_UPSERT_SQL} with binary parameters: one row back per group it counted. */
export function quotaUpsertStatement(a: QuotaUpsertArgs): BinaryStatement {
  return {
    sql: QUOTA_UPSERT_SQL,
    params: [
      textArray(a.principals),
      textArray(a.tiers),
      textArray(a.days),
      int4Array(a.counts),
      textArray(a.limitTiers),
      int4Array(a.limits),
    ],
  };
}

/** `../sql/records.js` {@link QUOTA_UPSERT_SQL} in one round trip: the rows it counted. */
export async function quotaUpsertBinary(
  db: PgliteDb,
  a: QuotaUpsertArgs,
): Promise<{ principal: string; tier: string; day: string }[]> {
  const [r] = await runPipeline(db, [quotaUpsertStatement(a)]);
  return r!.rows.map((row) => ({
    principal: textOut(row[0] ?? null),
    tier: textOut(row[1] ?? null),
    day: textOut(row[2] ?? null),
  }));
}

/** A row-count expectation of a commit pipeline; `headFrom`: it is the head move from there. */
export interface CommitExpectation extends RowExpectation {
  readonly headFrom?: number;
}

/** A commit as one pipeline: its statements (the scope switch first) and what must hold. */
export interface CommitPlan {
  readonly statements: readonly BinaryStatement[];
  readonly expect: readonly CommitExpectation[];
}

/**
 * The statements that replay `ops` in `scope` exactly as the statement-by-statement commit
 * (`./staged.ts` `commit` on `./backend.ts`'s `CommitView`) would, with the checks it makes
 * between them turned into row-count expectations: the head move returns its one row, the
 * quota upsert one row per group (ADR 0028). Undefined when a step needs more than one fixed
 * statement (an empty append; a quota replay that staging did not admit in full or that the
 * one upsert cannot settle) — the caller then commits step by step.
 */
export function commitPlan(
  scope: Scope,
  ops: readonly DataOp[],
  vectorOid: number,
): CommitPlan | undefined {
  const statements: BinaryStatement[] = [enterScopeStatement(scope)];
  const expect: CommitExpectation[] = [];
  let puts: StoredEntry[] = [];
  const flush = (): void => {
    if (puts.length > 0) statements.push(putEntriesStatement(puts, vectorOid));
    puts = [];
  };
  for (const op of ops) {
    if ('put' in op) {
      puts.push(op.put);
      continue;
    }
    flush();
    if ('append' in op) {
      const { start, leaves, nodes } = op.append;
      if (leaves.length === 0) return undefined;
      statements.push(...appendLeavesStatements(scope, start, leaves, nodes));
      expect.push({ statement: statements.length - 1, rows: 1, headFrom: start });
    } else {
      const args = op.expected.every((ok) => ok) ? fastQuotaUpsert(op.quotas) : undefined;
      if (args === undefined) return undefined;
      statements.push(quotaUpsertStatement(args));
      expect.push({ statement: statements.length - 1, rows: args.principals.length });
    }
  }
  flush();
  return { statements, expect };
}
