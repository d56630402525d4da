/**
 * @module memory/memory
 * `Memory`: the Mem0-shaped library API over the ledger (write path, signatures, log) and a
 * principal-scoped storage view (read path under row-level security). Every call names its
 * principal; reads run through `storage.asPrincipal(principal)`, so isolation is enforced
 * by the database, and every returned entry is re-verified (MemLineage §3.6).
 */
import { fromBase64, toBase64, toHex, utf8 } from '../core/bytes.js';
import { MemwardenError } from '../core/errors.js';
import { verifyConsistency } from '../core/merkle/index.js';
import { type PrincipalKind, type SourceTier, mayWriteTier } from '../core/trust.js';
import { sha256 } from '../core/crypto/sha256.js';
import type { Clock, RandomSource } from '../ports/clock.js';
import type { Embedder } from '../ports/embedder.js';
import { type MetricsSink, noopMetrics } from '../ports/metrics.js';
import type { JsonValue, RootStorage, StorageBackend, StoredEntry } from '../ports/storage.js';
import type { LineageOptions } from '../core/lineage/index.js';
import { ActionChecker, gateFor } from './actions.js';
import type {
  ActionVerdict,
  AddOptions,
  AddResult,
  CheckActionInput,
  CheckpointView,
  ConsistencyProofView,
  HistoryEvent,
  InclusionProofView,
  MemoryApi,
  MemoryRecord,
  ReviewItem,
  SearchOptions,
  SearchResult,
} from './api.js';
import { type RetentionConfig, dayKey, retentionConfig } from './config.js';
import type { Ledger } from './ledger.js';
import { nsToIso, toCheckpointView, toMemoryRecord } from './records.js';
import { type WriteScreen, MarkerScreen } from './screen.js';
import { SearchEngine } from './search.js';
import type { LlmProvider } from '../ports/llm.js';
import { type DetectionPipeline, extractFacts } from './detect.js';
import { LazyDetection, findNearDuplicate, flaggedOf, needsExtraction } from './write.js';
import { type AttributionSpec, type ResolvedLineage, LineageWriter, lineageConfig } from './lineage.js';

export interface MemoryOptions {
  readonly ledger: Ledger;
  readonly storage: RootStorage;
  readonly embedder: Embedder;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly metrics?: MetricsSink;
  readonly retention?: RetentionConfig;
  readonly screens?: readonly WriteScreen[];
  /**
   * The lineage operating point (τ, fallback, strict knobs; MemLineage §3.5, §6.6). Default
   * `DEFAULT_LINEAGE_OPTIONS` (τ = 0, Trusted fallback); `strictLineageOptions(τ)` for §6.6.
   */
  readonly lineage?: LineageOptions;
  /** The attribution algorithm (§3.5): 'coarse' (default), `{ judge }`, `{ scripted }`, or one. */
  readonly attribution?: AttributionSpec;
  /** Turn auto-attribution (§4.4) off: only explicitly named parents count. */
  readonly explicitParentsOnly?: boolean;
  /** The gate's policy document (object or JSON text); default `DEFAULT_POLICY`. */
  readonly policy?: unknown;
  /**
   * The detection pipeline of issue 7: screens every write (`screenWrite`; flagged → review
   * queue) and scores every retrieved entry (`scoreRead`; flagged → dropped with
   * `POISONING_SIGNAL`). Absent: only `screens` run at write time and reads are not scored.
   */
  readonly detection?: DetectionPipeline;
  /** Benign reference texts the pipeline is calibrated on before its first use (lazily). */
  readonly detectionBenign?: readonly string[];
  /**
   * The extraction model (article Pattern 3): untrusted content becomes short facts, each
   * stored as its own entry. Absent: long untrusted content is held (`extraction_required`).
   */
  readonly extractor?: LlmProvider;
}

/** What a held write carries so approval can replay it exactly. */
interface HeldWrite {
  readonly content: string;
  readonly opts: Omit<AddOptions, 'embedding'>;
  /** The lineage resolved when the write was made (parents are immutable, so it stays valid). */
  readonly lineage: WriteLineage;
}

/** The lineage fields that go into the signed entry. */
type WriteLineage = Pick<ResolvedLineage, 'parents' | 'weights' | 'label'>;

