/**
 * @module memory/write/versions
 * The life of an entry after it is written: signed new versions that supersede the old one
 * (never a silent overwrite; the signed lineage is kept), signed tombstones, the version
 * history, and failure-mode purges by source URI or content hash. Only the owner changes an
 * entry; every stored row is re-verified before it is acted on.
 */
import { toHex, utf8 } from '../../core/bytes.js';
import { sha256 } from '../../core/crypto/sha256.js';
import { LIMITS } from '../../core/entry/index.js';
import { MemwardenError } from '../../core/errors.js';
import type { StorageBackend, StoredEntry } from '../../ports/storage.js';
import type { HistoryEvent, MemoryRecord } from '../api.js';
import type { MemoryContext } from '../context.js';
import { checkTtlMs } from '../config.js';
import { nsToIso, toMemoryRecord } from '../read/records.js';
import type { WriteLineage, WritePath } from './write-path.js';

const NS_PER_MS = 1_000_000n;

function tierSpan(ttlMs: number | null): bigint | undefined {
  return ttlMs === null ? undefined : BigInt(Math.round(ttlMs)) * NS_PER_MS;
}

export class Versions {
  constructor(
    private readonly ctx: MemoryContext,
    private readonly writer: WritePath,
  ) {}

  /**
   * The entry `id` names for `principal`: the live version of the memory with that id (ids are
   * stable across updates, ADR 0049), else the entry with that version id.
   */
  async resolve(
    id: string,
    principal: string,
    scope?: StorageBackend,
  ): Promise<StoredEntry | undefined> {
    const view = scope ?? this.ctx.view(principal);
    if (typeof id !== 'string' || id.length === 0 || id.length > 64 || id.includes('\u0000'))
      throw new MemwardenError('INPUT_INVALID', 'a memory id is a short string', {
        details: { field: 'id' },
      });
    const versions = await view.findEntriesBy({ memoryId: id });
    let current: StoredEntry | undefined;
    for (const v of versions) if (v.supersededBy === undefined) current = v;
    return current ?? (await view.getEntry(id));
  }

  /** Load an entry the principal owns (OPERATOR rows are readable but not theirs to change). */
  private async owned(id: string, principal: string): Promise<StoredEntry> {
    const stored = await this.resolve(id, principal);
    if (stored === undefined || stored.deleted === true) {
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
    }
    if (stored.owner !== principal) throw new MemwardenError('AUTH_FORBIDDEN', 'not your memory');
    if ((await this.ctx.ledger.verifyStored(stored)).ok !== true) {
      throw new MemwardenError('ENTRY_SIGNATURE_INVALID', 'stored entry failed verification');
    }
    return stored;
  }

  /** A new signed version that supersedes the old one (never a silent overwrite). */
  async update(
    id: string,
    content: string,
    opts: {
      principal: string;
      reason?: string;
      ttlMs?: number | null;
      metadata?: Readonly<Record<string, unknown>>;
      eventAt?: string | number | Date;
    },
  ): Promise<MemoryRecord> {
    if (opts.ttlMs !== undefined) checkTtlMs(opts.ttlMs, true);
    this.writer.checkReason(opts.reason);
    const old = await this.owned(id, opts.principal);
    if (old.supersededBy !== undefined) {
      throw new MemwardenError('STORAGE_CONFLICT', 'memory already superseded', {
        details: { by: old.supersededBy },
      });
    }
    const prev = await this.ctx.ledger.verifyStored(old);
    if (!prev.ok) throw new MemwardenError(prev.code, 'stored entry failed verification');
    // A new version keeps the old one's signed lineage: an update never launders a label. It
    // goes through the write path like any write: limits, tier, TTL ceiling, screening, quota.
    const kept: WriteLineage = {
      parents: prev.entry.parents,
      weights: prev.entry.weights,
      label: prev.entry.label,
    };
    // The new version keeps the memory's scopes, and its metadata and event time unless given.
    const e = prev.entry;
    const metadata = opts.metadata ?? e.meta;
    const eventAt = opts.eventAt ?? (e.evt === undefined ? undefined : nsToIso(e.evt));
    // `id` may be the memory id (ADR 0049): the version superseded is the current one, `old`.
    const r = await this.writer.update(
      content,
      {
        principal: opts.principal,
        tier: old.tier,
        kind: e.kind,
        ...(e.uri === undefined ? {} : { source: e.uri }),
        ...(opts.ttlMs === undefined ? {} : { ttlMs: opts.ttlMs }),
        ...(metadata === undefined ? {} : { metadata }),
        ...(eventAt === undefined ? {} : { eventAt }),
        ...(e.run === undefined ? {} : { runId: e.run }),
        ...(e.agent === undefined ? {} : { agentId: e.agent }),
      },
      kept,
      old.id,
    );
    if (r.status !== 'stored') {
      // Held for review: the old version stays current until a reviewer approves the new one.
      throw new MemwardenError('WRITE_HELD', 'the new version was held for review', {
        details: { reviewId: r.reviewId, reasons: [...r.reasons] },
      });
    }
    const next = r.memory;
    // The ledger marks the old version superseded in the new version's commit transaction
    // (its system scope: RLS forbids changing OPERATOR rows to every app principal, ADR 0007).
    await this.ctx.audit(opts.principal, 'entry.updated', old.id, {
      by: next.id,
      reason: opts.reason ?? null,
    });
    return next;
  }

