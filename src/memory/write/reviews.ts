/**
 * @module memory/write/reviews
 * The review queue: held writes (flagged by screening or detection, or waiting for
 * extraction) are listed per principal (operators see all) and decided by an operator.
 *
 * What is held is one canonical record (issue 17 finding 4, ADR 0034): the content, tier,
 * principal, the options approval replays and the lineage resolved when the write was made,
 * encoded as canonical CBOR — the `payload` — and bound with the host's MAC to the item's id
 * and decision state. The reviewer is shown the fields of that record (after the MAC and the
 * row's columns are checked against it) and approval signs exactly it: an item whose payload,
 * content or state was edited at rest is shown as tampered and cannot be approved.
 *
 * Exactly one decision wins (finding 3): an approval's entry and the item's `pending →
 * approved` change commit in ONE transaction (the ledger's commit of the entry), so a
 * concurrent decision — in this process or another — either finds the item decided or makes
 * the approval's transaction fail, never both; decisions on one item in this process are also
 * taken one at a time. A loser gets `REVIEW_NOT_PENDING` naming the winning outcome.
 */
import { toHex } from '../../core/bytes.js';
import { sha256 } from '../../core/crypto/sha256.js';
import { MemwardenError, isMemwardenError } from '../../core/errors.js';
import type { ReviewRecord } from '../../ports/storage.js';
import type { ReviewItem } from '../api.js';
import type { MemoryContext } from '../context.js';
import { nsToIso } from '../read/records.js';
import { macInput, openHeld } from './held.js';
import type { WritePath } from './write-path.js';

export { auditReviews, openHeld, sealHeld, type HeldRecord } from './held.js';

export class ReviewQueue {
  /** Decisions in progress in this process, per item: the next one waits for it. */
  private readonly deciding = new Map<string, Promise<unknown>>();

  constructor(
    private readonly ctx: MemoryContext,
    private readonly writer: WritePath,
  ) {}

  async list(opts: { principal: string; status?: ReviewItem['status'] }): Promise<ReviewItem[]> {
    this.ctx.view(opts.principal); // refuses an empty principal
    // Operators review everything; anyone else sees their own held writes. The kind is the
    // signed registration's, not the `principals.kind` column.
    const kind = await this.ctx.ledger.principalKind(opts.principal);
    const store = kind === 'operator' ? this.ctx.storage : this.ctx.view(opts.principal);
    const rows = await store.listReviews(opts.status === undefined ? {} : { status: opts.status });
    return rows.map((r) => this.toItem(r));
  }

  /** The view of an item: the verified held record's fields, or the row flagged as tampered. */
  private toItem(r: ReviewRecord): ReviewItem {
    const o = openHeld(this.ctx.ledger.keys.macs, r);
    const base = {
      id: r.id,
      status: r.status,
      createdAt: nsToIso(r.createdAtNs),
      payloadSha256: toHex(sha256(r.payload)),
      ...(r.decidedBy === undefined ? {} : { decidedBy: r.decidedBy }),
      ...(r.memoryId === undefined ? {} : { memoryId: r.memoryId }),
    };
    if (o.ok) {
      const h = o.held;
      return {
        ...base,
        principal: h.principal,
        content: h.content,
        tier: h.tier,
        reasons: h.reasons,
        integrity: 'verified',
        ...(h.source === undefined ? {} : { source: h.source }),
        ...(h.parents.length === 0 ? {} : { parents: h.parents }),
      };
    }
    return {
      ...base,
      principal: r.principal,
      content: r.content,
      tier: r.tier,
      reasons: r.reasons,
      integrity: 'tampered',
    };
  }