const NS_PER_MS = 1_000_000n;

export class Memory implements MemoryApi {
  readonly ledger: Ledger;
  private readonly storage: RootStorage;
  private readonly metrics: MetricsSink;
  private readonly retention: RetentionConfig;
  private readonly screens: readonly WriteScreen[];
  private readonly clock: Clock;
  private readonly random: RandomSource;
  private readonly embedder: Embedder;
  private readonly search_: SearchEngine;
  private readonly lineage: LineageWriter;
  private readonly actions: ActionChecker;
  private readonly detection: LazyDetection | undefined;
  private readonly extractor: LlmProvider | undefined;

  constructor(opts: MemoryOptions) {
    this.ledger = opts.ledger;
    this.storage = opts.storage;
    this.embedder = opts.embedder;
    this.clock = opts.clock;
    this.random = opts.random;
    this.metrics = opts.metrics ?? noopMetrics;
    this.retention = opts.retention ?? retentionConfig();
    this.screens = opts.screens ?? [new MarkerScreen()];
    this.detection =
      opts.detection === undefined ? undefined : new LazyDetection(opts.detection, opts.detectionBenign);
    this.extractor = opts.extractor;
    const detection = this.detection;
    this.search_ = new SearchEngine({
      ...(detection === undefined ? {} : { detection: () => detection.get() }),
      random: this.random,
      ledger: this.ledger,
      embedder: this.embedder,
      clock: this.clock,
      metrics: this.metrics,
      retention: this.retention,
      audit: (p, action, subject, details) => this.audit(p, action, subject, details),
    });
    this.lineage = new LineageWriter(
      this.ledger,
      lineageConfig({
        ...(opts.lineage === undefined ? {} : { options: opts.lineage }),
        ...(opts.attribution === undefined ? {} : { attribution: opts.attribution }),
        ...(opts.explicitParentsOnly === undefined ? {} : { explicitParentsOnly: opts.explicitParentsOnly }),
      }),
    );
    const lineageOptions = this.lineage.config.options;
    this.actions = new ActionChecker(
      gateFor(opts.policy, lineageOptions),
      this.ledger,
      (p, action, subject, details) => this.audit(p, action, subject, details),
      lineageOptions,
    );
    this.metrics.setEntriesCollector(async () => {
      const counts = await this.storage.countEntries({ nowNs: this.clock.nowNs() });
      return Object.fromEntries(counts.map((c) => [c.tier, c.count]));
    });
  }

  private view(principal: string): StorageBackend {
    if (typeof principal !== 'string' || principal.length === 0) {
      throw new MemwardenError('AUTH_REQUIRED', 'every call names its principal');
    }
    return this.storage.asPrincipal(principal);
  }

  // ---- write path ----------------------------------------------------------------------------

