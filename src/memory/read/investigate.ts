/**
 * @module memory/read/investigate
 * The investigation listing (issue 24): entries newest first, in every state, filtered and in
 * keyset pages, each re-verified by the ledger — a row that fails is listed with its reason
 * code, never dropped silently — for the console's operator views and a user's own list.
 *
 * This is the one cross-principal read in the memory layer. For an operator it runs on the
 * system scope (`ctx.storage`), and each call is audited as `operator.investigate` with the
 * filters used; for anyone else it runs on the caller's row-level-security view and naming
 * another owner is `AUTH_FORBIDDEN`. No other module calls `browseEntries`, and none other
 * lists entries on the system scope (test/memory/investigate-scope.test.ts checks).
 */
import { toBase64 } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import type { SourceTier, TrustLabel } from '../../core/trust.js';
import type { Embedder } from '../../ports/embedder.js';
import type {
  BrowseQuery,
  EntryStatus,
  JsonValue,
  StorageBackend,
  StoredEntry,
} from '../../ports/storage.js';
import type {
  InvestigatedEntry,
  InvestigateOptions,
  InvestigationPage,
  InvestigationRow,
  MemoryRecord,
  UnverifiedEntry,
} from '../api.js';
import type { MemoryContext } from '../context.js';
import type { Verification } from '../log/ledger.js';
import { lineageOf } from './inspect.js';
import { nsToIso, toCheckpointView, toMemoryRecord } from './records.js';

/** Most rows one page holds (and the default). */
export const MAX_INVESTIGATION_ROWS = 200;
const DEFAULT_ROWS = 50;
/** Most stored rows one call reads when a label filter (checked after verification) skips rows. */
const MAX_SCANNED = 2000;
const CURSOR_RE = /^(0|[1-9][0-9]{0,15})$/;

const invalid = (what: string): MemwardenError =>
  new MemwardenError('INPUT_INVALID', `investigate: ${what}`);

/** The storage port's state order: deleted, superseded, expired, else live. */
function statusOf(e: StoredEntry, nowNs: bigint): EntryStatus {
  if (e.deleted === true) return 'deleted';
  if (e.supersededBy !== undefined) return 'superseded';
  return e.expiresAtNs !== undefined && e.expiresAtNs <= nowNs ? 'expired' : 'live';
}

/** ASCII-only lower case: the storage text filter's folding (`adapters/sql/rank` asciiLower). */
const asciiLower = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

function isoToNs(v: string | undefined, what: string): bigint | undefined {
  if (v === undefined) return undefined;
  const ms = typeof v === 'string' && v.length <= 64 ? Date.parse(v) : Number.NaN;
  if (!Number.isFinite(ms)) throw invalid(`${what} must be an ISO 8601 date-time`);
  return BigInt(ms) * 1_000_000n;
}

function cursorOf(c: string | undefined): number | undefined {
  if (c === undefined) return undefined;
  if (typeof c !== 'string' || !CURSOR_RE.test(c) || !Number.isSafeInteger(Number(c)))
    throw invalid('malformed cursor');
  return Number(c);
}

