/**
 * @module adapters/memory/tx
 * The in-memory backend's transaction view, part 2: entry state, search, quotas, the review
 * queue, audit events and API keys — the same rules and scope semantics as the Postgres
 * backends (see `../sql/`), enforced in code. Lexical search is BM25 (`core/text`) over the
 * live rows the scope sees, as the read model and the SQL backends rank it.
 */
import { MemwardenError } from '../../core/errors.js';
import { type SourceTier, SourceTiers } from '../../core/trust.js';
import type {
  AuditEvent,
  AuditQuery,
  BrowseQuery,
  EntryStatus,
  QuotaDemand,
  ReviewDecision,
  ReviewRecord,
  SearchHit,
  SearchQuery,
  StorageBackend,
  StoredEntry,
  TierCount,
  StoredApiKey,
} from '../../ports/storage.js';
import {
  admitInOrder,
  auditDetails,
  checkDemands,
  checkKeyHash,
  groupDemands,
} from '../sql/records.js';
import {
  asciiLower,
  checkBrowse,
  checkFindBy,
  checkPage,
  checkSearchQuery,
  cosine,
} from '../sql/rank.js';
import { matchFilter } from '../../core/filter/index.js';
import { bm25, bm25Stats, queryTerms, termFrequencies, tokenize } from '../../core/text/index.js';
import { type EntryPatch, quotaKey } from './state.js';
import { MemoryTxCore, byLog, conflict, copyEntry, denied } from './tx-core.js';

type LiveOpts = { includeDeleted?: boolean; includeSuperseded?: boolean; nowNs?: bigint };

function isLive(e: StoredEntry, o: LiveOpts): boolean {
  if (e.deleted === true && o.includeDeleted !== true) return false;
  if (e.supersededBy !== undefined && o.includeSuperseded !== true) return false;
  return o.nowNs === undefined || e.expiresAtNs === undefined || e.expiresAtNs > o.nowNs;
}

/** The SQL backends' `STATUS_SQL`: the first state that holds. */
function statusOf(e: StoredEntry, nowNs: bigint): EntryStatus {
  if (e.deleted === true) return 'deleted';
  if (e.supersededBy !== undefined) return 'superseded';
  return e.expiresAtNs !== undefined && e.expiresAtNs <= nowNs ? 'expired' : 'live';
}

/** Every filter of a browse query on one row (`needle`: the text filter, ASCII-lowered). */
function browses(e: StoredEntry, q: BrowseQuery, needle: string | undefined): boolean {
  const created = e.createdAtNs;
  return (
    (q.beforeLeafIndex === undefined || e.leafIndex < q.beforeLeafIndex) &&
    (q.owner === undefined || e.owner === q.owner) &&
    (q.tiers === undefined || q.tiers.includes(e.tier)) &&
    (q.kinds === undefined || (e.kind !== undefined && q.kinds.includes(e.kind))) &&
    (q.uri === undefined || e.uri === q.uri) &&
    (q.createdFromNs === undefined || (created !== undefined && created >= q.createdFromNs)) &&
    (q.createdBeforeNs === undefined || (created !== undefined && created < q.createdBeforeNs)) &&
    (needle === undefined || (e.content !== undefined && asciiLower(e.content).includes(needle))) &&
    (q.statuses === undefined || q.statuses.includes(statusOf(e, q.nowNs)))
  );
}

const hex = (h: Uint8Array): string => Buffer.from(checkKeyHash(h)).toString('hex');

/** A view of committed state plus one transaction's staged writes, in one scope. */
export class MemoryTx extends MemoryTxCore implements StorageBackend {
  // ---- entry state ---------------------------------------------------------------------
  /** The raw (patched) row if this scope sees it, else STORAGE_NOT_FOUND. */
  private visible(id: string): StoredEntry {
    const raw = this.s.entries.get(id) ?? this.w.entries.find((x) => x.id === id);
    if (raw === undefined || !this.sees(raw))
      throw new MemwardenError('STORAGE_NOT_FOUND', `entry ${id} not found`);
    return this.patched(raw);
  }

  /** RLS `entries_app_update`: own, non-OPERATOR rows. */
  private changeable(e: StoredEntry): void {
    if (this.principal !== undefined && (e.owner !== this.principal || e.tier === 'OPERATOR'))
      throw denied(`entry ${e.id} may not be changed in this scope`);
  }

  private patch(id: string, p: EntryPatch): void {
    this.w.entryPatches.set(id, { ...(this.w.entryPatches.get(id) ?? {}), ...p });
  }

  async markDeleted(id: string): Promise<void> {
    this.changeable(this.visible(id));
    this.patch(id, { deleted: true });
  }