  async add(content: string, opts: AddOptions): Promise<AddResult> {
    const tier: SourceTier = opts.tier ?? 'USER_OBSERVED';
    await this.checkWrite(content, opts.principal, tier);
    // Lineage first: an unknown or unverifiable parent rejects the write before anything else.
    const resolved = await this.lineage.resolve(this.view(opts.principal), {
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
      shortFactChars: this.retention.shortFactChars,
    });
    if (untrusted && this.extractor !== undefined) {
      return this.addExtracted(content, opts, tier, lineage, this.extractor);
    }
    // Without an extractor, a short marker-free untrusted fact may be stored as is (documented);
    // longer untrusted content waits for a reviewer unless the caller opted out (verbatim).
    if (untrusted && content.length > this.retention.shortFactChars) {
      return this.hold(content, opts, tier, lineage, [
        {
          reason: 'extraction_required',
          detail: `untrusted content over ${this.retention.shortFactChars} chars and no extractor configured`,
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
    const findings: { reason: string; detail: string }[] = this.screens.flatMap((s) => s.screen(content, tier));
    if (this.detection !== undefined) {
      const pipeline = await this.detection.get();
      const seen = new Set(findings.map((f) => f.reason));
      const screened = await pipeline.screenWrite({ content, tier, principal: opts.principal, embedding });
      for (const f of flaggedOf(screened)) {
        if (seen.has(f.detector)) continue; // the marker screen already reported it
        seen.add(f.detector);
        findings.push({ reason: f.detector, detail: f.reason });
      }
    }
    if (findings.length > 0) return this.hold(content, opts, tier, lineage, findings);
    const threshold = this.retention.nearDuplicateThreshold;
    if (threshold !== null && tier !== 'OPERATOR') {
      const dup = await findNearDuplicate(this.view(opts.principal), this.ledger, {
        principal: opts.principal,
        embedding,
        threshold,
        nowNs: this.clock.nowNs(),
      });
      if (dup !== undefined) {
        this.metrics.recordRejected('near_duplicate');
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
      for (const d of r.dropped) for (const reason of d.reasons) this.metrics.recordRejected(`extraction_${reason}`);
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
    const reviewId = this.newId();
    const { embedding: _e, ...rest } = opts;
    const held: HeldWrite = { content, opts: rest, lineage };
    await this.view(opts.principal).enqueueReview({
      id: reviewId,
      principal: opts.principal,
      tier,
      content,
      reasons: findings.map((f) => `${f.reason}: ${f.detail}`),
      payload: utf8.encode(JSON.stringify(held)),
      createdAtNs: this.clock.nowNs(),
    });
    for (const f of findings) this.metrics.recordRejected(f.reason);
    await this.audit(opts.principal, 'write.held', reviewId, {
      reasons: findings.map((f) => f.reason),
    });
    return { status: 'pending_review', reviewId, reasons: findings.map((f) => f.reason) };
  }

  /** Validation that changes nothing: principal, tier, size. */
  private async checkWrite(content: string, principal: string, tier: SourceTier): Promise<void> {
    if (typeof content !== 'string' || content.length === 0) {
      throw new MemwardenError('INPUT_INVALID', 'content must be a non-empty string');
    }
    if (utf8.encode(content).length > this.retention.maxContentBytes) {
      this.metrics.recordRejected('oversize');
      throw new MemwardenError(
        'INPUT_TOO_LARGE',
        `content over ${this.retention.maxContentBytes} bytes`,
      );
    }
    const p = await this.storage.getPrincipal(principal);
    if (p === undefined) throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    if (!mayWriteTier(p.kind, tier)) {
      this.metrics.recordRejected('tier_not_allowed');
      throw new MemwardenError(
        'AUTH_FORBIDDEN',
        `a ${p.kind} principal may not write tier ${tier}`,
      );
    }
  }

  /** Quota, embedding, expiry, then the signed write (lineage as resolved by the caller). */
  private async commit(
    content: string,
    opts: AddOptions,
    tier: SourceTier,
    lineage: WriteLineage,
    extra?: { sup?: string; rev?: string },
  ): Promise<MemoryRecord> {
    const now = this.clock.nowNs();
    const limit = this.retention.quotaPerDay[tier];
    if (limit !== null) {
      const q = await this.view(opts.principal).consumeQuota(
        opts.principal,
        tier,
        dayKey(now),
        limit,
      );
      if (!q.ok) {
        this.metrics.recordRejected('quota');
        throw new MemwardenError(
          'QUOTA_EXCEEDED',
          `daily ${tier} write quota of ${limit} reached`,
          {
            details: { tier, limit },
          },
        );
      }
    }
    const embedding = opts.embedding ?? (await this.embed(content));
    const ttl = opts.ttlMs === undefined ? this.retention.ttlMs[tier] : opts.ttlMs;
    const receipt = await this.ledger.write(
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
      { embedding },
    );
    this.metrics.recordWrite(tier);
    return toMemoryRecord(receipt.entry, receipt.leafIndex, receipt.bytes);
  }

  private async embed(text: string): Promise<Float32Array> {
    const t0 = process.hrtime.bigint();
    const [v] = await this.embedder.embed([text]);
    this.metrics.observeEmbedding(Number(process.hrtime.bigint() - t0) / 1e9);
    if (v === undefined) throw new MemwardenError('EMBEDDING_FAILED', 'embedder returned nothing');
    return v;
  }

  // ---- read path -----------------------------------------------------------------------------

  async search(query: string, opts: SearchOptions): Promise<SearchResult> {
    const r = await this.search_.search(this.view(opts.principal), query, opts);
    // on_retrieve (§4.4): these hits are the thread's candidate parents for the next write.
    this.lineage.recordRetrieval(
      opts.principal,
      opts.threadId,
      r.results.map((h) => h.memory.id),
    );
    return r;
  }

  // ---- action path ---------------------------------------------------------------------------

  /** The sensitive-action gate (MemLineage §3.7) on a proposed call; every verdict is audited. */
  checkAction(input: CheckActionInput): Promise<ActionVerdict> {
    return this.actions.check(this.view(input.principal), input);
  }

  async get(id: string, opts: { principal: string }): Promise<MemoryRecord | undefined> {
    const stored = await this.view(opts.principal).getEntry(id);
    if (stored === undefined || !this.isLive(stored)) return undefined;
    return this.search_.verified(stored, opts.principal);
  }

  async getAll(opts: {
    principal: string;
    limit?: number;
    offset?: number;
  }): Promise<MemoryRecord[]> {
    const rows = await this.view(opts.principal).listEntriesFor({
      limit: Math.min(Math.max(opts.limit ?? 100, 1), 1000),
      offset: opts.offset ?? 0,
      nowNs: this.clock.nowNs(),
    });
    const out: MemoryRecord[] = [];
    for (const r of rows) {
      const m = await this.search_.verified(r, opts.principal);
      if (m !== undefined) out.push(m);
    }
    return out;
  }

  private isLive(e: StoredEntry): boolean {
    if (e.deleted === true || e.supersededBy !== undefined) return false;
    return e.expiresAtNs === undefined || e.expiresAtNs > this.clock.nowNs();
  }

  /** Load an entry the principal owns (OPERATOR rows are readable but not theirs to change). */
  private async owned(id: string, principal: string): Promise<StoredEntry> {
    const stored = await this.view(principal).getEntry(id);
    if (stored === undefined || stored.deleted === true) {
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
    }
    if (stored.owner !== principal) throw new MemwardenError('AUTH_FORBIDDEN', 'not your memory');
    if ((await this.ledger.verifyStored(stored)).ok !== true) {
      throw new MemwardenError('ENTRY_SIGNATURE_INVALID', 'stored entry failed verification');
    }
    return stored;
  }

  // ---- update, delete, history, purge --------------------------------------------------------

  /** A new signed version that supersedes the old one (never a silent overwrite). */
  async update(
    id: string,
    content: string,
    opts: { principal: string; reason?: string },
  ): Promise<MemoryRecord> {
    const old = await this.owned(id, opts.principal);
    if (old.supersededBy !== undefined) {
      throw new MemwardenError('STORAGE_CONFLICT', 'memory already superseded', {
        details: { by: old.supersededBy },
      });
    }
    await this.checkWrite(content, opts.principal, old.tier);
    const prev = await this.ledger.verifyStored(old);
    if (!prev.ok) throw new MemwardenError(prev.code, 'stored entry failed verification');
    // A new version keeps the old one's signed lineage: an update never launders a label.
    const kept: WriteLineage = { parents: prev.entry.parents, weights: prev.entry.weights, label: prev.entry.label };
    const next = await this.commit(
      content,
      {
        principal: opts.principal,
        tier: old.tier,
        kind: prev.entry.kind,
        ...(prev.entry.uri === undefined ? {} : { source: prev.entry.uri }),
      },
      old.tier,
      kept,
      { sup: id },
    );
    await this.view(opts.principal).markSuperseded(id, next.id);
    await this.audit(opts.principal, 'entry.updated', id, {
      by: next.id,
      reason: opts.reason ?? null,
    });
    return next;
  }

  /** Signed tombstone; the entry disappears from reads, its leaf stays provable. */
  async delete(id: string, opts: { principal: string; reason: string }): Promise<void> {
    await this.owned(id, opts.principal);
    if (typeof opts.reason !== 'string' || opts.reason.length === 0) {
      throw new MemwardenError('INPUT_INVALID', 'a deletion needs a reason');
    }
    await this.ledger.tombstone(id, opts.reason, opts.principal);
  }

  async deleteAll(opts: { principal: string; reason?: string }): Promise<number> {
    const view = this.view(opts.principal);
    let n = 0;
    for (;;) {
      const rows = await view.listEntriesFor({
        limit: 500,
        owner: opts.principal,
        includeSuperseded: true,
      });
      if (rows.length === 0) return n;
      for (const r of rows) {
        await this.ledger.tombstone(r.id, opts.reason ?? 'deleteAll', opts.principal);
        n++;
      }
    }
  }

  async history(id: string, opts: { principal: string }): Promise<HistoryEvent[]> {
    const view = this.view(opts.principal);
    // Walk back to the first version, then forward through supersededBy.
    let first = await view.getEntry(id);
    if (first === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
    for (let guard = 0; guard < 10_000; guard++) {
      const v = await this.ledger.verifyStored(first);
      const sup = v.ok ? v.entry.sup : undefined;
      if (sup === undefined) break;
      const prev = await view.getEntry(sup);
      if (prev === undefined) break;
      first = prev;
    }
    const events: HistoryEvent[] = [];
    let cur: StoredEntry | undefined = first;
    for (let guard = 0; cur !== undefined && guard < 10_000; guard++) {
      const v = await this.ledger.verifyStored(cur);
      if (!v.ok) break;
      const memory = toMemoryRecord(v.entry, v.leafIndex, cur.bytes, cur.expiresAtNs);
      events.push({
        action: v.entry.sup === undefined ? 'add' : 'update',
        id: cur.id,
        actor: v.entry.writer,
        at: memory.createdAt,
        memory,
      });
      if (cur.deleted === true) {
        // The tombstone's audit record is written by the ledger (system scope); the subject is
        // an entry this principal can see, so reading it here leaks nothing.
        const del = (await this.storage.listAudit({ limit: 50, subject: cur.id })).find(
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

  /** Failure-mode recovery: tombstone every own entry from a source URI or with a content hash. */
  async purge(opts: { principal: string; source?: string; contentHash?: string }): Promise<number> {
    if (opts.source === undefined && opts.contentHash === undefined) {
      throw new MemwardenError('INPUT_INVALID', 'purge needs a source or a content hash');
    }
    const rows = await this.view(opts.principal).findEntriesBy({
      ...(opts.source === undefined ? {} : { uri: opts.source }),
      ...(opts.contentHash === undefined ? {} : { srcHash: opts.contentHash.toLowerCase() }),
    });
    let n = 0;
    for (const r of rows) {
      if (r.owner !== opts.principal) continue;
      await this.ledger.tombstone(r.id, `purge ${opts.source ?? opts.contentHash}`, opts.principal);
      n++;
    }
    await this.audit(opts.principal, 'purge', opts.source ?? opts.contentHash ?? '', { count: n });
    return n;
  }

  // ---- proofs --------------------------------------------------------------------------------

  async proof(id: string, opts: { principal: string }): Promise<InclusionProofView> {
    const visible = await this.view(opts.principal).getEntry(id);
    if (visible === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
    const p = await this.ledger.proveEntry(id);
    return {
      leafIndex: p.leafIndex,
      treeSize: p.treeSize,
      leafHash: toBase64(p.leafHash),
      hashes: p.hashes.map(toBase64),
      checkpoint: toCheckpointView(this.ledger.log.origin, p.checkpoint),
    };
  }

  async checkpoint(): Promise<CheckpointView> {
    return toCheckpointView(this.ledger.log.origin, await this.ledger.checkpoint());
  }

  async consistency(from: number, to: number): Promise<ConsistencyProofView> {
    const cp = await this.ledger.checkpoint();
    if (
      !Number.isSafeInteger(from) ||
      !Number.isSafeInteger(to) ||
      from < 1 ||
      to < from ||
      to > cp.size
    ) {
      throw new MemwardenError('LOG_SIZE_INVALID', `need 1 ≤ from ≤ to ≤ ${cp.size}`);
    }
    const target = to === cp.size ? cp : await this.storage.getCheckpoint(to);
    const hashes = await this.ledger.log.consistencyProof(from, to);
    const view = target ?? {
      size: to,
      root: await this.ledger.log.root(to),
      note: '',
      createdAtNs: 0n,
    };
    // Self-check before serving: a proof the log cannot verify is a corrupt log.
    const old = await this.ledger.log.root(from);
    if (!verifyConsistency(from, to, hashes, old, view.root) && from !== to) {
      throw new MemwardenError('LOG_CORRUPT', 'consistency self-check failed');
    }
    return {
      from,
      to,
      hashes: hashes.map(toBase64),
      checkpoint: toCheckpointView(this.ledger.log.origin, view),
    };
  }

  // ---- review queue --------------------------------------------------------------------------

  async listReviews(opts: {
    principal: string;
    status?: ReviewItem['status'];
  }): Promise<ReviewItem[]> {
    const p = await this.storage.getPrincipal(opts.principal);
    // Operators review everything; anyone else sees their own held writes.
    const store = p?.kind === 'operator' ? this.storage : this.view(opts.principal);
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
  async decideReview(
    id: string,
    decision: 'approve' | 'reject',
    opts: { reviewer: string; reason?: string },
  ): Promise<ReviewItem> {
    const reviewer = await this.storage.getPrincipal(opts.reviewer);
    if (reviewer?.kind !== 'operator')
      throw new MemwardenError('AUTH_FORBIDDEN', 'only an operator reviews');
    const item = await this.storage.getReview(id);
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
        (await this.lineage.resolve(this.view(item.principal), {
          principal: item.principal,
          content: held.content,
          tier: item.tier,
          parents: held.opts.parents ?? [],
          ...(held.opts.weights === undefined ? {} : { weights: held.opts.weights }),
        }));
      const m = await this.commit(held.content, held.opts, item.tier, lineage, { rev: opts.reviewer });
      memoryId = m.id;
    }
    const decided = await this.storage.decideReview(id, {
      status: decision === 'approve' ? 'approved' : 'rejected',
      decidedBy: opts.reviewer,
      decidedAtNs: this.clock.nowNs(),
      ...(memoryId === undefined ? {} : { memoryId }),
    });
    await this.audit(opts.reviewer, `review.${decided.status}`, id, {
      reason: opts.reason ?? null,
      memoryId: memoryId ?? null,
    });
    const [view] = (await this.listReviews({ principal: opts.reviewer })).filter(
      (r) => r.id === id,
    );
    if (view === undefined) throw new MemwardenError('STORAGE_FAILED', 'decided review vanished');
    return view;
  }

  // ---- principals and API keys ----------------------------------------------------------------

  /**
   * Register a principal (its Ed25519 key held by the host) and issue a bearer API key. The
   * secret is returned once; only its SHA-256 is stored.
   */
  async createPrincipal(kind: PrincipalKind, name: string): Promise<{ id: string; kid: string; apiKey: string }> {
    const p = await this.ledger.registerPrincipal(kind, name);
    const apiKey = await this.issueApiKey(p.id);
    await this.audit(p.id, 'principal.created', p.id, { kind, name });
    return { id: p.id, kid: p.kid, apiKey };
  }

  /** Issue another API key for an existing principal. */
  async issueApiKey(principalId: string): Promise<string> {
    if ((await this.storage.getPrincipal(principalId)) === undefined) {
      throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    }
    const apiKey = `mwk_${Buffer.from(this.random.randomBytes(32)).toString('base64url')}`;
    await this.storage.putApiKey({ principalId, keyHash: sha256(utf8.encode(apiKey)), createdAtNs: this.clock.nowNs() });
    return apiKey;
  }

  /**
   * The principal a bearer token belongs to, or undefined. The token is hashed first and the
   * hash looked up exactly, so lookup time does not depend on how much of a secret matched.
   */
  async authenticate(token: string): Promise<string | undefined> {
    if (typeof token !== 'string' || token.length < 8 || token.length > 256) return undefined;
    return this.storage.findApiKey(sha256(utf8.encode(token)));
  }

  // ---- plumbing ------------------------------------------------------------------------------

  private newId(): string {
    return toHex(this.random.randomBytes(16));
  }

  private async audit(
    actor: string,
    action: string,
    subject: string,
    details: { readonly [k: string]: JsonValue },
  ): Promise<void> {
    await this.storage.appendAudit({
      id: this.newId(),
      atNs: this.clock.nowNs(),
      actor,
      action,
      subject,
      details,
    });
  }

  async close(): Promise<void> {
    await this.ledger.close();
  }
}

/** Decode a base64 field of a MemoryRecord back to bytes (for proof checking by callers). */
export const recordBytes = (m: MemoryRecord): Uint8Array => fromBase64(m.bytes);
