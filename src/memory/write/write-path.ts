/**
 * @module memory/write/write-path
 * `Memory.add` and the signed commit under it (article Patterns 1 and 3; MemLineage §4.4):
 * validation that changes nothing (size, principal, tier), lineage resolution, extraction of
 * untrusted content into short facts (or a hold), screening (markers, then the detection
 * pipeline; flagged → review queue with the findings), near-duplicate rejection, quota, and
 * the ledger write. `commit` is shared with updates and approved reviews.
 */
import { utf8 } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import { type PrincipalKind, type SourceTier, mayWriteTier } from '../../core/trust.js';
import type { Embedder } from '../../ports/embedder.js';
import type { LlmProvider } from '../../ports/llm.js';
import type { AddOptions, AddResult, MemoryRecord } from '../api.js';
import { checkTtlMs, dayKey } from '../config.js';
import type { MemoryContext } from '../context.js';
import { extractFacts } from '../detect/pipeline.js';
import type { LineageWriter, ResolvedLineage } from './lineage.js';
import { toMemoryRecord } from '../read/records.js';
import type { WriteScreen } from '../detect/screen.js';
import { findNearDuplicate, flaggedOf, needsExtraction } from './write.js';
import type { DetectionHooks } from '../detect/calibration.js';

/** What a held write carries so approval can replay it exactly. */
export interface HeldWrite {
  readonly content: string;
  readonly opts: Omit<AddOptions, 'embedding'>;
  /** The lineage resolved when the write was made (parents are immutable, so it stays valid). */
  readonly lineage: WriteLineage;
}

/** The lineage fields that go into the signed entry. */
export type WriteLineage = Pick<ResolvedLineage, 'parents' | 'weights' | 'label'>;

export interface WritePathDeps {
  readonly embedder: Embedder;
  readonly screens: readonly WriteScreen[];
  readonly detection: DetectionHooks | undefined;
  readonly extractor: LlmProvider | undefined;
}

const NS_PER_MS = 1_000_000n;

export class WritePath {
  constructor(
    private readonly ctx: MemoryContext,
    private readonly lineage: LineageWriter,
    private readonly d: WritePathDeps,
  ) {}

  async add(content: string, opts: AddOptions): Promise<AddResult> {
    const tier: SourceTier = opts.tier ?? 'USER_OBSERVED';
    await this.checkWrite(content, opts.principal, tier, opts.source);
    if (opts.ttlMs !== undefined) checkTtlMs(opts.ttlMs, true);
    // Lineage first: an unknown or unverifiable parent rejects the write before anything else.
    const resolved = await this.lineage.resolve(this.ctx.view(opts.principal), {
      principal: opts.principal,
      content,
      tier,
      ...(opts.threadId === undefined ? {} : { threadId: opts.threadId }),
      ...(opts.parents === undefined ? {} : { parents: opts.parents }),
      ...(opts.weights === undefined ? {} : { weights: opts.weights }),
      ...(opts.derived === undefined ? {} : { derived: opts.derived }),
      ...(opts.multiHop === undefined ? {} : { multiHop: opts.multiHop }),
      ...(opts.step === undefined ? {} : { step: opts.step }),
    });
    const lineage: WriteLineage = { parents: resolved.parents, weights: resolved.weights, label: resolved.label };
    // Pattern 3: untrusted content is never stored verbatim by default.
    const untrusted = needsExtraction(content, tier, {
      ...(opts.verbatim === undefined ? {} : { verbatim: opts.verbatim }),
      shortFactChars: this.ctx.retention.shortFactChars,
    });
    if (untrusted && this.d.extractor !== undefined) {
      return this.addExtracted(content, opts, tier, lineage, this.d.extractor);
    }
    // Without an extractor, a short marker-free untrusted fact may be stored as is (documented);
    // longer untrusted content waits for a reviewer unless the caller opted out (verbatim).
    if (untrusted && content.length > this.ctx.retention.shortFactChars) {
      return this.hold(content, opts, tier, lineage, [
        {
          reason: 'extraction_required',
          detail: `untrusted content over ${this.ctx.retention.shortFactChars} chars and no extractor configured`,
        },
      ]);
    }
    return this.addOne(content, opts, tier, lineage);
  }