  /**
   * Extend a live entry's lifetime to now + `ttlMs` (default: the entry's own signed lifetime,
   * `exp − ts`, else its tier's TTL). The expiry only ever moves forward and a never-expiring
   * entry stays so; the signed record keeps its original `exp` (the stored expiry is the
   * retention state, like renew-on-use). Only the owner renews; audited as `entry.renewed`.
   */
  async renew(id: string, opts: { principal: string; ttlMs?: number }): Promise<MemoryRecord> {
    if (opts.ttlMs !== undefined) checkTtlMs(opts.ttlMs, false);
    const stored = await this.owned(id, opts.principal);
    const ceiling = this.ctx.retention.ttlCeilingMs[stored.tier];
    if (opts.ttlMs !== undefined && ceiling !== null && opts.ttlMs > ceiling)
      throw new MemwardenError(
        'INPUT_INVALID',
        `a ${stored.tier} memory may live at most ${ceiling} ms`,
        {
          details: { field: 'ttlMs', reason: 'ttl_ceiling', tier: stored.tier, ceilingMs: ceiling },
        },
      );
    const now = this.ctx.clock.nowNs();
    if (
      stored.supersededBy !== undefined ||
      (stored.expiresAtNs !== undefined && stored.expiresAtNs <= now)
    ) {
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
    }
    const v = await this.ctx.ledger.verifyStored(stored);
    if (!v.ok) throw new MemwardenError(v.code, 'stored entry failed verification');
    if (stored.expiresAtNs === undefined) return toMemoryRecord(v.entry, v.leafIndex, stored.bytes);
    const span =
      opts.ttlMs !== undefined
        ? BigInt(opts.ttlMs) * NS_PER_MS
        : v.entry.exp !== undefined && v.entry.exp > v.entry.ts
          ? v.entry.exp - v.entry.ts
          : tierSpan(this.ctx.retention.ttlMs[v.entry.tier]);
    if (span === undefined)
      return toMemoryRecord(v.entry, v.leafIndex, stored.bytes, stored.expiresAtNs);
    const exp = await this.ctx.view(opts.principal).extendExpiry(stored.id, now + span);
    await this.ctx.audit(opts.principal, 'entry.renewed', stored.id, {
      expiresAt: exp === undefined ? null : nsToIso(exp),
    });
    return toMemoryRecord(v.entry, v.leafIndex, stored.bytes, exp);
  }

  /** Signed tombstone; the entry disappears from reads, its leaf stays provable. */
  async delete(id: string, opts: { principal: string; reason: string }): Promise<void> {
    const stored = await this.owned(id, opts.principal);
    if (typeof opts.reason !== 'string' || opts.reason.length === 0) {
      throw new MemwardenError('INPUT_INVALID', 'a deletion needs a reason');
    }
    await this.writer.tombstone(stored.id, opts.reason, opts.principal);
  }

  async deleteAll(opts: { principal: string; reason?: string }): Promise<number> {
    this.writer.checkReason(opts.reason);
    const view = this.ctx.view(opts.principal);
    let n = 0;
    for (;;) {
      const rows = await view.listEntriesFor({
        limit: 500,
        owner: opts.principal,
        includeSuperseded: true,
      });
      if (rows.length === 0) return n;
      for (const r of rows) {
        await this.writer.tombstone(r.id, opts.reason ?? 'deleteAll', opts.principal);
        n++;
      }
    }
  }