/** The filters as they go into the audit record (JSON, no undefined). */
function auditFilters(o: InvestigateOptions): { [k: string]: JsonValue } {
  const out: { [k: string]: JsonValue } = {};
  for (const k of [
    'owner',
    'tiers',
    'kinds',
    'source',
    'labels',
    'statuses',
    'query',
    'semantic',
    'from',
    'to',
    'cursor',
    'limit',
  ] as const) {
    const v = o[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? [...(v as string[])] : (v as JsonValue);
  }
  return out;
}

/** Filters as the storage port takes them (validated there too). */
interface Plan {
  readonly browse: Omit<BrowseQuery, 'limit' | 'beforeLeafIndex'>;
  readonly labels: ReadonlySet<TrustLabel> | undefined;
  readonly needle: string | undefined;
  readonly limit: number;
  readonly before: number | undefined;
}

function plan(o: InvestigateOptions, nowNs: bigint): Plan {
  const limit = o.limit ?? DEFAULT_ROWS;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_INVESTIGATION_ROWS)
    throw invalid(`limit must be an integer in 1..${MAX_INVESTIGATION_ROWS}`);
  if (o.query !== undefined && (typeof o.query !== 'string' || o.query.length === 0))
    throw invalid('query must be a non-empty string');
  if (o.semantic === true && o.query === undefined) throw invalid('semantic ranking needs a query');
  if (o.semantic === true && o.cursor !== undefined)
    throw invalid('semantic ranking is one page: no cursor');
  for (const [v, what] of [
    [o.owner, 'owner'],
    [o.source, 'source'],
    [o.query, 'query'],
    ...(o.kinds ?? []).map((k) => [k, 'kind'] as const),
  ] as const) {
    // The database refuses NUL in text; refuse it here first, coded, for every path.
    if (v !== undefined && (typeof v !== 'string' || v.length === 0 || v.includes('\0')))
      throw invalid(`${what} must be a non-empty string without NUL`);
  }
  const from = isoToNs(o.from, 'from');
  const to = isoToNs(o.to, 'to');
  const browse: Plan['browse'] = {
    nowNs,
    ...(o.owner === undefined ? {} : { owner: o.owner }),
    ...(o.tiers === undefined ? {} : { tiers: o.tiers }),
    ...(o.kinds === undefined ? {} : { kinds: o.kinds }),
    ...(o.source === undefined ? {} : { uri: o.source }),
    ...(o.statuses === undefined ? {} : { statuses: o.statuses }),
    ...(o.query === undefined || o.semantic === true ? {} : { text: o.query }),
    ...(from === undefined ? {} : { createdFromNs: from }),
    ...(to === undefined ? {} : { createdBeforeNs: to }),
  };
  return {
    browse,
    labels: o.labels === undefined ? undefined : new Set(o.labels),
    needle: browse.text === undefined ? undefined : asciiLower(browse.text),
    limit,
    before: cursorOf(o.cursor),
  };
}

/**
 * Does the signed record agree with every stored column the listing filtered on? A row a
 * filter matched only through an edited column is a failure (`columns`), not a result.
 */
function columnsAgree(p: Plan, m: StoredEntry, v: Verification & { ok: true }): boolean {
  const e = v.entry;
  const b = p.browse;
  if (b.owner !== undefined && e.ns !== b.owner) return false;
  if (b.tiers !== undefined && !b.tiers.includes(e.tier)) return false;
  if (b.kinds !== undefined && !b.kinds.includes(e.kind)) return false;
  if (b.uri !== undefined && e.uri !== b.uri) return false;
  if (b.createdFromNs !== undefined && e.ts < b.createdFromNs) return false;
  if (b.createdBeforeNs !== undefined && e.ts >= b.createdBeforeNs) return false;
  if (p.needle !== undefined && !asciiLower(e.content).includes(p.needle)) return false;
  return m.owner === e.ns && m.tier === e.tier;
}

export class Investigator {
  constructor(
    private readonly ctx: MemoryContext,
    private readonly embedder: Embedder,
  ) {}

  async investigate(o: InvestigateOptions): Promise<InvestigationPage> {
    const view = this.ctx.view(o.principal); // refuses a missing principal
    const nowNs = this.ctx.clock.nowNs();
    const p = plan(o, nowNs);
    // The kind as the signed registry states it, never the principals table (ADR 0033).
    const operator = (await this.ctx.ledger.principalKind(o.principal)) === 'operator';
    if (!operator && o.owner !== undefined && o.owner !== o.principal)
      throw new MemwardenError(
        'AUTH_FORBIDDEN',
        "only an operator may list another principal's entries",
      );
    // The privileged path: the system scope, for an operator only, audited below.
    const scope = operator ? this.ctx.storage : view;
    const page =
      o.semantic === true
        ? await this.ranked(scope, o, p, operator)
        : await this.newest(scope, o, p, operator);
    if (operator) {
      await this.ctx.audit(o.principal, 'operator.investigate', o.owner ?? '*', {
        filters: auditFilters(o),
        rows: page.rows.length,
        unverified: page.rows.filter((r) => !r.verified).map((r) => r.id),
      });
    }
    return page;
  }