  /**
   * Approve (commit the held record, marked reviewed-by, in the same transaction as the
   * decision) or reject; only operators decide, one decision per item.
   */
  async decide(
    id: string,
    decision: 'approve' | 'reject',
    opts: { reviewer: string; reason?: string },
  ): Promise<ReviewItem> {
    if ((await this.ctx.ledger.principalKind(opts.reviewer)) !== 'operator')
      throw new MemwardenError('AUTH_FORBIDDEN', 'only an operator reviews');
    // One decision on an item at a time in this process; the next sees its outcome.
    for (let prev = this.deciding.get(id); prev !== undefined; prev = this.deciding.get(id))
      await prev.catch(() => undefined);
    const run = this.decideOnce(id, decision, opts);
    this.deciding.set(id, run);
    try {
      return await run;
    } finally {
      if (this.deciding.get(id) === run) this.deciding.delete(id);
    }
  }

  private async decideOnce(
    id: string,
    decision: 'approve' | 'reject',
    opts: { reviewer: string; reason?: string },
  ): Promise<ReviewItem> {
    const item = await this.ctx.storage.getReview(id);
    if (item === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such review', { details: { id } });
    if (item.status !== 'pending') throw notPending(item);
    const macs = this.ctx.ledger.keys.macs;
    const opened = openHeld(macs, item);
    const decidedAtNs = this.ctx.clock.nowNs();
    const state = (status: 'approved' | 'rejected', memoryId?: string) => {
      const s = {
        status,
        decidedBy: opts.reviewer,
        decidedAtNs,
        ...(memoryId === undefined ? {} : { memoryId }),
      };
      const { kid, tag } = macs.tag(macInput(item.payload, s));
      return { ...s, macKid: kid, mac: tag };
    };
    let memoryId: string | undefined;
    try {
      if (decision === 'reject') {
        await this.ctx.storage.decideReview(id, state('rejected'));
      } else {
        // Approval signs exactly the sealed record the reviewer was shown; a tampered item
        // is refused (it can still be rejected).
        if (!opened.ok)
          throw new MemwardenError(opened.code, `review item does not verify: ${opened.why}`, {
            details: { id },
          });
        const h = opened.held;
        const m = await this.writer.commit(
          h.content,
          {
            principal: h.principal,
            tier: h.tier,
            ...(h.kind === undefined ? {} : { kind: h.kind }),
            ...(h.source === undefined ? {} : { source: h.source }),
            ...(h.ttlMs === undefined ? {} : { ttlMs: h.ttlMs }),
          },
          h.tier,
          { parents: h.parents, weights: h.weights, label: h.label },
          {
            rev: opts.reviewer,
            ...(h.sup === undefined ? {} : { sup: h.sup }),
            // The decision commits with the entry, or neither does.
            inCommit: async (tx, _leafIndex, entry) => {
              await tx.decideReview(id, state('approved', entry.id));
            },
          },
        );
        memoryId = m.id;
      }
    } catch (e) {
      // Another decision won meanwhile (another process, or a store-level race): say which.
      if (isMemwardenError(e, 'STORAGE_CONFLICT')) {
        const now = await this.ctx.storage.getReview(id);
        if (now !== undefined && now.status !== 'pending') throw notPending(now, e);
      }
      throw e;
    }
    const decided = decision === 'approve' ? 'approved' : 'rejected';
    await this.ctx.audit(opts.reviewer, `review.${decided}`, id, {
      reason: opts.reason ?? null,
      memoryId: memoryId ?? null,
    });
    const after = await this.ctx.storage.getReview(id);
    if (after === undefined) throw new MemwardenError('STORAGE_FAILED', 'decided review vanished');
    return this.toItem(after);
  }
}

/** `REVIEW_NOT_PENDING`, naming the decision that won. */
function notPending(r: ReviewRecord, cause?: unknown): MemwardenError {
  return new MemwardenError('REVIEW_NOT_PENDING', `review already ${r.status}`, {
    ...(cause === undefined ? {} : { cause }),
    details: {
      id: r.id,
      status: r.status,
      ...(r.decidedBy === undefined ? {} : { decidedBy: r.decidedBy }),
      ...(r.memoryId === undefined ? {} : { memoryId: r.memoryId }),
    },
  });
}
