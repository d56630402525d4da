/**
 * @module memory/write/reviews
 * The review queue: held writes (flagged by screening or detection, or waiting for
 * extraction) are listed per principal (operators see all) and decided by an operator.
 * Approval replays the held write exactly — its content, options and the lineage resolved
 * when it was made — signed with the reviewer as `rev`.
 */
import { MemwardenError } from '../../core/errors.js';
import type { ReviewItem } from '../api.js';
import type { MemoryContext } from '../context.js';
import type { LineageWriter } from './lineage.js';
import { nsToIso } from '../read/records.js';
import type { HeldWrite, WritePath } from './write-path.js';

export class ReviewQueue {
  constructor(
    private readonly ctx: MemoryContext,
    private readonly writer: WritePath,
    private readonly lineage: LineageWriter,
  ) {}

  async list(opts: {
    principal: string;
    status?: ReviewItem['status'];
  }): Promise<ReviewItem[]> {
    const p = await this.ctx.storage.getPrincipal(opts.principal);
    // Operators review everything; anyone else sees their own held writes.
    const store = p?.kind === 'operator' ? this.ctx.storage : this.ctx.view(opts.principal);
    const rows = await store.listReviews(opts.status === undefined ? {} : { status: opts.status });
    return rows.map((r) => ({
      id: r.id,
      principal: r.principal,
      content: r.content,
      tier: r.tier,
      reasons: r.reasons,
      status: r.status,
      createdAt: nsToIso(r.createdAtNs),
      ...(r.decidedBy === undefined ? {} : { decidedBy: r.decidedBy }),
      ...(r.memoryId === undefined ? {} : { memoryId: r.memoryId }),
    }));
  }

  /** Approve (replay the held write, marked reviewed-by) or reject; only operators decide. */
  async decide(
    id: string,
    decision: 'approve' | 'reject',
    opts: { reviewer: string; reason?: string },
  ): Promise<ReviewItem> {
    const reviewer = await this.ctx.storage.getPrincipal(opts.reviewer);
    if (reviewer?.kind !== 'operator')
      throw new MemwardenError('AUTH_FORBIDDEN', 'only an operator reviews');
    const item = await this.ctx.storage.getReview(id);
    if (item === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such review', { details: { id } });
    if (item.status !== 'pending')
      throw new MemwardenError('REVIEW_NOT_PENDING', `review already ${item.status}`);
    let memoryId: string | undefined;
    if (decision === 'approve') {
      const held = JSON.parse(new TextDecoder().decode(item.payload)) as HeldWrite;
      // Held before lineage was recorded in the payload: resolve it now from explicit parents.
      const lineage =
        (held as Partial<HeldWrite>).lineage ??
        (await this.lineage.resolve(this.ctx.view(item.principal), {
          principal: item.principal,
          content: held.content,
          tier: item.tier,
          parents: held.opts.parents ?? [],
          ...(held.opts.weights === undefined ? {} : { weights: held.opts.weights }),
        }));
      const m = await this.writer.commit(held.content, held.opts, item.tier, lineage, {
        rev: opts.reviewer,
        ...(held.sup === undefined ? {} : { sup: held.sup }),
      });
      memoryId = m.id;
    }
    const decided = await this.ctx.storage.decideReview(id, {
      status: decision === 'approve' ? 'approved' : 'rejected',
      decidedBy: opts.reviewer,
      decidedAtNs: this.ctx.clock.nowNs(),
      ...(memoryId === undefined ? {} : { memoryId }),
    });
    await this.ctx.audit(opts.reviewer, `review.${decided.status}`, id, {
      reason: opts.reason ?? null,
      memoryId: memoryId ?? null,
    });
    const [view] = (await this.list({ principal: opts.reviewer })).filter(
      (r) => r.id === id,
    );
    if (view === undefined) throw new MemwardenError('STORAGE_FAILED', 'decided review vanished');
    return view;
  }
}