  async markSuperseded(id: string, byId: string): Promise<void> {
    const e = this.visible(id);
    if (e.supersededBy !== undefined) throw conflict(`entry ${id} is already superseded`);
    this.changeable(e);
    this.patch(id, { supersededBy: byId });
  }

  async extendExpiry(id: string, newExpiresAtNs: bigint): Promise<bigint | undefined> {
    const e = this.visible(id);
    if (e.expiresAtNs === undefined) return undefined;
    this.changeable(e);
    const next = e.expiresAtNs > newExpiresAtNs ? e.expiresAtNs : newExpiresAtNs;
    this.patch(id, { expiresAtNs: next });
    return next;
  }

  // ---- retrieval -----------------------------------------------------------------------
  private candidates(o: LiveOpts): StoredEntry[] {
    return this.allEntries().filter((e) => this.sees(e) && isLive(e, o));
  }

  async searchEntries(q: SearchQuery): Promise<SearchHit[]> {
    checkSearchQuery(q);
    const visible = this.candidates({ nowNs: q.nowNs });
    const pool = visible.filter(
      (e) =>
        (q.tiers === undefined || q.tiers.includes(e.tier)) &&
        (q.kinds === undefined || (e.kind !== undefined && q.kinds.includes(e.kind))) &&
        (q.uri === undefined || e.uri === q.uri) &&
        matchFilter(q.filter, e),
    );
    // BM25 (core/text) with the statistics of the scope's current memories (not deleted, not
    // superseded, embedded; expired ones count until they are gone) — what the read model holds.
    const terms = queryTerms(q.text ?? '');
    const docs =
      q.text === undefined ? undefined : new Map(pool.map((e) => [e, tokenize(e.content ?? '')]));
    const stats =
      q.text === undefined
        ? undefined
        : bm25Stats(
            this.candidates({})
              .filter((e) => e.embedding !== undefined)
              .map((e) => docs?.get(e) ?? tokenize(e.content ?? '')),
          );
    const score = (
      e: StoredEntry,
    ): { entry: StoredEntry; vectorScore?: number; lexicalScore?: number } => {
      const h: { entry: StoredEntry; vectorScore?: number; lexicalScore?: number } = { entry: e };
      if (q.embedding !== undefined && e.embedding !== undefined)
        h.vectorScore = cosine(q.embedding, e.embedding);
      if (docs !== undefined && stats !== undefined) {
        const toks = docs.get(e) ?? [];
        h.lexicalScore = bm25(terms, termFrequencies(toks), toks.length, stats);
      }
      return h;
    };
    const scored = pool.map(score);
    const vec =
      q.embedding === undefined
        ? []
        : scored
            .filter((h) => h.vectorScore !== undefined)
            .sort((a, b) => b.vectorScore! - a.vectorScore! || byLog(a.entry, b.entry))
            .slice(0, q.limit);
    const lex =
      q.text === undefined
        ? []
        : scored
            .filter((h) => (h.lexicalScore ?? 0) > 0)
            .sort((a, b) => b.lexicalScore! - a.lexicalScore! || byLog(a.entry, b.entry))
            .slice(0, q.limit);
    if (q.text === undefined) return vec.map((h) => ({ ...h, entry: copyEntry(h.entry) }));
    if (q.embedding === undefined) return lex.map((h) => ({ ...h, entry: copyEntry(h.entry) }));
    const merged = new Map([...vec, ...lex].map((h) => [h.entry.id, h]));
    return [...merged.values()]
      .sort(
        (a, b) =>
          (b.vectorScore ?? -Infinity) - (a.vectorScore ?? -Infinity) ||
          (b.lexicalScore ?? 0) - (a.lexicalScore ?? 0) ||
          byLog(a.entry, b.entry),
      )
      .map((h) => ({ ...h, entry: copyEntry(h.entry) }));
  }

  async listEntriesFor(
    opts: Parameters<StorageBackend['listEntriesFor']>[0],
  ): Promise<StoredEntry[]> {
    checkPage(opts);
    const offset = opts.offset ?? 0;
    return this.candidates(opts)
      .filter(
        (e) => (opts.owner === undefined || e.owner === opts.owner) && matchFilter(opts.filter, e),
      )
      .sort(byLog)
      .slice(offset, offset + opts.limit)
      .map(copyEntry);
  }

  async findEntriesBy(opts: {
    uri?: string;
    srcHash?: string;
    memoryId?: string;
    includeDeleted?: boolean;
  }): Promise<StoredEntry[]> {
    checkFindBy(opts);
    return this.candidates({
      includeDeleted: opts.includeDeleted ?? false,
      includeSuperseded: true,
    })
      .filter(
        (e) =>
          (opts.uri === undefined || e.uri === opts.uri) &&
          (opts.srcHash === undefined || e.srcHash === opts.srcHash) &&
          (opts.memoryId === undefined || (e.memoryId ?? e.id) === opts.memoryId),
      )
      .sort(byLog)
      .map(copyEntry);
  }

