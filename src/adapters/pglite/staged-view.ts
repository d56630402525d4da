/**
 * @module adapters/pglite/staged-view
 * A PGlite transaction's view (see `./staged.js` for why writes are staged): the log, registry
 * and entry staging of {@link StagedCore} plus the Memory API's state — entry state changes,
 * retrieval over committed rows with this transaction's changes applied, quotas, review items,
 * audit events and API keys (`./staged-ext.js`).
 */
import { MemwardenError } from '../../core/errors.js';
import type { SourceTier } from '../../core/trust.js';
import type {
  AuditEvent,
  AuditQuery,
  QuotaDemand,
  ReviewDecision,
  ReviewRecord,
  SearchHit,
  SearchQuery,
  StorageBackend,
  StoredEntry,
  TierCount,
} from '../../ports/storage.js';
import { deniedError } from '../sql/entries.js';
import { checkFindBy, checkPage, checkSearchQuery } from '../sql/rank.js';
import {
  admitInOrder,
  auditDetails,
  checkDemands,
  checkKeyHash,
  groupDemands,
} from '../sql/records.js';
import type { SqlView } from '../sql/view.js';
import { StagedCore } from './staged.js';
import { applyPatch, hexKey, isLive, quotaKey } from './staged-ext.js';

const conflict = (what: string): MemwardenError => new MemwardenError('STORAGE_CONFLICT', what);

/** A transaction's view: committed state (via `base`) plus this transaction's staged writes. */
export class StagedView extends StagedCore implements StorageBackend {
  // ---- entry state and retrieval ----------------------------------------------------------
  private async changeable(id: string): Promise<StoredEntry> {
    const e = await this.getEntry(id);
    if (e === undefined) throw new MemwardenError('STORAGE_NOT_FOUND', `entry ${id} not found`);
    if (this.principal !== undefined && (e.owner !== this.principal || e.tier === 'OPERATOR'))
      throw deniedError(`entry ${id} may not be changed in this scope`);
    return e;
  }

  async markDeleted(id: string): Promise<void> {
    await this.changeable(id);
    this.x.patch(id, { deleted: true });
    this.ops.push((b) => b.markDeleted(id));
  }

  async markSuperseded(id: string, byId: string): Promise<void> {
    const e = await this.getEntry(id);
    if (e?.supersededBy !== undefined)
      throw new MemwardenError('STORAGE_CONFLICT', `entry ${id} is already superseded`);
    await this.changeable(id);
    this.x.patch(id, { supersededBy: byId });
    this.ops.push((b) => b.markSuperseded(id, byId));
  }

  async extendExpiry(id: string, newExpiresAtNs: bigint): Promise<bigint | undefined> {
    const e = await this.getEntry(id);
    if (e !== undefined && e.expiresAtNs === undefined) return undefined;
    await this.changeable(id);
    const next = e!.expiresAtNs! > newExpiresAtNs ? e!.expiresAtNs! : newExpiresAtNs;
    this.x.patch(id, { expiresAtNs: next });
    this.ops.push(async (b) => {
      await b.extendExpiry(id, newExpiresAtNs);
    });
    return next;
  }

  /** Committed rows only (see `./staged-ext.js`), with this transaction's state changes applied. */
  async searchEntries(q: SearchQuery): Promise<SearchHit[]> {
    checkSearchQuery(q);
    const hits = await this.base.searchEntries({
      ...q,
      limit: Math.min(1000, q.limit + this.x.patches.size),
    });
    return hits
      .map((h) => ({ ...h, entry: applyPatch(h.entry, this.x.patches.get(h.entry.id)) }))
      .filter((h) => isLive(h.entry, { nowNs: q.nowNs }))
      .slice(0, q.embedding !== undefined && q.text !== undefined ? 2 * q.limit : q.limit);
  }

