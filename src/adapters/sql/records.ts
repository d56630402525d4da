/**
 * @module adapters/sql/records
 * Write quotas, the review queue, audit events and API keys. Isolation is the database's:
 * quotas and review items are per-principal rows under row-level security, audit events are
 * owned by the scope that appended them (NULL = system), and `api_keys` is granted to the
 * system role only, so a principal view's query fails with 42501 → `STORAGE_FAILED`/denied.
 */
import { MemwardenError } from '../../core/errors.js';
import { type SourceTier, SourceTiers } from '../../core/trust.js';
import type { AuditEvent, AuditQuery, JsonValue, ReviewDecision, ReviewRecord } from '../../ports/storage.js';
import { bigIn, bigOut, bigOutOpt, bytesIn, bytesOut, numOut, strOut } from './codec.js';
import { type Queryable, type Scope, scopeOwner } from './queryable.js';

// ---- quotas ---------------------------------------------------------------------------------

/**
 * One atomic statement: insert the first count, or add one while under the limit. Under
 * concurrency the row lock serialises the increments and READ COMMITTED re-checks the WHERE
 * against the latest count, so at most `limit` calls ever succeed.
 */
export async function consumeQuota(
  q: Queryable,
  principal: string,
  tier: SourceTier,
  day: string,
  limit: number,
): Promise<{ ok: boolean; used: number }> {
  if (limit >= 1) {
    const { rows } = await q.query(
      `INSERT INTO write_quotas AS w (principal, tier, day, count) VALUES ($1, $2, $3, 1)
       ON CONFLICT (principal, tier, day) DO UPDATE SET count = w.count + 1 WHERE w.count < $4
       RETURNING count`,
      [principal, tier, day, limit],
    );
    if (rows.length > 0) return { ok: true, used: numOut(rows[0]!.count) };
  }
  return { ok: false, used: await quotaUsed(q, principal, tier, day) };
}

export async function quotaUsed(
  q: Queryable,
  principal: string,
  tier: SourceTier,
  day: string,
): Promise<number> {
  const { rows } = await q.query(
    'SELECT count FROM write_quotas WHERE principal = $1 AND tier = $2 AND day = $3',
    [principal, tier, day],
  );
  return rows.length === 0 ? 0 : numOut(rows[0]!.count);
}

// ---- review queue ---------------------------------------------------------------------------

const REVIEW_COLS =
  'id, owner, tier, content, reasons, payload, status, created_ns, decided_ns, decided_by, memory_id';

export async function enqueueReview(
  q: Queryable,
  r: Omit<ReviewRecord, 'status' | 'decidedBy' | 'decidedAtNs' | 'memoryId'>,
): Promise<void> {
  await q.query(
    `INSERT INTO review_queue (id, owner, tier, content, reasons, payload, created_ns)
     VALUES ($1, $2, $3, $4, $5::text[], $6, $7)`,
    [
      r.id,
      r.principal,
      r.tier,
      r.content,
      [...r.reasons],
      bytesIn(r.payload),
      bigIn(r.createdAtNs),
    ],
  );
}

function reviewOut(r: Record<string, unknown>): ReviewRecord {
  const tier = strOut(r.tier);
  const status = strOut(r.status);
  if (
    !(SourceTiers as readonly string[]).includes(tier) ||
    !['pending', 'approved', 'rejected'].includes(status)
  )
    throw new MemwardenError('STORAGE_FAILED', 'bad review row');
  const out: Record<string, unknown> = {
    id: strOut(r.id),
    principal: strOut(r.owner),
    tier,
    content: strOut(r.content),
    reasons: (r.reasons as unknown[]).map(strOut),
    payload: bytesOut(r.payload),
    createdAtNs: bigOut(r.created_ns),
    status,
  };
  if (r.decided_by !== null) out.decidedBy = strOut(r.decided_by);
  const at = bigOutOpt(r.decided_ns);
  if (at !== undefined) out.decidedAtNs = at;
  if (r.memory_id !== null) out.memoryId = strOut(r.memory_id);
  return out as unknown as ReviewRecord;
}

export async function listReviews(
  q: Queryable,
  opts?: { status?: ReviewRecord['status']; limit?: number },
): Promise<ReviewRecord[]> {
  const { rows } = await q.query(
    `SELECT ${REVIEW_COLS} FROM review_queue WHERE ($1::text IS NULL OR status = $1)
      ORDER BY created_ns, id LIMIT $2`,
    [opts?.status ?? null, opts?.limit ?? null],
  );
  return rows.map(reviewOut);
}

export async function getReview(q: Queryable, id: string): Promise<ReviewRecord | undefined> {
  const { rows } = await q.query(`SELECT ${REVIEW_COLS} FROM review_queue WHERE id = $1`, [id]);
  return rows.length === 0 ? undefined : reviewOut(rows[0]!);
}

/** pending → decided, once (the WHERE re-checks under the row lock). */
export async function decideReview(
  q: Queryable,
  id: string,
  d: ReviewDecision,
): Promise<ReviewRecord> {
  const { rows } = await q.query(
    `UPDATE review_queue SET status = $2, decided_by = $3, decided_ns = $4, memory_id = $5
      WHERE id = $1 AND status = 'pending' RETURNING ${REVIEW_COLS}`,
    [id, d.status, d.decidedBy, bigIn(d.decidedAtNs), d.memoryId ?? null],
  );
  if (rows.length > 0) return reviewOut(rows[0]!);
  const current = await getReview(q, id);
  if (current === undefined)
    throw new MemwardenError('STORAGE_NOT_FOUND', `review ${id} not found`);
  throw new MemwardenError('STORAGE_CONFLICT', `review ${id} is already ${current.status}`);
}