  /**
   * One entry, whoever owns it for an operator (audited), else in the caller's scope: its row
   * (verified, or the failure), and for a verified one its inclusion proof and lineage, read in
   * the same scope. `STORAGE_NOT_FOUND` when the scope does not hold it.
   */
  async entry(id: string, principal: string): Promise<InvestigatedEntry> {
    const view = this.ctx.view(principal);
    const operator = (await this.ctx.ledger.principalKind(principal)) === 'operator';
    // The privileged path: the system scope, for an operator only, audited below.
    const scope = operator ? this.ctx.storage : view;
    const stored = await scope.getEntry(id);
    if (operator)
      await this.ctx.audit(principal, 'operator.investigate', id, {
        entry: id,
        found: stored !== undefined,
      });
    if (stored === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
    const nowNs = this.ctx.clock.nowNs();
    const p = plan({ principal }, nowNs);
    const row = await this.row(
      stored,
      await this.ctx.ledger.verifyStored(stored),
      p,
      { principal },
      operator,
    );
    if (row === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
    if (!row.verified) return { row, scope: operator ? 'all' : 'own' };
    const [proof, lineage] = await Promise.all([
      this.ctx.ledger.proveEntry(id),
      lineageOf(scope, this.ctx.ledger, id, nowNs),
    ]);
    return {
      row,
      proof: {
        leafIndex: proof.leafIndex,
        treeSize: proof.treeSize,
        leafHash: toBase64(proof.leafHash),
        hashes: proof.hashes.map(toBase64),
        checkpoint: toCheckpointView(this.ctx.ledger.log.origin, proof.checkpoint),
      },
      ...(lineage === undefined ? {} : { lineage }),
      scope: operator ? 'all' : 'own',
    };
  }

  /** Newest first through `browseEntries`, a keyset page at a time. */
  private async newest(
    scope: StorageBackend,
    o: InvestigateOptions,
    p: Plan,
    operator: boolean,
  ): Promise<InvestigationPage> {
    const browse = scope.browseEntries?.bind(scope);
    if (browse === undefined)
      throw new MemwardenError('STORAGE_FAILED', 'this storage backend cannot list entries');
    const rows: InvestigationRow[] = [];
    // With a label filter (known only after verification) a stored page may yield fewer rows:
    // read on, up to MAX_SCANNED rows, and hand back where the reading stopped.
    const batch = p.labels === undefined ? p.limit : Math.min(1000, Math.max(2 * p.limit, 100));
    let before = p.before;
    let scanned = 0;
    let exhausted = false;
    for (;;) {
      const stored = await browse({
        ...p.browse,
        limit: batch,
        ...(before === undefined ? {} : { beforeLeafIndex: before }),
      });
      const verdicts = await this.ctx.ledger.verifyMany(stored);
      let consumed = 0;
      for (; consumed < stored.length && rows.length < p.limit; consumed++) {
        const s = stored[consumed] as StoredEntry;
        before = s.leafIndex;
        scanned++;
        const row = await this.row(s, verdicts[consumed] as Verification, p, o, operator);
        if (row !== undefined) rows.push(row);
      }
      if (consumed === stored.length && stored.length < batch) {
        exhausted = true;
        break;
      }
      if (rows.length >= p.limit || scanned >= MAX_SCANNED) break;
    }
    return {
      rows,
      ...(exhausted || before === undefined ? {} : { nextCursor: String(before) }),
      scope: operator ? 'all' : 'own',
    };
  }

  /** Semantic: the live entries nearest the query, best first, the other filters applied after. */
  private async ranked(
    scope: StorageBackend,
    o: InvestigateOptions,
    p: Plan,
    operator: boolean,
  ): Promise<InvestigationPage> {
    const empty: InvestigationPage = { rows: [], scope: operator ? 'all' : 'own' };
    if (p.browse.statuses !== undefined && !p.browse.statuses.includes('live')) return empty;
    const [vector] = await this.embedder.embed([o.query as string]);
    if (vector === undefined)
      throw new MemwardenError('EMBEDDING_FAILED', 'embedder returned nothing');
    const hits = await scope.searchEntries({
      embedding: vector,
      ...(p.browse.tiers === undefined ? {} : { tiers: p.browse.tiers }),
      ...(p.browse.kinds === undefined ? {} : { kinds: p.browse.kinds }),
      ...(p.browse.uri === undefined ? {} : { uri: p.browse.uri }),
      nowNs: p.browse.nowNs,
      limit: Math.min(1000, 4 * p.limit),
    });
    const b = p.browse;
    const wanted = hits.filter(
      (h) =>
        (b.owner === undefined || h.entry.owner === b.owner) &&
        (b.createdFromNs === undefined || (h.entry.createdAtNs ?? -1n) >= b.createdFromNs) &&
        (b.createdBeforeNs === undefined ||
          (h.entry.createdAtNs !== undefined && h.entry.createdAtNs < b.createdBeforeNs)),
    );
    const verdicts = await this.ctx.ledger.verifyMany(wanted.map((h) => h.entry));
    const rows: InvestigationRow[] = [];
    for (let i = 0; i < wanted.length && rows.length < p.limit; i++) {
      const h = wanted[i] as (typeof wanted)[number];
      const row = await this.row(h.entry, verdicts[i] as Verification, p, o, operator);
      if (row !== undefined)
        rows.push(h.vectorScore === undefined ? row : { ...row, score: h.vectorScore });
    }
    return { rows, scope: operator ? 'all' : 'own' };
  }

  /** One listed row, or undefined when it is filtered out (label) or not the caller's to see. */
  private async row(
    s: StoredEntry,
    v: Verification,
    p: Plan,
    o: InvestigateOptions,
    operator: boolean,
  ): Promise<InvestigationRow | undefined> {
    // A failing row's status is what its columns claim (like `stored`, unverified); a verified
    // row's is replaced below by the signed one.
    const base = { id: s.id, leafIndex: s.leafIndex, status: statusOf(s, p.browse.nowNs) };
    const failed = (failure: UnverifiedEntry): InvestigationRow => ({
      ...base,
      verified: false,
      failure,
      ...(operator ? { stored: storedClaims(s) } : {}),
    });
    if (!v.ok) return failed({ id: s.id, code: v.code, stage: v.stage });
    if (!operator && v.entry.ns !== o.principal && v.entry.tier !== 'OPERATOR') {
      // Defence in depth (as on the search path): another principal's row is an isolation bug.
      await this.ctx.audit(o.principal, 'isolation.violation', s.id, { owner: v.entry.ns });
      return undefined;
    }
    if (!columnsAgree(p, s, v))
      return failed({ id: s.id, code: 'ENTRY_INVALID', stage: 'columns' });
    if (p.labels !== undefined && !p.labels.has(v.entry.label)) return undefined;
    // The status as the log states it (tombstones, signed versions, the signed expiry), never
    // the state columns (issue 24): a row whose columns disagree is listed as failing (`state`)
    // with the signed status, so an edit at rest can neither hide nor resurrect an entry here.
    const state = await this.ctx.ledger.signedState(s, v.entry, p.browse.nowNs);
    if (state.tampered !== undefined)
      return {
        ...base,
        status: state.status,
        verified: false,
        failure: { id: s.id, code: 'ENTRY_INVALID', stage: 'state' },
        ...(operator ? { stored: storedClaims(s) } : {}),
      };
    return {
      ...base,
      status: state.status,
      verified: true,
      memory: toMemoryRecord(v.entry, v.leafIndex, s.bytes, s.expiresAtNs),
    };
  }

  /**
   * `getAll`'s rows checked by the ledger: the verified records, and the failing rows by id and
   * reason (each also audited as `entry.dropped`, as before) instead of being left out silently.
   */
  async checked(
    principal: string,
    rows: readonly StoredEntry[],
  ): Promise<{ memories: MemoryRecord[]; unverified: UnverifiedEntry[] }> {
    const verdicts = await this.ctx.ledger.verifyMany(rows);
    const memories: MemoryRecord[] = [];
    const unverified: UnverifiedEntry[] = [];
    for (let i = 0; i < rows.length; i++) {
      const s = rows[i] as StoredEntry;
      const v = verdicts[i] as Verification;
      if (!v.ok) {
        unverified.push({ id: s.id, code: v.code, stage: v.stage });
        await this.ctx.audit(principal, 'entry.dropped', s.id, { code: v.code, stage: v.stage });
        continue;
      }
      if (v.entry.ns !== principal && v.entry.tier !== 'OPERATOR') {
        await this.ctx.audit(principal, 'isolation.violation', s.id, { owner: v.entry.ns });
        continue;
      }
      memories.push(toMemoryRecord(v.entry, v.leafIndex, s.bytes, s.expiresAtNs));
    }
    return { memories, unverified };
  }
}

/** What a failing row's columns claim (unverified). */
function storedClaims(s: StoredEntry): NonNullable<InvestigationRow['stored']> {
  return {
    owner: s.owner,
    tier: s.tier as SourceTier,
    ...(s.kind === undefined ? {} : { kind: s.kind }),
    ...(s.uri === undefined ? {} : { source: s.uri }),
    ...(s.writer === undefined ? {} : { writer: s.writer }),
    ...(s.createdAtNs === undefined ? {} : { createdAt: safeIso(s.createdAtNs) }),
    ...(s.content === undefined ? {} : { content: s.content }),
  };
}

/** ISO time of a stored (untrusted) column; a value out of a Date's range is shown as its number. */
function safeIso(ns: bigint): string {
  try {
    return nsToIso(ns);
  } catch {
    return `${ns} ns`;
  }
}