  async browseEntries(q: BrowseQuery): Promise<StoredEntry[]> {
    checkBrowse(q);
    const needle = q.text === undefined ? undefined : asciiLower(q.text);
    return this.allEntries()
      .filter((e) => this.sees(e) && browses(e, q, needle))
      .sort((a, b) => byLog(b, a))
      .slice(0, q.limit)
      .map((e) => {
        const { embedding: _omitted, ...row } = copyEntry(e);
        return row;
      });
  }

  async countEntries(opts?: { nowNs?: bigint }): Promise<TierCount[]> {
    const counts = new Map<SourceTier, number>();
    for (const e of this.candidates(opts?.nowNs === undefined ? {} : { nowNs: opts.nowNs }))
      counts.set(e.tier, (counts.get(e.tier) ?? 0) + 1);
    return SourceTiers.filter((t) => counts.has(t)).map((tier) => ({
      tier,
      count: counts.get(tier)!,
    }));
  }

  // ---- quotas --------------------------------------------------------------------------
  async consumeQuota(
    principal: string,
    tier: SourceTier,
    dayKey: string,
    limit: number,
  ): Promise<{ ok: boolean; used: number }> {
    if (this.principal !== undefined && principal !== this.principal)
      throw denied('another principal’s quota');
    const used = await this.quotaUsed(principal, tier, dayKey);
    if (limit < 1 || used >= limit) return { ok: false, used };
    this.w.quotas.set(quotaKey(principal, tier, dayKey), used + 1);
    return { ok: true, used: used + 1 };
  }

  async consumeQuotas(demands: readonly QuotaDemand[]): Promise<boolean[]> {
    checkDemands(demands);
    if (this.principal !== undefined && demands.some((d) => d.principal !== this.principal))
      throw denied('another principal’s quota');
    const out = new Array<boolean>(demands.length).fill(false);
    for (const g of groupDemands(demands)) {
      const k = quotaKey(g.principal, g.tier, g.day);
      const before = this.w.quotas.get(k) ?? this.s.quotas.get(k) ?? 0;
      const after = admitInOrder(g, before, out);
      if (after !== before) this.w.quotas.set(k, after);
    }
    return out;
  }

  async quotaUsed(principal: string, tier: SourceTier, dayKey: string): Promise<number> {
    if (this.principal !== undefined && principal !== this.principal) return 0; // RLS: not visible
    const k = quotaKey(principal, tier, dayKey);
    return this.w.quotas.get(k) ?? this.s.quotas.get(k) ?? 0;
  }

  // ---- review queue --------------------------------------------------------------------
  private rawReview(id: string): ReviewRecord | undefined {
    const r = this.s.reviews.get(id) ?? this.w.reviews.find((x) => x.id === id);
    if (r === undefined) return undefined;
    const d = this.w.reviewDecisions.get(id);
    return d === undefined ? r : ({ ...r, ...d } as ReviewRecord);
  }

  private seesReview(r: ReviewRecord | undefined): ReviewRecord | undefined {
    if (r === undefined || (this.principal !== undefined && r.principal !== this.principal))
      return undefined;
    return { ...r, reasons: [...r.reasons], payload: r.payload.slice() };
  }

  async enqueueReview(r: Parameters<StorageBackend['enqueueReview']>[0]): Promise<void> {
    if (this.principal !== undefined && r.principal !== this.principal)
      throw denied('another principal’s review item');
    if (this.rawReview(r.id) !== undefined) throw conflict(`review ${r.id} exists`);
    this.w.reviews.push({
      ...r,
      reasons: [...r.reasons],
      payload: r.payload.slice(),
      status: 'pending',
    });
  }

  async listReviews(opts?: {
    status?: ReviewRecord['status'];
    limit?: number;
  }): Promise<ReviewRecord[]> {
    const ids = [...this.s.reviews.keys(), ...this.w.reviews.map((r) => r.id)];
    const all = ids
      .map((id) => this.seesReview(this.rawReview(id)))
      .filter(
        (r): r is ReviewRecord =>
          r !== undefined && (opts?.status === undefined || r.status === opts.status),
      )
      .sort((a, b) =>
        a.createdAtNs < b.createdAtNs
          ? -1
          : a.createdAtNs > b.createdAtNs
            ? 1
            : a.id < b.id
              ? -1
              : 1,
      );
    return all.slice(0, opts?.limit ?? all.length);
  }

  async getReview(id: string): Promise<ReviewRecord | undefined> {
    return this.seesReview(this.rawReview(id));
  }

