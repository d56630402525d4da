/**
 * @module adapters/sql/records
 * Write quotas, the review queue, audit events and API keys. Isolation is the database's:
 * quotas and review items are per-principal rows under row-level security, audit events are
 * owned by the scope that appended them (NULL = system), and `api_keys` is granted to the
 * system role only, so a principal view's query fails with 42501 → `STORAGE_FAILED`/denied.
 */
import { MemwardenError } from '../../core/errors.js';
import { type SourceTier, SourceTiers } from '../../core/trust.js';
import type {
  AuditEvent,
  AuditQuery,
  JsonValue,
  QuotaDemand,
  ReviewDecision,
  ReviewRecord,
  StoredApiKey,
} from '../../ports/storage.js';
import { bigIn, bigOut, bigOutOpt, bytesIn, bytesOut, numOut, strOut } from './codec.js';
import { deniedError } from './entries.js';
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

/** The key of a quota row. */
export const quotaKey = (principal: string, tier: string, day: string): string =>
  `${principal}\u0000${tier}\u0000${day}`;

/** One (principal, tier, day) row's share of a batch of demands. */
interface QuotaGroup {
  readonly principal: string;
  readonly tier: SourceTier;
  readonly day: string;
  /** Positions of its demands in the batch, in order. */
  readonly at: number[];
  /** Their limits (usually all equal: one deployment, one limit per tier). */
  readonly limits: number[];
}

/**
 * Group demands by quota row, ordered by key: every batch locks its rows in the same order, so
 * two batches sharing rows never deadlock.
 */