  /** Screen (markers, then the detection pipeline), reject near-duplicates, then commit. */
  private async addOne(
    content: string,
    opts: AddOptions,
    tier: SourceTier,
    lineage: WriteLineage,
  ): Promise<AddResult> {
    // One embedding, computed before screening and reused for storage.
    const embedding = opts.embedding ?? (await this.embed(content));
    const findings: { reason: string; detail: string }[] = this.d.screens.flatMap((s) => s.screen(content, tier));
    if (this.d.detection !== undefined) {
      const seen = new Set(findings.map((f) => f.reason));
      const screened = await this.d.detection.screenWrite(opts.principal, {
        content,
        tier,
        principal: opts.principal,
        embedding,
      });
      for (const f of flaggedOf(screened)) {
        if (seen.has(f.detector)) continue; // the marker screen already reported it
        seen.add(f.detector);
        findings.push({ reason: f.detector, detail: f.reason });
      }
    }
    if (findings.length > 0) return this.hold(content, opts, tier, lineage, findings);
    const threshold = this.ctx.retention.nearDuplicateThreshold;
    if (threshold !== null && tier !== 'OPERATOR' && opts.keyed !== true) {
      const dup = await findNearDuplicate(this.ctx.view(opts.principal), this.ctx.ledger, {
        principal: opts.principal,
        embedding,
        threshold,
        nowNs: this.ctx.clock.nowNs(),
        model: this.ctx.readModel,
      });
      if (dup !== undefined) {
        this.ctx.metrics.recordRejected('near_duplicate');
        throw new MemwardenError('STORAGE_CONFLICT', 'a near-duplicate of an existing memory', {
          details: { reason: 'near_duplicate', of: dup.id, similarity: Number(dup.similarity.toFixed(4)) },
        });
      }
    }
    return { status: 'stored', memory: await this.commit(content, { ...opts, embedding }, tier, lineage) };
  }

  /** Extraction (Pattern 3): each short fact the model finds is written as its own entry. */
  private async addExtracted(
    content: string,
    opts: AddOptions,
    tier: SourceTier,
    lineage: WriteLineage,
    extractor: LlmProvider,
  ): Promise<AddResult> {
    let facts: readonly string[];
    try {
      const r = await extractFacts(content, extractor, { tier });
      facts = r.facts.map((f) => f.fact);
      for (const d of r.dropped) for (const reason of d.reasons) this.ctx.metrics.recordRejected(`extraction_${reason}`);
    } catch (e) {
      if (!(e instanceof MemwardenError)) throw e;
      // Fail closed: nothing stored, the content waits for a reviewer.
      return this.hold(content, opts, tier, lineage, [{ reason: 'extraction_failed', detail: e.code }]);
    }
    if (facts.length === 0) {
      return this.hold(content, opts, tier, lineage, [{ reason: 'extraction_empty', detail: 'no storable fact extracted' }]);
    }
    const { embedding: _e, ...rest } = opts;
    const stored: MemoryRecord[] = [];
    const held: { reviewId: string; reasons: readonly string[] }[] = [];
    let firstError: unknown;
    for (const fact of facts) {
      try {
        const r = await this.addOne(fact, { ...rest, verbatim: true }, tier, lineage);
        if (r.status === 'stored') stored.push(r.memory);
        else held.push({ reviewId: r.reviewId, reasons: r.reasons });
      } catch (e) {
        // A near-duplicate fact is already known: skip it, keep the others.
        if (e instanceof MemwardenError && e.code === 'STORAGE_CONFLICT') {
          firstError ??= e;
          continue;
        }
        throw e;
      }
    }
    const [first, ...others] = stored;
    if (first === undefined) {
      const h = held[0];
      if (h !== undefined) return { status: 'pending_review', reviewId: h.reviewId, reasons: h.reasons };
      throw firstError;
    }
    return {
      status: 'stored',
      memory: first,
      ...(others.length === 0 ? {} : { extra: others }),
      ...(held.length === 0 ? {} : { heldFacts: held.map((h) => h.reviewId) }),
    };
  }

  /** Hold a write in the review queue (pending, never dropped), counted per reason. */
  private async hold(
    content: string,
    opts: AddOptions,
    tier: SourceTier,
    lineage: WriteLineage,
    findings: readonly { reason: string; detail: string }[],
  ): Promise<AddResult> {
    const reviewId = this.ctx.newId();
    const { embedding: _e, ...rest } = opts;
    const held: HeldWrite = { content, opts: rest, lineage };
    await this.ctx.view(opts.principal).enqueueReview({
      id: reviewId,
      principal: opts.principal,
      tier,
      content,
      reasons: findings.map((f) => `${f.reason}: ${f.detail}`),
      payload: utf8.encode(JSON.stringify(held)),
      createdAtNs: this.ctx.clock.nowNs(),
    });
    for (const f of findings) this.ctx.metrics.recordRejected(f.reason);
    await this.ctx.audit(opts.principal, 'write.held', reviewId, {
      reasons: findings.map((f) => f.reason),
    });
    return { status: 'pending_review', reviewId, reasons: findings.map((f) => f.reason) };
  }