  async decideReview(id: string, d: ReviewDecision): Promise<ReviewRecord> {
    this.systemOnly('deciding a review');
    const r = this.rawReview(id);
    if (r === undefined) throw new MemwardenError('STORAGE_NOT_FOUND', `review ${id} not found`);
    if (r.status !== 'pending') throw conflict(`review ${id} is already ${r.status}`);
    const patch: Partial<ReviewRecord> = {
      status: d.status,
      decidedBy: d.decidedBy,
      decidedAtNs: d.decidedAtNs,
      ...(d.memoryId === undefined ? {} : { memoryId: d.memoryId }),
      ...(d.mac === undefined ? {} : { mac: d.mac.slice() }),
      ...(d.macKid === undefined ? {} : { macKid: d.macKid }),
    };
    this.w.reviewDecisions.set(id, patch);
    return this.seesReview(this.rawReview(id))!;
  }

  // ---- audit ---------------------------------------------------------------------------
  async appendAudit(e: AuditEvent): Promise<void> {
    const json = auditDetails(e);
    if (this.s.auditIds.has(e.id) || this.w.audit.some((a) => a.event.id === e.id))
      throw conflict(`audit event ${e.id} exists`);
    const event = { ...e, details: JSON.parse(json) as AuditEvent['details'] };
    this.w.audit.push({ owner: this.principal ?? null, event });
  }

  async appendAudits(es: readonly AuditEvent[]): Promise<void> {
    // Validate all first: nothing is staged unless every event would be.
    const seen = new Set<string>();
    for (const e of es) {
      auditDetails(e);
      if (seen.has(e.id)) throw conflict(`audit event ${e.id} repeated`);
      seen.add(e.id);
    }
    for (const e of es) await this.appendAudit(e);
  }

  async listAudit(opts: AuditQuery): Promise<AuditEvent[]> {
    const sorted = [...this.s.audit, ...this.w.audit]
      .filter(
        (a) =>
          (this.principal === undefined || a.owner === this.principal) &&
          (opts.afterNs === undefined || a.event.atNs > opts.afterNs) &&
          (opts.subject === undefined || a.event.subject === opts.subject) &&
          (opts.actor === undefined || a.event.actor === opts.actor) &&
          (opts.actionPrefix === undefined || a.event.action.startsWith(opts.actionPrefix)),
      )
      .map((a) => a.event)
      .sort((a, b) => (a.atNs < b.atNs ? -1 : a.atNs > b.atNs ? 1 : 0)); // stable: append order on ties
    if (opts.newestFirst === true) sorted.reverse();
    return sorted.slice(0, opts.limit).map((e) => ({
      ...e,
      details: JSON.parse(JSON.stringify(e.details)) as AuditEvent['details'],
    }));
  }

  // ---- API keys ------------------------------------------------------------------------
  async putApiKey(k: {
    principalId: string;
    keyHash: Uint8Array;
    createdAtNs: bigint;
  }): Promise<void> {
    this.systemOnly('API keys');
    const h = hex(k.keyHash);
    if (this.s.apiKeys.has(h) || this.w.apiKeys.some((x) => x.hash === h))
      throw conflict('API key exists');
    this.w.apiKeys.push({ hash: h, principal: k.principalId, createdAtNs: k.createdAtNs });
  }

  async findApiKey(keyHash: Uint8Array): Promise<string | undefined> {
    this.systemOnly('API keys');
    const h = hex(keyHash);
    const committed = this.s.apiKeys.get(h);
    if (this.w.revokedKeys.has(h) || committed?.revoked === true) return undefined;
    return committed?.principal ?? this.w.apiKeys.find((x) => x.hash === h)?.principal;
  }

  async listApiKeys(): Promise<StoredApiKey[]> {
    this.systemOnly('API keys');
    const out: StoredApiKey[] = [];
    const row = (hash: string, principal: string, createdAtNs: bigint, revoked: boolean) =>
      out.push({
        principalId: principal,
        keyHash: Uint8Array.from(Buffer.from(hash, 'hex')),
        createdAtNs,
        revoked: revoked || this.w.revokedKeys.has(hash),
      });
    for (const [h, k] of this.s.apiKeys) row(h, k.principal, k.createdAtNs, k.revoked);
    for (const k of this.w.apiKeys) row(k.hash, k.principal, k.createdAtNs, false);
    return out;
  }

  async revokeApiKey(keyHash: Uint8Array): Promise<void> {
    this.systemOnly('API keys');
    const h = hex(keyHash);
    if (!this.s.apiKeys.has(h) && !this.w.apiKeys.some((x) => x.hash === h))
      throw new MemwardenError('STORAGE_NOT_FOUND', 'API key not found');
    this.w.revokedKeys.add(h);
  }

  async transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    return fn(this); // nested: joins the enclosing transaction
  }

  async close(): Promise<void> {}
}