// ---- audit events ---------------------------------------------------------------------------

/** Details travel as JSON text (exactly as given, no key reordering as jsonb would do). */
export async function appendAudit(q: Queryable, scope: Scope, e: AuditEvent): Promise<void> {
  await q.query(
    `INSERT INTO audit_events (id, owner, at_ns, actor, action, subject, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [e.id, scopeOwner(scope), bigIn(e.atNs), e.actor, e.action, e.subject ?? null, auditDetails(e)],
  );
}

/**
 * Several events in one statement (unnest of parallel arrays): one parse / plan / round trip
 * instead of one per event — on PGlite a single-row insert costs ~0.25 ms, most of it per
 * statement. Order of `es` is the insertion (and `seq`) order.
 */
export async function appendAudits(q: Queryable, scope: Scope, es: readonly AuditEvent[]): Promise<void> {
  if (es.length === 0) return;
  const details = es.map(auditDetails);
  const owner = scopeOwner(scope);
  await q.query(
    `INSERT INTO audit_events (id, owner, at_ns, actor, action, subject, details)
     SELECT id, $2, at_ns, actor, action, subject, details
       FROM unnest($1::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])
            WITH ORDINALITY AS t(id, at_ns, actor, action, subject, details, n)
      ORDER BY n`,
    [
      es.map((e) => e.id),
      owner,
      es.map((e) => bigIn(e.atNs)),
      es.map((e) => e.actor),
      es.map((e) => e.action),
      es.map((e) => e.subject ?? null),
      details,
    ],
  );
}

/** Serialise audit details, refusing what JSON cannot carry faithfully. */
export function auditDetails(e: AuditEvent): string {
  try {
    const s = JSON.stringify(e.details);
    if (
      typeof s !== 'string' ||
      typeof e.details !== 'object' ||
      e.details === null ||
      Array.isArray(e.details)
    )
      throw new TypeError('not an object');
    return s;
  } catch (cause) {
    throw new MemwardenError('INPUT_INVALID', 'audit details must be a JSON object', { cause });
  }
}

export async function listAudit(
  q: Queryable,
  opts: AuditQuery,
): Promise<AuditEvent[]> {
  // The prefix is compared with left(), not LIKE: '%' and '_' in it stay literal.
  const order = opts.newestFirst === true ? 'at_ns DESC, seq DESC' : 'at_ns, seq';
  const { rows } = await q.query(
    `SELECT id, at_ns, actor, action, subject, details FROM audit_events
      WHERE ($1::bigint IS NULL OR at_ns > $1::bigint) AND ($2::text IS NULL OR subject = $2)
        AND ($4::text IS NULL OR actor = $4)
        AND ($5::text IS NULL OR left(action, char_length($5::text)) = $5::text)
      ORDER BY ${order} LIMIT $3`,
    [
      bigIn(opts.afterNs),
      opts.subject ?? null,
      opts.limit,
      opts.actor ?? null,
      opts.actionPrefix ?? null,
    ],
  );
  return rows.map((r) => {
    const out: Record<string, unknown> = {
      id: strOut(r.id),
      atNs: bigOut(r.at_ns),
      actor: strOut(r.actor),
      action: strOut(r.action),
      details: JSON.parse(strOut(r.details)) as { [k: string]: JsonValue },
    };
    if (r.subject !== null) out.subject = strOut(r.subject);
    return out as unknown as AuditEvent;
  });
}

// ---- API keys -------------------------------------------------------------------------------

export function checkKeyHash(h: Uint8Array): Uint8Array {
  if (!(h instanceof Uint8Array) || h.length !== 32)
    throw new MemwardenError('INPUT_INVALID', 'an API key hash is 32 bytes (SHA-256)');
  return h;
}

export async function putApiKey(
  q: Queryable,
  k: { principalId: string; keyHash: Uint8Array; createdAtNs: bigint },
): Promise<void> {
  await q.query('INSERT INTO api_keys (key_hash, principal, created_ns) VALUES ($1, $2, $3)', [
    bytesIn(checkKeyHash(k.keyHash)),
    k.principalId,
    bigIn(k.createdAtNs),
  ]);
}

export async function findApiKey(q: Queryable, keyHash: Uint8Array): Promise<string | undefined> {
  const { rows } = await q.query(
    'SELECT principal FROM api_keys WHERE key_hash = $1 AND NOT revoked',
    [bytesIn(checkKeyHash(keyHash))],
  );
  return rows.length === 0 ? undefined : strOut(rows[0]!.principal);
}

export async function revokeApiKey(q: Queryable, keyHash: Uint8Array): Promise<void> {
  const { rows } = await q.query(
    'UPDATE api_keys SET revoked = true WHERE key_hash = $1 RETURNING 1',
    [bytesIn(checkKeyHash(keyHash))],
  );
  if (rows.length === 0) throw new MemwardenError('STORAGE_NOT_FOUND', 'API key not found');
}