  /** Validation that changes nothing: principal, tier, size. */
  async checkWrite(content: string, principal: string, tier: SourceTier, source?: string): Promise<void> {
    if (typeof content !== 'string' || content.length === 0) {
      throw new MemwardenError('INPUT_INVALID', 'content must be a non-empty string');
    }
    // PostgreSQL text cannot hold U+0000: refused here, before quota or the group commit (where
    // it would fail the whole batch, other principals' writes included). Found by test/fuzz.
    if (content.includes('\u0000') || source?.includes('\u0000') === true) {
      throw new MemwardenError('INPUT_INVALID', 'content and source must not contain U+0000');
    }
    if (utf8.encode(content).length > this.ctx.retention.maxContentBytes) {
      this.ctx.metrics.recordRejected('oversize');
      throw new MemwardenError(
        'INPUT_TOO_LARGE',
        `content over ${this.ctx.retention.maxContentBytes} bytes`,
      );
    }
    const p = await this.principalOf(principal);
    if (p === undefined) throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    if (!mayWriteTier(p.kind, tier)) {
      this.ctx.metrics.recordRejected('tier_not_allowed');
      throw new MemwardenError(
        'AUTH_FORBIDDEN',
        `a ${p.kind} principal may not write tier ${tier}`,
      );
    }
  }

  /**
   * A registered principal's kind, cached: principals are never deleted and their kind never
   * changes, so a positive answer stays true; unknown ids are looked up every time.
   */
  private async principalOf(id: string): Promise<{ readonly kind: PrincipalKind } | undefined> {
    const hit = this.kinds.get(id);
    if (hit !== undefined) return hit;
    const p = await this.ctx.storage.getPrincipal(id);
    if (p === undefined) return undefined;
    if (this.kinds.size >= 10_000) this.kinds.clear();
    const kept = { kind: p.kind };
    this.kinds.set(id, kept);
    return kept;
  }
  private readonly kinds = new Map<string, { readonly kind: PrincipalKind }>();

  /**
   * Embedding, expiry, then the signed write (lineage as resolved by the caller). The daily
   * quota is consumed by the ledger inside the write's commit transaction (ADR 0021): counted
   * only if the write commits, refused (`QUOTA_EXCEEDED`, nothing written) over the limit.
   */
  async commit(
    content: string,
    opts: AddOptions,
    tier: SourceTier,
    lineage: WriteLineage,
    extra?: { sup?: string; rev?: string },
  ): Promise<MemoryRecord> {
    const now = this.ctx.clock.nowNs();
    const limit = this.ctx.retention.quotaPerDay[tier];
    const embedding = opts.embedding ?? (await this.embed(content));
    const ttl = opts.ttlMs === undefined ? this.ctx.retention.ttlMs[tier] : opts.ttlMs;
    let receipt;
    try {
      receipt = await this.ctx.ledger.write(
        {
          writer: opts.principal,
          content,
          tier,
          kind: opts.kind ?? 'fact',
          ...(opts.source === undefined ? {} : { uri: opts.source }),
          label: lineage.label,
          parents: lineage.parents,
          weights: lineage.weights,
          ...(ttl === null ? {} : { exp: now + BigInt(Math.round(ttl)) * NS_PER_MS }),
          ...(extra?.sup === undefined ? {} : { sup: extra.sup }),
          ...(extra?.rev === undefined ? {} : { rev: extra.rev }),
        },
        { embedding, ...(limit === null ? {} : { quota: { dayKey: dayKey(now), limit } }) },
      );
    } catch (e) {
      if (e instanceof MemwardenError && e.code === 'QUOTA_EXCEEDED') this.ctx.metrics.recordRejected('quota');
      throw e;
    }
    this.ctx.metrics.recordWrite(tier);
    // Rolling calibration: a stored trusted write joins its principal's benign reference.
    this.d.detection?.stored(opts.principal, { content, tier, label: lineage.label, embedding });
    return toMemoryRecord(receipt.entry, receipt.leafIndex, receipt.bytes);
  }

  async embed(text: string): Promise<Float32Array> {
    const t0 = process.hrtime.bigint();
    const [v] = await this.d.embedder.embed([text]);
    this.ctx.metrics.observeEmbedding(Number(process.hrtime.bigint() - t0) / 1e9);
    if (v === undefined) throw new MemwardenError('EMBEDDING_FAILED', 'embedder returned nothing');
    return v;
  }
}