  private async merged(fromBase: StoredEntry[]): Promise<StoredEntry[]> {
    const ids = new Set(fromBase.map((e) => e.id));
    return [...fromBase, ...this.entries.filter((e) => !ids.has(e.id))]
      .map((e) => applyPatch(e, this.x.patches.get(e.id)))
      .sort((a, b) => a.leafIndex - b.leafIndex || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async listEntriesFor(
    opts: Parameters<StorageBackend['listEntriesFor']>[0],
  ): Promise<StoredEntry[]> {
    checkPage(opts);
    const offset = opts.offset ?? 0;
    const base = await this.base.listEntriesFor({
      ...opts,
      includeDeleted: true,
      includeSuperseded: true,
      offset: 0,
      limit: Math.min(10_000, offset + opts.limit + this.x.patches.size),
    });
    return (await this.merged(base))
      .filter((e) => isLive(e, opts) && (opts.owner === undefined || e.owner === opts.owner))
      .slice(offset, offset + opts.limit);
  }

  async findEntriesBy(opts: {
    uri?: string;
    srcHash?: string;
    includeDeleted?: boolean;
  }): Promise<StoredEntry[]> {
    checkFindBy(opts);
    const base = await this.base.findEntriesBy({ ...opts, includeDeleted: true });
    return (await this.merged(base)).filter(
      (e) =>
        (opts.uri === undefined || e.uri === opts.uri) &&
        (opts.srcHash === undefined || e.srcHash === opts.srcHash) &&
        isLive(e, { includeDeleted: opts.includeDeleted ?? false, includeSuperseded: true }),
    );
  }

  async countEntries(opts?: { nowNs?: bigint }): Promise<TierCount[]> {
    const counts = new Map((await this.base.countEntries(opts)).map((c) => [c.tier, c.count]));
    const bump = (t: SourceTier, d: number): void => void counts.set(t, (counts.get(t) ?? 0) + d);
    const live = (e: StoredEntry): boolean =>
      isLive(e, opts?.nowNs === undefined ? {} : { nowNs: opts.nowNs });
    for (const e of this.entries)
      if (live(applyPatch(e, this.x.patches.get(e.id)))) bump(e.tier, 1);
    for (const id of this.x.patches.keys()) {
      const before = await this.base.getEntry(id);
      if (before !== undefined && live(before) && !live(applyPatch(before, this.x.patches.get(id))))
        bump(before.tier, -1);
    }
    const order = ['OPERATOR', 'USER_VERIFIED', 'USER_OBSERVED', 'EXTERNAL_TOOL', 'EXTERNAL_WEB'];
    return [...counts]
      .filter(([, n]) => n > 0)
      .map(([tier, count]) => ({ tier, count }))
      .sort((a, b) => order.indexOf(a.tier) - order.indexOf(b.tier));
  }

  // ---- quotas, review queue, audit, API keys -----------------------------------------------
  async consumeQuota(
    principal: string,
    tier: SourceTier,
    dayKey: string,
    limit: number,
  ): Promise<{ ok: boolean; used: number }> {
    if (this.principal !== undefined && principal !== this.principal)
      throw deniedError('another principal’s quota');
    const used = await this.quotaUsed(principal, tier, dayKey);
    if (limit < 1 || used >= limit) return { ok: false, used };
    this.x.quotas.set(quotaKey(principal, tier, dayKey), used + 1);
    this.ops.push(async (b) => {
      await b.consumeQuota(principal, tier, dayKey, limit);
    });
    return { ok: true, used: used + 1 };
  }

  /**
   * Decided here, on the committed counts (one read for the whole batch) plus this transaction's
   * staged ones — exact, since the backend's writer mutex serialises every writer of this
   * database — and replayed at commit by the same set-based statement as on PostgreSQL, which
   * must reach the same verdicts or the commit fails (`STORAGE_CONFLICT`, nothing written).
   */
  async consumeQuotas(demands: readonly QuotaDemand[]): Promise<boolean[]> {
    checkDemands(demands);
    if (this.principal !== undefined && demands.some((d) => d.principal !== this.principal))
      throw deniedError('another principal’s quota');
    const groups = groupDemands(demands);
    const hint = this.hint?.quotas;
    const unknown = groups.filter((g) => {
      const k = quotaKey(g.principal, g.tier, g.day);
      return !this.x.quotas.has(k) && hint?.has(k) !== true;
    });
    const many = (this.base as { quotasUsed?: SqlView['quotasUsed'] }).quotasUsed;
    // Every count known (the steady state of a group commit): no read, so no SQL transaction.
    const committed =
      unknown.length === 0
        ? []
        : many !== undefined
          ? await many.call(this.base, unknown)
          : await Promise.all(unknown.map((g) => this.base.quotaUsed(g.principal, g.tier, g.day)));
    const used = new Map(
      unknown.map((g, i) => [quotaKey(g.principal, g.tier, g.day), committed[i] as number]),
    );
    // Committed counts, read under the writer mutex: the hint may keep them (bounded).
    if (hint !== undefined) {
      if (hint.size > 100_000) hint.clear();
      for (const [k, n] of used) hint.set(k, n);
    }
    const out = new Array<boolean>(demands.length).fill(false);
    let changed = false;
    for (const g of groups) {
      const k = quotaKey(g.principal, g.tier, g.day);
      const before = this.x.quotas.get(k) ?? used.get(k) ?? (hint?.get(k) as number);
      const after = admitInOrder(g, before, out);
      if (after !== before) {
        this.x.quotas.set(k, after);
        changed = true;
      }
    }
    if (changed) this.ops.push({ quotas: [...demands], expected: out.slice() });
    return out;
  }

  async quotaUsed(principal: string, tier: SourceTier, dayKey: string): Promise<number> {
    return (
      this.x.quotas.get(quotaKey(principal, tier, dayKey)) ??
      this.base.quotaUsed(principal, tier, dayKey)
    );
  }

  async enqueueReview(r: Parameters<StorageBackend['enqueueReview']>[0]): Promise<void> {
    if (this.principal !== undefined && r.principal !== this.principal)
      throw deniedError('another principal’s review item');
    if ((await this.getReview(r.id)) !== undefined) throw conflict(`review ${r.id} exists`);
    const rc: ReviewRecord = {
      ...r,
      reasons: [...r.reasons],
      payload: r.payload.slice(),
      status: 'pending',
    };
    this.x.reviews.push(rc);
    this.ops.push((b) => b.enqueueReview(r));
  }

  async listReviews(opts?: {
    status?: ReviewRecord['status'];
    limit?: number;
  }): Promise<ReviewRecord[]> {
    const all = [
      ...(await this.base.listReviews({ ...(opts?.status === undefined ? {} : {}) })),
      ...this.x.reviews,
    ]
      .map((r) => this.x.review(r)!)
      .filter((r) => opts?.status === undefined || r.status === opts.status)
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
    return this.x.review(
      (await this.base.getReview(id)) ?? this.x.reviews.find((r) => r.id === id),
    );
  }

  async decideReview(id: string, d: ReviewDecision): Promise<ReviewRecord> {
    this.systemOnly('deciding a review');
    const r = await this.getReview(id);
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
    this.x.decisions.set(id, patch);
    this.ops.push(async (b) => {
      await b.decideReview(id, d);
    });
    return { ...r, ...patch } as ReviewRecord;
  }

  /** A reused id is refused by the database at commit (unique constraint). */
  async appendAudit(e: AuditEvent): Promise<void> {
    auditDetails(e);
    const ec = { ...e, details: JSON.parse(JSON.stringify(e.details)) as AuditEvent['details'] };
    this.x.audit.push(ec);
    this.ops.push((b) => b.appendAudit(ec));
  }

  /** One multi-row statement at commit; a reused id fails the whole commit, as with appendAudit. */
  async appendAudits(es: readonly AuditEvent[]): Promise<void> {
    for (const e of es) auditDetails(e);
    const ecs = es.map((e) => ({
      ...e,
      details: JSON.parse(JSON.stringify(e.details)) as AuditEvent['details'],
    }));
    this.x.audit.push(...ecs);
    this.ops.push(async (b) => {
      if (b.appendAudits !== undefined) return b.appendAudits(ecs);
      for (const e of ecs) await b.appendAudit(e);
    });
  }

  async listAudit(opts: AuditQuery): Promise<AuditEvent[]> {
    const staged = this.x.audit.filter(
      (e) =>
        (opts.afterNs === undefined || e.atNs > opts.afterNs) &&
        (opts.subject === undefined || e.subject === opts.subject) &&
        (opts.actor === undefined || e.actor === opts.actor) &&
        (opts.actionPrefix === undefined || e.action.startsWith(opts.actionPrefix)),
    );
    // Staged events are the newest (appended after everything committed): they go last in
    // oldest-first order and first in newest-first order.
    const base = await this.base.listAudit(opts);
    const newest = opts.newestFirst === true;
    const all = (newest ? [...staged.reverse(), ...base] : [...base, ...staged]).sort((a, b) => {
      const d = a.atNs < b.atNs ? -1 : a.atNs > b.atNs ? 1 : 0;
      return newest ? -d : d;
    });
    return all.slice(0, opts.limit);
  }

  async putApiKey(k: {
    principalId: string;
    keyHash: Uint8Array;
    createdAtNs: bigint;
  }): Promise<void> {
    this.systemOnly('API keys');
    checkKeyHash(k.keyHash);
    const kc = { ...k, keyHash: k.keyHash.slice() };
    this.x.apiKeys.set(hexKey(kc.keyHash), kc.principalId);
    this.ops.push((b) => b.putApiKey(kc));
  }

  async findApiKey(keyHash: Uint8Array): Promise<string | undefined> {
    this.systemOnly('API keys');
    const h = hexKey(checkKeyHash(keyHash));
    if (this.x.revoked.has(h)) return undefined;
    return this.x.apiKeys.get(h) ?? this.base.findApiKey(keyHash);
  }

  async revokeApiKey(keyHash: Uint8Array): Promise<void> {
    this.systemOnly('API keys');
    const kc = checkKeyHash(keyHash).slice();
    this.x.revoked.add(hexKey(kc));
    this.ops.push((b) => b.revokeApiKey(kc));
  }

  /** Nested: joins the enclosing transaction. */
  async transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    return fn(this);
  }

  async close(): Promise<void> {}
}