  /**
   * The versions and deletion of an entry, oldest first, read in the principal's scope — or in
   * `scope` when the caller already decided a wider one (an operator's audited investigation).
   */
  async history(
    id: string,
    opts: { principal: string },
    scope?: StorageBackend,
  ): Promise<HistoryEvent[]> {
    const view = scope ?? this.ctx.view(opts.principal);
    // Walk back to the first version, then forward through supersededBy.
    // In the history's own scope (an operator's investigation: any principal's, issue 24).
    let first = await this.resolve(id, opts.principal, scope);
    if (first === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
    for (let guard = 0; guard < 10_000; guard++) {
      const v = await this.ctx.ledger.verifyStored(first);
      const sup = v.ok ? v.entry.sup : undefined;
      if (sup === undefined) break;
      const prev = await view.getEntry(sup);
      if (prev === undefined) break;
      first = prev;
    }
    const events: HistoryEvent[] = [];
    let cur: StoredEntry | undefined = first;
    for (let guard = 0; cur !== undefined && guard < 10_000; guard++) {
      const v = await this.ctx.ledger.verifyStored(cur);
      if (!v.ok) break;
      const memory = toMemoryRecord(v.entry, v.leafIndex, cur.bytes, cur.expiresAtNs);
      const before = events.findLast((x) => x.action === 'add' || x.action === 'update');
      events.push({
        action: v.entry.sup === undefined ? 'add' : 'update',
        id: cur.id,
        memoryId: memory.id,
        ...(v.entry.sup === undefined ? {} : { supersedes: v.entry.sup }),
        ...(v.entry.sup === undefined || before?.memory === undefined
          ? {}
          : { previous: before.memory.content }),
        actor: v.entry.writer,
        at: memory.createdAt,
        memory,
      });
      // A lower-tier write that contradicted this version was stored beside it (issue 20).
      for (const a of await this.ctx.storage.listAudit({ limit: 50, subject: cur.id })) {
        if (a.action !== 'entry.supersede_refused' || typeof a.details.by !== 'string') continue;
        events.push({
          action: 'conflict',
          id: a.details.by,
          memoryId: memory.id,
          actor: a.actor,
          at: nsToIso(a.atNs),
          reason: `a ${String(a.details.tier)} write may not supersede ${String(a.details.over)} memory`,
        });
      }
      if (cur.deleted === true) {
        // The tombstone's audit record is written by the ledger (system scope); the subject is
        // an entry this principal can see, so reading it here leaks nothing.
        const del = (await this.ctx.storage.listAudit({ limit: 50, subject: cur.id })).find(
          (a) => a.action === 'entry.deleted',
        );
        events.push({
          action: 'delete',
          id: cur.id,
          actor: del?.actor ?? v.entry.writer,
          at: del === undefined ? memory.createdAt : nsToIso(del.atNs),
          ...(typeof del?.details.reason === 'string' ? { reason: del.details.reason } : {}),
        });
      }
      cur = cur.supersededBy === undefined ? undefined : await view.getEntry(cur.supersededBy);
    }
    return events;
  }

  /**
   * Failure-mode recovery (the article's table): tombstone every own entry from a source URI or
   * with a content hash. With `allPrincipals`, an operator purges across every principal — the
   * recovery step after a poisoned source reached many users — explicitly: only a principal
   * whose signed registration is `operator` may, each tombstone is signed by the operator, and
   * the purge is audited with the count per owner. Rows are found by their columns and acted
   * on only when their signed record matches (the columns are a cache).
   */
  async purge(opts: {
    principal: string;
    source?: string;
    contentHash?: string;
    allPrincipals?: boolean;
    reason?: string;
  }): Promise<{ purged: number; owners: Record<string, number> }> {
    if (opts.source === undefined && opts.contentHash === undefined) {
      throw new MemwardenError('INPUT_INVALID', 'purge needs a source or a content hash');
    }
    if (opts.source !== undefined && (typeof opts.source !== 'string' || opts.source.length === 0))
      throw new MemwardenError('INPUT_INVALID', 'source must be a non-empty string');
    // A URI longer than any stored one (the entry record's limit) matches nothing: refused
    // before anything is done rather than after (issue 17).
    if (
      opts.source !== undefined &&
      (opts.source.length > LIMITS.uriChars || opts.source.includes('\u0000'))
    )
      throw new MemwardenError(
        'INPUT_INVALID',
        `source must be 1..${LIMITS.uriChars} chars without U+0000`,
      );
    const hash = opts.contentHash?.toLowerCase();
    if (hash !== undefined && !/^[0-9a-f]{64}$/.test(hash))
      throw new MemwardenError('INPUT_INVALID', 'contentHash must be 64 hex digits');
    this.writer.checkReason(opts.reason);
    const all = opts.allPrincipals === true;
    if (all && (await this.ctx.ledger.principalKind(opts.principal)) !== 'operator')
      throw new MemwardenError('AUTH_FORBIDDEN', 'only an operator purges across principals');
    const store = all ? this.ctx.storage : this.ctx.view(opts.principal);
    const rows = await store.findEntriesBy({
      ...(opts.source === undefined ? {} : { uri: opts.source }),
      ...(hash === undefined ? {} : { srcHash: hash }),
    });
    const what = opts.source ?? hash ?? '';
    // The default reason names what was purged, cut to fit a reason's bounds (limits.ts).
    const reason = opts.reason ?? Array.from(`purge ${what}`).slice(0, 256).join('');
    const owners: Record<string, number> = {};
    let n = 0;
    for (const r of rows) {
      if (!all && r.owner !== opts.principal) continue;
      const v = await this.ctx.ledger.verifyStored(r);
      if (!v.ok) continue; // unverifiable rows are the audit's, not a purge's to act on
      if (opts.source !== undefined && v.entry.uri !== opts.source) continue;
      if (hash !== undefined && toHex(v.entry.src) !== hash) continue;
      await this.writer.tombstone(r.id, reason, opts.principal);
      owners[r.owner] = (owners[r.owner] ?? 0) + 1;
      n++;
    }
    // The subject is bounded (a long URI is named by its hash): the audit index holds it.
    const subject =
      utf8.encode(what).length <= 256 ? what : `sha256:${toHex(sha256(utf8.encode(what)))}`;
    await this.ctx.audit(opts.principal, all ? 'purge.all_principals' : 'purge', subject, {
      count: n,
      ...(all ? { owners } : {}),
      ...(opts.source === undefined ? { contentHash: hash ?? null } : { source: opts.source }),
    });
    return { purged: n, owners };
  }
}