export function groupDemands(demands: readonly QuotaDemand[]): QuotaGroup[] {
  const groups = new Map<string, QuotaGroup>();
  demands.forEach((d, i) => {
    const k = quotaKey(d.principal, d.tier, d.dayKey);
    let g = groups.get(k);
    if (g === undefined) {
      g = { principal: d.principal, tier: d.tier, day: d.dayKey, at: [], limits: [] };
      groups.set(k, g);
    }
    g.at.push(i);
    g.limits.push(d.limit);
  });
  return [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
}

/**
 * The port's rule for one group, given the count already used: each demand in order is admitted
 * iff fewer than its limit are counted so far. Writes the verdicts into `out`; returns the new
 * count.
 */
export function admitInOrder(g: QuotaGroup, used: number, out: boolean[]): number {
  let n = used;
  g.at.forEach((i, j) => {
    const ok = n < (g.limits[j] as number);
    out[i] = ok;
    if (ok) n++;
  });
  return n;
}

/** Validate a batch of demands (bad input changes nothing). */
export function checkDemands(demands: readonly QuotaDemand[]): void {
  for (const d of demands) {
    if (
      typeof d.principal !== 'string' ||
      d.principal.length === 0 ||
      !(SourceTiers as readonly string[]).includes(d.tier) ||
      typeof d.dayKey !== 'string' ||
      d.dayKey.length === 0 ||
      !Number.isSafeInteger(d.limit)
    )
      throw new MemwardenError('INPUT_INVALID', 'malformed quota demand');
  }
}

/**
 * How {@link consumeQuotas} splits a batch: the groups for its one upsert (`fast`, with the
 * statement's arguments, or none), and the groups settled under row locks (`slow`). Groups
 * whose every limit is below 1 are in neither (nothing can be admitted).
 */
function planQuotas(demands: readonly QuotaDemand[]): {
  fast: QuotaGroup[];
  slow: QuotaGroup[];
  args: QuotaUpsertArgs | undefined;
  skipped: number;
} {
  let skipped = 0;
  const fast: QuotaGroup[] = [];
  const slow: QuotaGroup[] = [];
  /** The one limit of each tier in the fast statement (a deployment has one per tier). */
  const tierLimit = new Map<string, number>();
  for (const g of groupDemands(demands)) {
    const lim = g.limits[0] as number;
    if (g.limits.every((l) => l < 1)) {
      skipped++; // nothing can be admitted: nothing to count
      continue;
    }
    const uniform = g.limits.every((l) => l === lim) && (tierLimit.get(g.tier) ?? lim) === lim;
    if (uniform && g.at.length <= lim) {
      tierLimit.set(g.tier, lim);
      fast.push(g);
    } else slow.push(g);
  }
  // The conflict condition finds the row's limit by its tier in a list of at most five, so
  // the statement stays linear in the batch (a per-row lookup by key would be quadratic).
  const args: QuotaUpsertArgs | undefined =
    fast.length === 0
      ? undefined
      : {
          principals: fast.map((g) => g.principal),
          tiers: fast.map((g) => g.tier),
          days: fast.map((g) => g.day),
          counts: fast.map((g) => g.at.length),
          limitTiers: [...tierLimit.keys()],
          limits: [...tierLimit.values()],
        };
  return { fast, slow, args, skipped };
}

/**
 * The one upsert that admits ALL of `demands` — or undefined when {@link consumeQuotas} would
 * need more than that statement (a group at mixed limits, over its limit, or with nothing to
 * admit). Admitting all ⇔ the statement returns one row per argument row: a group it does not
 * count would exceed its (uniform) limit, so {@link consumeQuotas} would refuse at least one
 * of its demands. The PGlite commit pipeline (ADR 0028) uses this to run a quota replay whose
 * staged verdict was "all admitted" as one statement with a row-count expectation.
 */
export function fastQuotaUpsert(demands: readonly QuotaDemand[]): QuotaUpsertArgs | undefined {
  checkDemands(demands);
  const { slow, args, skipped } = planQuotas(demands);
  return slow.length > 0 || skipped > 0 ? undefined : args;
}

/**
 * A batch of demands in (usually) one statement (`QuotaStore.consumeQuotas`): the groups whose
 * demands share their tier's one limit and fit under it go into one multi-row upsert that adds each group's
 * count only while `count + n ≤ limit` — a new row is inserted with `n`; a conflicting row is
 * locked and either incremented or, if the whole group would exceed the limit, left as is
 * (still locked) and not returned. Those groups — at the quota boundary, or with mixed limits —
 * are then settled exactly under their row locks: read the locked count, admit in order, write
 * the new count. Under READ COMMITTED the upsert re-evaluates its condition on the latest row
 * version after waiting for a concurrent holder, so of any number of concurrent callers (any
 * process) at most `limit` writes are ever counted.
 */
export async function consumeQuotas(
  q: Queryable,
  demands: readonly QuotaDemand[],
  upsert: QuotaUpsert = textUpsert,
): Promise<boolean[]> {
  checkDemands(demands);
  const out = new Array<boolean>(demands.length).fill(false);
  const { fast, slow, args } = planQuotas(demands);
  if (args !== undefined) {
    const counted = await upsert(q, args);
    const done = new Set(counted.map((r) => quotaKey(r.principal, r.tier, r.day)));
    for (const g of fast) {
      if (done.has(quotaKey(g.principal, g.tier, g.day))) for (const i of g.at) out[i] = true;
      else slow.push(g); // exists and would exceed: locked by the upsert, settled below
    }
  }
  if (slow.length > 0) await settleLocked(q, slow, out);
  return out;
}

/**
 * {@link consumeQuotas}' one statement for the groups that fit: `$1`–`$4` the rows (principal,
 * tier, day, count to add), `$5`/`$6` each tier's one limit. Returns the rows it counted.
 */
export const QUOTA_UPSERT_SQL = `INSERT INTO write_quotas AS w (principal, tier, day, count)
  SELECT d.p, d.t, d.d, d.n FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS d(p, t, d, n)
  ON CONFLICT (principal, tier, day) DO UPDATE SET count = w.count + EXCLUDED.count
  WHERE w.count + EXCLUDED.count <= ($6::int[])[array_position($5::text[], EXCLUDED.tier)]
  RETURNING principal, tier, day`;

/** The parameters of {@link QUOTA_UPSERT_SQL}, as parallel arrays. */
export interface QuotaUpsertArgs {
  readonly principals: readonly string[];
  readonly tiers: readonly string[];
  readonly days: readonly string[];
  readonly counts: readonly number[];
  readonly limitTiers: readonly string[];
  readonly limits: readonly number[];
}

/** How a driver runs {@link QUOTA_UPSERT_SQL} (PGlite: binary parameters, one round trip). */
export type QuotaUpsert = (
  q: Queryable,
  a: QuotaUpsertArgs,
) => Promise<{ principal: string; tier: string; day: string }[]>;

const textUpsert: QuotaUpsert = async (q, a) => {
  const { rows } = await q.query(QUOTA_UPSERT_SQL, [
    a.principals,
    a.tiers,
    a.days,
    a.counts,
    a.limitTiers,
    a.limits,
  ]);
  return rows.map((r) => ({
    principal: strOut(r.principal),
    tier: strOut(r.tier),
    day: strOut(r.day),
  }));
};

/** Exact admission for `groups` under their row locks (created at 0 where missing). */
async function settleLocked(
  q: Queryable,
  unsorted: readonly QuotaGroup[],
  out: boolean[],
): Promise<void> {
  const key = (g: QuotaGroup): string => quotaKey(g.principal, g.tier, g.day);
  const groups = [...unsorted].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const keys = [
    groups.map((g) => g.principal),
    groups.map((g) => g.tier),
    groups.map((g) => g.day),
  ];
  await q.query(
    `INSERT INTO write_quotas (principal, tier, day, count)
     SELECT d.p, d.t, d.d, 0 FROM unnest($1::text[], $2::text[], $3::text[]) AS d(p, t, d)
     ON CONFLICT (principal, tier, day) DO NOTHING`,
    keys,
  );
  const { rows } = await q.query(
    `SELECT w.principal, w.tier, w.day, w.count FROM write_quotas w
       JOIN unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS d(p, t, d, o)
         ON w.principal = d.p AND w.tier = d.t AND w.day = d.d
     ORDER BY d.o
     FOR UPDATE OF w`,
    keys,
  );
  const used = new Map(
    rows.map((r) => [
      quotaKey(strOut(r.principal), strOut(r.tier), strOut(r.day)),
      numOut(r.count),
    ]),
  );
  const changed: { g: QuotaGroup; n: number }[] = [];
  for (const g of groups) {
    const before = used.get(quotaKey(g.principal, g.tier, g.day));
    // Not visible after the insert: another principal's row from a principal view (RLS).
    if (before === undefined) throw deniedError('another principal’s quota');
    const after = admitInOrder(g, before, out);
    if (after !== before) changed.push({ g, n: after });
  }
  if (changed.length === 0) return;
  await q.query(
    `UPDATE write_quotas AS w SET count = d.n
       FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS d(p, t, d, n)
      WHERE w.principal = d.p AND w.tier = d.t AND w.day = d.d`,
    [
      changed.map((c) => c.g.principal),
      changed.map((c) => c.g.tier),
      changed.map((c) => c.g.day),
      changed.map((c) => c.n),
    ],
  );
}

/** Counts of several quota rows at once (0 where none), in order. */
export async function quotasUsed(
  q: Queryable,
  keys: readonly { principal: string; tier: SourceTier; day: string }[],
): Promise<number[]> {
  if (keys.length === 0) return [];
  const { rows } = await q.query(
    `SELECT w.principal, w.tier, w.day, w.count FROM write_quotas w
       JOIN unnest($1::text[], $2::text[], $3::text[]) AS d(p, t, d)
         ON w.principal = d.p AND w.tier = d.t AND w.day = d.d`,
    [keys.map((k) => k.principal), keys.map((k) => k.tier), keys.map((k) => k.day)],
  );
  const used = new Map(
    rows.map((r) => [
      quotaKey(strOut(r.principal), strOut(r.tier), strOut(r.day)),
      numOut(r.count),
    ]),
  );
  return keys.map((k) => used.get(quotaKey(k.principal, k.tier, k.day)) ?? 0);
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
  'id, owner, tier, content, reasons, payload, status, created_ns, decided_ns, decided_by, memory_id, mac_kid, mac';

export async function enqueueReview(
  q: Queryable,
  r: Omit<ReviewRecord, 'status' | 'decidedBy' | 'decidedAtNs' | 'memoryId'>,
): Promise<void> {
  await q.query(
    `INSERT INTO review_queue (id, owner, tier, content, reasons, payload, created_ns, mac_kid, mac)
     VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8, $9)`,
    [
      r.id,
      r.principal,
      r.tier,
      r.content,
      [...r.reasons],
      bytesIn(r.payload),
      bigIn(r.createdAtNs),
      r.macKid ?? null,
      r.mac === undefined ? null : bytesIn(r.mac),
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
  if (r.mac_kid !== null && r.mac_kid !== undefined) out.macKid = strOut(r.mac_kid);
  if (r.mac !== null && r.mac !== undefined) out.mac = bytesOut(r.mac);
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
    `UPDATE review_queue SET status = $2, decided_by = $3, decided_ns = $4, memory_id = $5,
            mac_kid = COALESCE($6, mac_kid), mac = COALESCE($7, mac)
      WHERE id = $1 AND status = 'pending' RETURNING ${REVIEW_COLS}`,
    [
      id,
      d.status,
      d.decidedBy,
      bigIn(d.decidedAtNs),
      d.memoryId ?? null,
      d.macKid ?? null,
      d.mac === undefined ? null : bytesIn(d.mac),
    ],
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
export async function appendAudits(
  q: Queryable,
  scope: Scope,
  es: readonly AuditEvent[],
): Promise<void> {
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

export async function listAudit(q: Queryable, opts: AuditQuery): Promise<AuditEvent[]> {
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

export async function listApiKeys(q: Queryable): Promise<StoredApiKey[]> {
  const { rows } = await q.query(
    'SELECT key_hash, principal, created_ns, revoked FROM api_keys ORDER BY created_ns, key_hash',
  );
  return rows.map((r) => ({
    principalId: strOut(r.principal),
    keyHash: bytesOut(r.key_hash),
    createdAtNs: bigOut(r.created_ns),
    revoked: r.revoked === true,
  }));
}

export async function revokeApiKey(q: Queryable, keyHash: Uint8Array): Promise<void> {
  const { rows } = await q.query(
    'UPDATE api_keys SET revoked = true WHERE key_hash = $1 RETURNING 1',
    [bytesIn(checkKeyHash(keyHash))],
  );
  if (rows.length === 0) throw new MemwardenError('STORAGE_NOT_FOUND', 'API key not found');
}
