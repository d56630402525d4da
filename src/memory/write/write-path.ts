/**
 * @module memory/write/write-path
 * THE write path (issue 17, ADR 0029): every write of every channel — `Memory.add` (library,
 * HTTP, CLI, MCP memory tools, the LangGraph store, the AI SDK middleware), updates, knowledge-
 * graph objects (MCP graph tools, `GraphMemory`), approved reviews and tombstones — runs here,
 * through the stages of `stages.ts`:
 *
 * 1. limits — every caller string bounded in code points and bytes, no NUL / lone surrogate;
 * 2. principal — a registered writer, the tier within its kind's ceiling (`mayWriteTier`);
 * 3. ttl — the TTL within the tier's ceiling (no immortal untrusted memory by default);
 * 4. lineage — explicit parents plus the scoped retrieval's; caller lineage only adds taint;
 * 5. extraction — untrusted content becomes short facts, or waits for a reviewer (Pattern 3);
 * 6. embedding — computed once, reused by screening, the near-duplicate check and storage;
 * 7. screening — the marker screens, then detection (`screenWrite`); a finding holds the write;
 * 8. dedupe — consolidation (issue 20, ADR 0051): ADD, UPDATE (the new version supersedes
 *    the memory it corrects) or NOOP (already remembered); the near-duplicate refusal of before
 *    stays available as {@link WritePath.nearDuplicateStage};
 * 9. commit — the daily quota in the commit transaction, sign, log, store, metrics.
 *
 * The commit capability (`../log/commit.ts`) is importable from this folder only (the
 * dependency rule `commit-only-from-the-write-path`): nothing else can write an entry.
 */
import { MemwardenError } from '../../core/errors.js';
import { type PrincipalKind, type SourceTier, mayWriteTier } from '../../core/trust.js';
import type { Embedder } from '../../ports/embedder.js';
import type { LlmProvider } from '../../ports/llm.js';
import type { AddOptions, AddResult, LineageReport, MemoryRecord } from '../api.js';
import { checkTtlMs, dayKey } from '../config.js';
import type { MemoryContext } from '../context.js';
import { extractFacts } from '../detect/pipeline.js';
import { type Committer, type EntryInput, type WriteOptions, committerOf } from '../log/commit.js';
import type { LineageRequest, LineageWriter, ResolvedLineage } from './lineage.js';
import { toMemoryRecord } from '../read/records.js';
import type { WriteScreen } from '../detect/screen.js';
import { UNTRUSTED_WRITE_TIERS, findNearDuplicate, flaggedOf, needsExtraction } from './write.js';
import {
  type Decision,
  type LlmConsolidation,
  type NewFact,
  addsWhateverVerifies,
  addsWithoutCandidates,
  decide,
  nearestOwn,
  verifiedCandidates,
} from './consolidate.js';
import { checkEventAt, checkMetadata, checkScopeId } from '../scope.js';
import type { JsonObject } from '../../core/entry/meta.js';
import { sealHeld } from './held.js';
import type { DetectionHooks } from '../detect/calibration.js';
import { checkOptional, checkString, checkStructured } from './limits.js';
import type { HoldFinding, StageResult, WriteDraft, WriteStage } from './stages.js';
import { DEFAULT_FLOOD_POLICY, FloodWindow, type FloodPolicy } from '../../core/smsr/flood.js';

/** The lineage fields that go into the signed entry. */
export type WriteLineage = Pick<ResolvedLineage, 'parents' | 'weights' | 'label'>;

export interface WritePathDeps {
  readonly embedder: Embedder;
  readonly screens: readonly WriteScreen[];
  readonly detection: DetectionHooks | undefined;
  readonly extractor: LlmProvider | undefined;
  /** The LLM consolidation step; absent: the deterministic default (`./consolidate.ts`). */
  readonly consolidation?: LlmConsolidation | undefined;
  /**
   * The stage in the dedupe slot; default {@link WritePath.consolidationStage} (issue 20:
   * ADD / UPDATE / NOOP). {@link WritePath.nearDuplicateStage} is the refusal of before.
   */
  readonly dedupe?: (path: WritePath) => WriteStage;
  /**
   * Flood control (issue 19, `core/smsr/flood`): mutually similar writes per window from an
   * untrusted tier, a non-user writer or one source beyond the budget are held for review.
   * Default `DEFAULT_FLOOD_POLICY`; null turns it off.
   */
  readonly flood?: FloodPolicy | null;
}

/** The entry v2 fields of a write (metadata, event time, scopes), checked (ADR 0048). */
export function v2Fields(opts: AddOptions): {
  meta?: JsonObject;
  evt?: bigint;
  run?: string;
  agent?: string;
} {
  const meta = checkMetadata(opts.metadata);
  const evt = checkEventAt(opts.eventAt);
  const run = checkScopeId(opts.runId, 'runId');
  const agent = checkScopeId(opts.agentId, 'agentId');
  return {
    ...(meta === undefined ? {} : { meta }),
    ...(evt === undefined ? {} : { evt }),
    ...(run === undefined ? {} : { run }),
    ...(agent === undefined ? {} : { agent }),
  };
}

/** How many times a consolidation UPDATE is decided again after losing a race (then refused). */
const CONSOLIDATION_RETRIES = 2;

/** Entry kinds that are structure, not memories: no stored embedding, no near-duplicate check. */
const STRUCTURE_KINDS: ReadonlySet<string> = new Set(['graph', 'passage']);

/** One graph object for {@link WritePath.writeGraph}. */
export interface GraphWriteItem {
  /** The signed content (the object's canonical encoding, or a passage's text). */
  readonly content: string;
  readonly kind: 'graph' | 'passage';
  /** The object's own text, what screening reads. */
  readonly screenText: string;
  /** Entries it derives from (weight 1 each; verified like any explicit parent). */
  readonly parents?: readonly string[];
}

/** The outcome of one graph object's write. */
export type GraphWriteOutcome =
  | { readonly status: 'stored'; readonly memory: MemoryRecord }
  | {
      readonly status: 'pending_review';
      readonly reviewId: string;
      readonly reasons: readonly string[];
    };

const NS_PER_MS = 1_000_000n;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
const isPromise = <T>(x: T | Promise<T>): x is Promise<T> =>
  typeof (x as { then?: unknown } | null)?.then === 'function';

/** The report of a lineage on the add result (issue 24: which parents, and why). */
function reportOf(l: WriteLineage, r: ResolvedLineage | undefined): LineageReport {
  const basis = r?.basis ?? (l.parents.length > 0 ? 'explicit' : 'none');
  const why: string[] = [];
  if (basis === 'none') why.push('no parents: not derived from a retrieval or a named entry');
  if (basis === 'explicit' || basis === 'explicit+retrieval')
    why.push('parents named by the caller');
  if (basis === 'retrieval' || basis === 'explicit+retrieval')
    why.push(
      r?.thread === ''
        ? 'parents from the last retrieval (fromLastRetrieval)'
        : `parents from the last retrieval of thread ${r?.thread ?? ''}`,
    );
  if (basis === 'override') why.push("an operator's lineage override (audited)");
  if (r?.raised === true)
    why.push(
      'raised to the recorded retrieval and attribution floor (caller lineage only adds taint)',
    );
  // Set one by one (the file's pattern for optional fields): no object per write for a
  // conditional spread, and the keys in the report's order (thread before raised).
  const report: Partial<Mutable<LineageReport>> = {
    parents: [...l.parents],
    weights: [...l.weights],
    label: l.label,
    basis,
    autoParents: [...(r?.autoParents ?? [])],
  };
  if (r?.thread !== undefined) report.thread = r.thread;
  report.raised = r?.raised ?? false;
  report.reason = why.join('; ');
  return report as LineageReport;
}

export class WritePath {
  private readonly committer: Committer;
  /** `add`: every stage. */
  private readonly addStages: readonly WriteStage[];
  /** An update's new version: no extraction, no near-duplicate check (a correction is kept). */
  private readonly updateStages: readonly WriteStage[];
  /** Graph objects: no extraction, no near-duplicate check (the graph dedupes by key). */
  private readonly graphStages: readonly WriteStage[];
  /** An approved review's replay: no screening (a reviewer decided), still every bound. */
  private readonly replayStages: readonly WriteStage[];

  constructor(
    private readonly ctx: MemoryContext,
    private readonly lineage: LineageWriter,
    private readonly d: WritePathDeps,
  ) {
    this.committer = committerOf(ctx.ledger);
    const limits = this.limitsStage();
    const principal = this.principalStage();
    const ttl = this.ttlStage();
    const lineageStage = this.lineageStage();
    const embedding = this.embeddingStage();
    const screening = this.screeningStage();
    const commit = this.commitStage();
    const dedupe = d.dedupe === undefined ? this.consolidationStage() : d.dedupe(this);
    const flood =
      d.flood === null ? [] : [this.floodStage(new FloodWindow(d.flood ?? DEFAULT_FLOOD_POLICY))];
    this.addStages = [
      limits,
      principal,
      ttl,
      lineageStage,
      this.extractionStage(),
      embedding,
      screening,
      dedupe,
      ...flood,
      commit,
    ];
    this.updateStages = [limits, principal, ttl, embedding, screening, commit];
    this.graphStages = [limits, principal, ttl, lineageStage, screening, commit];
    // No embedding stage: nothing screens it; the commit embeds what it stores.
    this.replayStages = [limits, principal, ttl, commit];
  }

  // ---- entry points ------------------------------------------------------------------------

  /** `Memory.add`: the whole pipeline. */
  add(content: string, opts: AddOptions): Promise<AddResult> {
    return this.run(this.addStages, this.draft(content, opts), 0);
  }

  /**
   * An update's new version (`versions.ts`): superseding `sup`, keeping the old version's
   * signed lineage (an update never launders a label), screened like any write (held for
   * review when flagged).
   */
  update(
    content: string,
    opts: AddOptions,
    lineage: WriteLineage,
    sup: string,
  ): Promise<AddResult> {
    const d: WriteDraft = {
      ...this.draft(content, opts),
      lineage: asResolved(lineage),
      sup,
      noExtraction: true,
    };
    return this.run(this.updateStages, d, 0);
  }

  /**
   * Commit a write whose lineage is known and that needs no screening: an approved review's
   * exact replay (`rev`: the reviewer) or a held update's (`sup`). Limits, the tier ceiling, the
   * TTL ceiling and the quota still apply.
   */
  async commit(
    content: string,
    opts: AddOptions,
    tier: SourceTier,
    lineage: WriteLineage,
    extra?: {
      sup?: string;
      rev?: string;
      /** Commits in the entry's own transaction (a review's decision, reviews.ts). */
      inCommit?: WriteDraft['inCommit'];
    },
  ): Promise<MemoryRecord> {
    const d: WriteDraft = {
      ...this.draft(content, { ...opts, tier }),
      lineage: asResolved(lineage),
      noExtraction: true,
      ...(extra?.sup === undefined ? {} : { sup: extra.sup }),
      ...(extra?.rev === undefined ? {} : { rev: extra.rev }),
      ...(extra?.inCommit === undefined ? {} : { inCommit: extra.inCommit }),
    };
    const r = await this.run(this.replayStages, d, 0);
    if (r.status !== 'stored')
      throw new MemwardenError('STORAGE_FAILED', 'a replayed write was held');
    return r.memory;
  }

  /**
   * Knowledge-graph objects of one call (`GraphMemory`): each screened on its own text and
   * held for review when flagged, stored as a signed entry of kind `graph` (or `passage`)
   * with its tier's TTL, counted against the quota. Every item is checked (limits, principal,
   * TTL) before any is written; the rest run concurrently, so one call is a few group commits.
   * A commit failure (e.g. the quota) fails the call after the others settled.
   */
  async writeGraph(
    items: readonly GraphWriteItem[],
    w: {
      principal: string;
      tier: SourceTier;
      threadId?: string;
      fromLastRetrieval?: boolean;
      parents?: readonly string[];
    },
  ): Promise<GraphWriteOutcome[]> {
    // What the call derives from (issue 19): the writer's explicit parents and its scoped
    // retrieval, resolved by the lineage stage like any write's; an object's own parents (an
    // extraction's passage, a synonym's entities) are added.
    const drafts = items.map((it): WriteDraft => {
      const parents = [...new Set([...(it.parents ?? []), ...(w.parents ?? [])])];
      return {
        ...this.draft(it.content, {
          principal: w.principal,
          tier: w.tier,
          kind: it.kind,
          ...(w.threadId === undefined ? {} : { threadId: w.threadId }),
          ...(w.fromLastRetrieval === undefined ? {} : { fromLastRetrieval: w.fromLastRetrieval }),
          ...(parents.length === 0 ? {} : { parents, weights: parents.map(() => 1) }),
        }),
        screenText: it.screenText,
        noExtraction: true,
      };
    });
    // The cheap, synchronous bounds of every item first: a bad item changes nothing.
    const ready: WriteDraft[] = [];
    for (const d of drafts) ready.push(await this.runUntil(this.graphStages, d, 'lineage'));
    // One embedding call for the call's screening (the detection pipeline needs vectors).
    if (this.d.detection !== undefined && ready.length > 0) {
      const vs = await this.embedMany(ready.map((d) => d.screenText));
      ready.forEach((d, i) => (ready[i] = { ...d, embedding: vs[i] as Float32Array }));
    }
    const at = this.graphStages.findIndex((s) => s.name === 'lineage');
    const settled = await Promise.allSettled(ready.map((d) => this.run(this.graphStages, d, at)));
    const out: GraphWriteOutcome[] = [];
    for (const s of settled) {
      if (s.status === 'rejected') throw s.reason;
      const r = s.value;
      out.push(
        r.status === 'stored'
          ? { status: 'stored', memory: r.memory }
          : { status: 'pending_review', reviewId: r.reviewId, reasons: r.reasons },
      );
    }
    return out;
  }

  /** A signed tombstone for `target` by `by` (ownership is the caller's check). */
  async tombstone(target: string, reason: string, by: string): Promise<void> {
    checkString(reason, 'reason', this.ctx.retention.limits);
    await this.committer.tombstone(target, reason, by);
  }

  /** Bounds of a reason given with a delete, update or review decision. */
  checkReason(reason: string | undefined): void {
    checkOptional(reason, 'reason', this.ctx.retention.limits);
  }

  /**
   * Validation that changes nothing: content, principal, tier (kept for callers that check
   * before they act; the pipeline runs the same stages).
   */
  async checkWrite(
    content: string,
    principal: string,
    tier: SourceTier,
    source?: string,
  ): Promise<void> {
    const d = this.draft(content, { principal, tier, ...(source === undefined ? {} : { source }) });
    this.limits(d);
    await this.checkPrincipal(d);
  }

  // ---- the runner ----------------------------------------------------------------------------

  private draft(content: string, opts: AddOptions): WriteDraft {
    const kind = opts.kind ?? 'fact';
    return {
      opts,
      principal: opts.principal,
      content,
      screenText: content,
      kind,
      tier: opts.tier ?? 'USER_OBSERVED',
      storeEmbedding: !STRUCTURE_KINDS.has(kind),
      // Every field present from the start, undefined until a stage sets it: each stage's
      // `{ ...d, x }` copy then keeps the draft's one shape instead of adding a property to a
      // new one — ~10× cheaper per copy (ADR 0088). Absent and undefined mean the same here.
      writerKind: undefined,
      ttl: undefined,
      lineage: undefined,
      embedding: undefined,
      sup: undefined,
      rev: undefined,
      inCommit: undefined,
      noExtraction: undefined,
      v2: undefined,
      consolidation: undefined,
      attempt: undefined,
    };
  }

  /** Run `stages` from index `from` on `d`. */
  private async run(
    stages: readonly WriteStage[],
    d: WriteDraft,
    from: number,
  ): Promise<AddResult> {
    for (let i = from; i < stages.length; i++) {
      const p = (stages[i] as WriteStage).run(d);
      const r: StageResult = isPromise(p) ? await p : p;
      if ('next' in r) d = r.next;
      else if ('done' in r) return r.done;
      else if ('hold' in r) return this.hold(r.draft, r.hold);
      else if ('retry' in r) {
        // Back to an earlier stage (a consolidation UPDATE that lost a race decides again).
        const at = stages.findIndex((s) => s.name === r.retry);
        if (at < 0 || at >= i)
          throw new MemwardenError('STORAGE_FAILED', `no earlier stage ${r.retry}`);
        d = r.draft;
        i = at - 1;
      } else return this.fanout(stages, i + 1, r.fanout);
    }
    throw new MemwardenError('STORAGE_FAILED', 'the write pipeline ended without a commit');
  }

  /** Run the stages before the one named `until` (which must continue), returning the draft. */
  private async runUntil(
    stages: readonly WriteStage[],
    d: WriteDraft,
    until: string,
  ): Promise<WriteDraft> {
    for (const s of stages) {
      if (s.name === until) return d;
      const p = s.run(d);
      const r: StageResult = isPromise(p) ? await p : p;
      if (!('next' in r))
        throw new MemwardenError('STORAGE_FAILED', `stage ${s.name} did not continue`);
      d = r.next;
    }
    return d;
  }

  /** Extraction's facts: each runs the rest of the pipeline on its own. */
  private async fanout(
    stages: readonly WriteStage[],
    from: number,
    facts: readonly WriteDraft[],
  ): Promise<AddResult> {
    const stored: MemoryRecord[] = [];
    const held: { reviewId: string; reasons: readonly string[] }[] = [];
    let firstError: unknown;
    let lineage: LineageReport | undefined;
    for (const f of facts) {
      try {
        const r = await this.run(stages, f, from);
        lineage ??= r.lineage;
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
      if (h !== undefined)
        return {
          status: 'pending_review',
          reviewId: h.reviewId,
          reasons: h.reasons,
          ...(lineage === undefined ? {} : { lineage }),
        };
      throw firstError;
    }
    return {
      status: 'stored',
      event: 'ADD',
      memory: first,
      ...(others.length === 0 ? {} : { extra: others }),
      ...(held.length === 0 ? {} : { heldFacts: held.map((h) => h.reviewId) }),
      ...(lineage === undefined ? {} : { lineage }),
    };
  }

  /** Hold a write in the review queue (pending, never dropped), counted per reason. */
  private async hold(d: WriteDraft, findings: readonly HoldFinding[]): Promise<AddResult> {
    const reviewId = this.ctx.newId();
    const lineage = lineageOf(d);
    // The held record is sealed (canonical, MAC'd): what the reviewer is shown is what
    // approval signs (held.ts, issue 17 finding 4, ADR 0034). The kind and tier are the
    // pipeline's (the replay must not re-default them).
    await this.ctx.view(d.principal).enqueueReview(
      sealHeld(this.ctx.ledger.keys.macs, {
        id: reviewId,
        principal: d.principal,
        tier: d.tier,
        content: d.content,
        reasons: findings.map((f) => `${f.reason}: ${f.detail}`),
        createdAtNs: this.ctx.clock.nowNs(),
        lineage: { parents: lineage.parents, weights: lineage.weights, label: lineage.label },
        kind: d.kind,
        ...(d.opts.source === undefined ? {} : { source: d.opts.source }),
        ...(d.opts.ttlMs === undefined ? {} : { ttlMs: d.opts.ttlMs }),
        ...(d.sup === undefined ? {} : { sup: d.sup }),
      }),
    );
    for (const f of findings) this.ctx.metrics.recordRejected(f.reason);
    await this.ctx.audit(d.principal, 'write.held', reviewId, {
      reasons: findings.map((f) => f.reason),
      kind: d.kind,
      ...(d.sup === undefined ? {} : { supersedes: d.sup }),
    });
    return {
      status: 'pending_review',
      reviewId,
      reasons: findings.map((f) => f.reason),
      lineage: reportOf(lineage, d.lineage),
    };
  }

  // ---- stages ----------------------------------------------------------------------------

  /** 1. Every caller-supplied string, bounded in code points and bytes; NUL, lone surrogates. */
  private limitsStage(): WriteStage {
    return {
      name: 'limits',
      run: (d) => {
        const v2 = this.limits(d);
        return { next: Object.keys(v2).length === 0 ? d : { ...d, v2 } };
      },
    };
  }

  private limits(d: WriteDraft): NonNullable<WriteDraft['v2']> {
    const l = this.ctx.retention.limits;
    try {
      checkString(d.content, 'content', l);
      const o = d.opts;
      if (o.source !== undefined) checkString(o.source, 'source', l);
      if (o.kind !== undefined) checkString(o.kind, 'kind', l);
      if (o.threadId !== undefined) checkString(o.threadId, 'threadId', l);
      // Entry v2 fields (issue 20): scopes bounded like a thread id, metadata like any
      // structured value, then as the signed record will hold it (size, depth, JSON only).
      if (o.runId !== undefined) checkString(o.runId, 'threadId', l, 'runId');
      if (o.agentId !== undefined) checkString(o.agentId, 'threadId', l, 'agentId');
      if (o.metadata !== undefined && o.metadata !== null)
        checkStructured(o.metadata, l.jsonDepth, 'metadata');
      if (o.parents !== undefined) {
        if (!Array.isArray(o.parents))
          throw new MemwardenError('LINEAGE_INVALID', 'parents must be an array');
        for (let i = 0; i < o.parents.length; i++)
          checkString(o.parents[i], 'parent', l, `parents[${i}]`);
      }
      return v2Fields(o);
    } catch (e) {
      if (e instanceof MemwardenError)
        this.ctx.metrics.recordRejected(
          e.code === 'INPUT_TOO_LARGE' ? 'oversize' : 'invalid_input',
        );
      throw e;
    }
  }

  /** 2. A registered writer; the tier within its kind's ceiling; an override needs an operator. */
  private principalStage(): WriteStage {
    return {
      name: 'principal',
      // A known principal's kind is answered from the cache without a promise (ADR 0088).
      run: (d) => {
        const hit = this.kinds.get(d.principal);
        if (hit !== undefined) return { next: { ...d, writerKind: this.checkKind(d, hit.kind) } };
        return this.checkPrincipal(d).then((writerKind) => ({ next: { ...d, writerKind } }));
      },
    };
  }

  private async checkPrincipal(d: WriteDraft): Promise<PrincipalKind> {
    const p = await this.principalOf(d.principal);
    if (p === undefined) throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    return this.checkKind(d, p.kind);
  }

  /** The tier ceiling of the writer's kind, and who may override lineage. */
  private checkKind(d: WriteDraft, kind: PrincipalKind): PrincipalKind {
    if (!mayWriteTier(kind, d.tier)) {
      this.ctx.metrics.recordRejected('tier_not_allowed');
      throw new MemwardenError(
        'AUTH_FORBIDDEN',
        `a ${kind} principal may not write tier ${d.tier}`,
        {
          details: { reason: 'tier_not_allowed', tier: d.tier, kind: kind },
        },
      );
    }
    if (d.opts.lineageOverride === true && kind !== 'operator') {
      this.ctx.metrics.recordRejected('lineage_override');
      throw new MemwardenError('AUTH_FORBIDDEN', 'only an operator overrides lineage', {
        details: { reason: 'lineage_override' },
      });
    }
    return kind;
  }

  /** 3. The TTL: the tier's default, or the caller's within the tier's ceiling. */
  private ttlStage(): WriteStage {
    return {
      name: 'ttl',
      run: (d) => {
        const r = this.ctx.retention;
        const asked = d.opts.ttlMs;
        if (asked === undefined) return { next: { ...d, ttl: r.ttlMs[d.tier] } };
        const ttl = checkTtlMs(asked, true);
        const ceiling = r.ttlCeilingMs[d.tier];
        if (ceiling !== null && (ttl === null || ttl > ceiling)) {
          this.ctx.metrics.recordRejected('ttl_ceiling');
          throw new MemwardenError(
            'INPUT_INVALID',
            `a ${d.tier} memory may live at most ${ceiling} ms (${ttl === null ? 'never expiring' : `${ttl} ms`} asked)`,
            {
              details: { field: 'ttlMs', reason: 'ttl_ceiling', tier: d.tier, ceilingMs: ceiling },
            },
          );
        }
        return { next: { ...d, ttl } };
      },
    };
  }

  /** 4. Lineage: explicit plus scoped auto-attribution; callers only add taint (lineage.ts). */
  private lineageStage(): WriteStage {
    return {
      name: 'lineage',
      run: (d) => {
        if (d.lineage !== undefined) return { next: d };
        const o = d.opts;
        // Optional fields set one by one (absent, not undefined), no object per field.
        const req: Mutable<LineageRequest> = {
          principal: d.principal,
          content: d.content,
          tier: d.tier,
        };
        if (o.threadId !== undefined) req.threadId = o.threadId;
        if (o.fromLastRetrieval !== undefined) req.fromLastRetrieval = o.fromLastRetrieval;
        if (o.parents !== undefined) req.parents = o.parents;
        if (o.weights !== undefined) req.weights = o.weights;
        if (o.derived !== undefined) req.derived = o.derived;
        if (o.multiHop !== undefined) req.multiHop = o.multiHop;
        if (o.step !== undefined) req.step = o.step;
        if (o.lineageOverride === true) req.override = true;
        // No parent named, none from a recorded retrieval: resolved without a promise (ADR 0088;
        // `resolve` gives the same lineage through the same method).
        const none = this.lineage.resolveWithoutParents(req);
        if (none !== undefined) return { next: { ...d, lineage: none } };
        return this.lineage.resolve(this.ctx.view(d.principal), req).then((resolved) => {
          if (resolved.raised) this.ctx.metrics.recordRejected('lineage_raised');
          return { next: { ...d, lineage: resolved } };
        });
      },
    };
  }

  /** 5. Pattern 3: untrusted content is never stored verbatim by default. */
  private extractionStage(): WriteStage {
    return {
      name: 'extraction',
      // Synchronous unless an extractor runs (ADR 0088).
      run: (d) => {
        if (d.noExtraction === true) return { next: d };
        const untrusted = needsExtraction(d.content, d.tier, {
          ...(d.opts.verbatim === undefined ? {} : { verbatim: d.opts.verbatim }),
          shortFactChars: this.ctx.retention.shortFactChars,
        });
        if (!untrusted) return { next: d };
        const extractor = this.d.extractor;
        if (extractor === undefined) {
          // A short marker-free untrusted fact may be stored as is (documented); longer content
          // waits for a reviewer unless the caller opted out (verbatim).
          if (d.content.length <= this.ctx.retention.shortFactChars) return { next: d };
          return {
            hold: [
              {
                reason: 'extraction_required',
                detail: `untrusted content over ${this.ctx.retention.shortFactChars} chars and no extractor configured`,
              },
            ],
            draft: d,
          };
        }
        return this.extract(d, extractor);
      },
    };
  }

  /** Pattern 3 with an extractor: the facts fan out, each through the rest of the pipeline. */
  private async extract(d: WriteDraft, extractor: LlmProvider): Promise<StageResult> {
    let facts: readonly string[];
    try {
      const r = await extractFacts(d.content, extractor, { tier: d.tier });
      facts = r.facts.map((f) => f.fact);
      for (const x of r.dropped)
        for (const reason of x.reasons) this.ctx.metrics.recordRejected(`extraction_${reason}`);
    } catch (e) {
      if (!(e instanceof MemwardenError)) throw e;
      // Fail closed: nothing stored, the content waits for a reviewer.
      return { hold: [{ reason: 'extraction_failed', detail: e.code }], draft: d };
    }
    if (facts.length === 0)
      return {
        hold: [{ reason: 'extraction_empty', detail: 'no storable fact extracted' }],
        draft: d,
      };
    const { embedding: _e, ...rest } = d.opts;
    return {
      fanout: facts.map((fact) => ({
        ...d,
        opts: { ...rest, verbatim: true },
        content: fact,
        screenText: fact,
        noExtraction: true,
      })),
    };
  }

  /** 6. One embedding, computed before screening and reused for storage. */
  private embeddingStage(): WriteStage {
    return {
      name: 'embedding',
      run: (d) => {
        if (d.embedding !== undefined) return { next: d };
        if (d.opts.embedding !== undefined && d.screenText === d.content)
          return { next: { ...d, embedding: d.opts.embedding } };
        return this.embed(d.screenText).then((embedding) => ({ next: { ...d, embedding } }));
      },
    };
  }

  /** 7. Screening: the marker screens, then the detection pipeline; a finding holds the write. */
  private screeningStage(): WriteStage {
    return {
      name: 'screening',
      run: async (d) => {
        const findings: HoldFinding[] = [];
        for (const s of this.d.screens)
          for (const f of s.screen(d.screenText, d.tier)) findings.push(f);
        if (this.d.detection !== undefined) {
          const embedding = d.embedding ?? (await this.embed(d.screenText));
          const screened = await this.d.detection.screenWrite(d.principal, {
            content: d.screenText,
            tier: d.tier,
            principal: d.principal,
            embedding,
          });
          const flagged = flaggedOf(screened);
          // The marker screens' reasons, collected only when a detector flagged something.
          const seen = flagged.length === 0 ? undefined : new Set(findings.map((f) => f.reason));
          for (const f of flagged) {
            if (seen === undefined) break;
            if (seen.has(f.detector)) continue; // the marker screen already reported it
            seen.add(f.detector);
            findings.push({ reason: f.detector, detail: f.reason });
          }
        }
        if (findings.length > 0) return { hold: findings, draft: d };
        return { next: d };
      },
    };
  }

  /**
   * 8. Consolidation (issue 20, ADR 0051) in place of the near-duplicate refusal: ADD, UPDATE
   * (the commit supersedes the memory the new fact corrects: a signed new version, same memory
   * id) or NOOP (already remembered: the write finishes with the existing record). A lower tier
   * never supersedes a higher one — it is stored beside it, and the commit audits the refusal.
   * Untrusted tiers keep SMSR's flood bound (§VIII): their near-duplicate of an existing memory
   * is a NOOP. Graph objects and explicit updates (a `sup` already set) pass through.
   */
  consolidationStage(): WriteStage {
    return {
      name: 'dedupe',
      run: (d) => {
        // A keyed write (a store item addressed by its key, issue 23) is its own identity: it is
        // never merged into, nor UPDATEs, another memory — a put under one key must not
        // overwrite another key's item.
        if (!d.storeEmbedding || d.sup !== undefined || d.opts.keyed === true) return { next: d };
        if (d.embedding === undefined)
          return this.embed(d.content).then((embedding) => this.consolidate(d, embedding));
        return this.consolidate(d, d.embedding);
      },
    };
  }

  /**
   * The consolidation decision for `d` (see {@link consolidationStage}); synchronous when the
   * read model rules every candidate out at once (the common write, ADR 0088).
   */
  private consolidate(d: WriteDraft, embedding: Float32Array): StageResult | Promise<StageResult> {
    const v2 = d.v2 ?? {};
    const fact: NewFact = {
      principal: d.principal,
      content: d.content,
      kind: d.kind,
      tier: d.tier,
      label: lineageOf(d).label,
      embedding,
      metadata: v2.meta,
      evt: v2.evt,
      runId: v2.run,
      agentId: v2.agent,
    };
    const nowNs = this.ctx.clock.nowNs();
    const threshold = this.ctx.retention.nearDuplicateThreshold;
    const floodNoop = threshold !== null && UNTRUSTED_WRITE_TIERS.has(d.tier);
    // No row of the principal the search could return is the same as or related to the
    // new text (the read model's relation keys, ADR 0084): the deterministic rule adds
    // whatever the nearest are — no search. Not for the untrusted near-duplicate rule (it
    // needs the nearest's cosine) nor an LLM consolidator (it sees the candidates).
    if (this.d.consolidation === undefined && !floodNoop) {
      const adds = addsWithoutCandidates(this.ctx.readModel, this.ctx.ledger, fact, nowNs);
      if (adds === true) return { next: { ...d, embedding, consolidation: { event: 'ADD' } } };
      if (adds !== false)
        return adds.then((a) =>
          a
            ? { next: { ...d, embedding, consolidation: { event: 'ADD' } } }
            : this.consolidateBySearch(d, embedding, fact, nowNs),
        );
    }
    return this.consolidateBySearch(d, embedding, fact, nowNs);
  }

  /** Consolidation over the searched candidates (ADR 0051, 0081). */
  private async consolidateBySearch(
    d: WriteDraft,
    embedding: Float32Array,
    fact: NewFact,
    nowNs: bigint,
  ): Promise<StageResult> {
    const threshold = this.ctx.retention.nearDuplicateThreshold;
    const floodNoop = threshold !== null && UNTRUSTED_WRITE_TIERS.has(d.tier);
    const near = await nearestOwn(() => this.ctx.view(d.principal), fact, {
      nowNs,
      model: this.ctx.readModel,
    });
    // Nothing the same or related among them, whichever verify, and none near enough for
    // the untrusted near-duplicate rule: ADD without verifying them (ADR 0081) — the
    // decision is the one verifying them would give.
    if (
      this.d.consolidation === undefined &&
      !(floodNoop && near.some((h) => (h.vectorScore ?? -1) >= threshold)) &&
      addsWhateverVerifies(this.ctx.ledger, fact, near)
    )
      return { next: { ...d, embedding, consolidation: { event: 'ADD' } } };
    const candidates = await verifiedCandidates(this.ctx.ledger, fact, near);
    let dec: Decision =
      this.d.consolidation === undefined
        ? decide(fact, candidates)
        : await this.d.consolidation.decide(fact, candidates);
    const nearest = candidates[0];
    if (
      dec.event === 'ADD' &&
      !('conflict' in dec) &&
      threshold !== null &&
      UNTRUSTED_WRITE_TIERS.has(d.tier) &&
      nearest !== undefined &&
      nearest.similarity >= threshold
    ) {
      this.ctx.metrics.recordRejected('near_duplicate');
      dec = { event: 'NOOP', existing: nearest };
    }
    if (dec.event === 'NOOP') {
      const e = dec.existing;
      return {
        done: {
          status: 'stored',
          event: 'NOOP',
          memory: toMemoryRecord(e.entry, e.leafIndex, e.stored.bytes, e.stored.expiresAtNs),
        },
      };
    }
    if (dec.event === 'UPDATE')
      return {
        next: {
          ...d,
          embedding,
          sup: dec.target.stored.id,
          consolidation: { event: 'UPDATE', target: dec.target },
        },
      };
    return {
      next: {
        ...d,
        embedding,
        consolidation:
          'conflict' in dec ? { event: 'ADD', conflict: dec.conflict } : { event: 'ADD' },
      },
    };
  }

  /**
   * The near-duplicate policy of before issue 20 (SMSR §VIII): a non-OPERATOR memory whose embedding is within
   * the threshold of one of the writer's own verified memories is refused (`STORAGE_CONFLICT`,
   * reason `near_duplicate`). Not the default: {@link consolidationStage} replaced it; a
   * deployment may still choose it (`WritePathDeps.dedupe`).
   */
  nearDuplicateStage(): WriteStage {
    return {
      name: 'dedupe',
      run: async (d) => {
        const threshold = this.ctx.retention.nearDuplicateThreshold;
        // A keyed write (a store item addressed by its key) is its own identity: not a near-copy.
        if (
          threshold === null ||
          d.tier === 'OPERATOR' ||
          !d.storeEmbedding ||
          d.sup !== undefined ||
          d.opts.keyed === true
        )
          return { next: d };
        const embedding = d.embedding ?? (await this.embed(d.content));
        const dup = await findNearDuplicate(this.ctx.view(d.principal), this.ctx.ledger, {
          principal: d.principal,
          embedding,
          threshold,
          nowNs: this.ctx.clock.nowNs(),
          model: this.ctx.readModel,
        });
        if (dup !== undefined) {
          this.ctx.metrics.recordRejected('near_duplicate');
          throw new MemwardenError('STORAGE_CONFLICT', 'a near-duplicate of an existing memory', {
            details: {
              reason: 'near_duplicate',
              of: dup.id,
              similarity: Number(dup.similarity.toFixed(4)),
            },
          });
        }
        return { next: { ...d, embedding } };
      },
    };
  }

  /**
   * 8b. Flood control (issue 19; keeps SMSR's adversary budget t small): a memory that is
   * similar (cosine ≥ the policy's similarity, 0.80 by default — paraphrases the 0.97
   * near-duplicate check lets through) to `maxSimilar` writes already made this window in one
   * of its buckets is held for review (never lost, never refused). Buckets: an untrusted tier
   * (EXTERNAL_*) of the principal, any writer that is not a user or operator, and one source
   * URI of such writes. A user's own writes at a user tier are never counted: a user's
   * correction is stored. Per process (ADR 0056).
   */
  private floodStage(window: FloodWindow): WriteStage {
    return {
      name: 'flood',
      // Synchronous when no bucket counts the write (a user's own writes; ADR 0088).
      run: (d) => {
        if (!d.storeEmbedding || d.sup !== undefined || d.tier === 'OPERATOR') return { next: d };
        const untrustedTier = d.tier === 'EXTERNAL_TOOL' || d.tier === 'EXTERNAL_WEB';
        const peer = d.writerKind !== 'user' && d.writerKind !== 'operator';
        const buckets: string[] = [];
        if (untrustedTier) buckets.push(`tier:${d.principal}:${d.tier}`);
        if (peer) buckets.push(`writer:${d.principal}`);
        if ((untrustedTier || peer) && d.opts.source !== undefined)
          buckets.push(`source:${d.principal}:${d.opts.source}`);
        if (buckets.length === 0) return { next: d };
        return this.floodCheck(window, buckets, d);
      },
    };
  }

  private async floodCheck(
    window: FloodWindow,
    buckets: readonly string[],
    d: WriteDraft,
  ): Promise<StageResult> {
    const embedding = d.embedding ?? (await this.embed(d.content));
    const nowMs = Number(this.ctx.clock.nowNs() / 1_000_000n);
    const c = window.check(buckets, embedding, nowMs);
    if (c.overBudget) {
      this.ctx.metrics.recordRejected('flood');
      return {
        hold: [
          {
            reason: 'flood',
            detail: `${c.similar} similar writes this window in ${c.bucket?.split(':')[0] ?? 'a bucket'} (budget ${window.policy.maxSimilar})`,
          },
        ],
        draft: { ...d, embedding },
      };
    }
    window.record(buckets, embedding, nowMs);
    return { next: { ...d, embedding } };
  }

  /**
   * 9. The signed write. The daily quota is consumed in the write's commit transaction (ADR
   * 0021): counted only if the write commits, refused (`QUOTA_EXCEEDED`, nothing written) over
   * the limit.
   */
  private commitStage(): WriteStage {
    return {
      name: 'commit',
      run: async (d) => {
        const now = this.ctx.clock.nowNs();
        const tier = d.tier;
        const limit = this.ctx.retention.quotaPerDay[tier];
        const lineage = lineageOf(d);
        let embedding: Float32Array | undefined;
        if (d.storeEmbedding) embedding = d.embedding ?? (await this.embed(d.content));
        const ttl = d.ttl === undefined ? this.ctx.retention.ttlMs[tier] : d.ttl;
        let receipt;
        try {
          // Optional fields set one by one (absent, not undefined), no object per field.
          const input: Mutable<EntryInput> = {
            writer: d.principal,
            content: d.content,
            tier,
            kind: d.kind,
            label: lineage.label,
            parents: lineage.parents,
            weights: lineage.weights,
          };
          if (d.opts.source !== undefined) input.uri = d.opts.source;
          if (ttl !== null) input.exp = now + BigInt(Math.round(ttl)) * NS_PER_MS;
          if (d.sup !== undefined) input.sup = d.sup;
          if (d.rev !== undefined) input.rev = d.rev;
          const v2 = d.v2;
          if (v2 !== undefined) {
            if (v2.meta !== undefined) input.meta = v2.meta;
            if (v2.evt !== undefined) input.evt = v2.evt;
            if (v2.run !== undefined) input.run = v2.run;
            if (v2.agent !== undefined) input.agent = v2.agent;
          }
          const wo: Mutable<WriteOptions> = {};
          if (embedding !== undefined) wo.embedding = embedding;
          if (limit !== null) wo.quota = { dayKey: this.days.of(now), limit };
          if (d.inCommit !== undefined) wo.inCommit = d.inCommit;
          receipt = await this.committer.write(input, wo);
        } catch (e) {
          if (e instanceof MemwardenError && e.code === 'QUOTA_EXCEEDED')
            this.ctx.metrics.recordRejected('quota');
          // A consolidation UPDATE whose target was superseded meanwhile (a concurrent update of
          // the same memory): decide again against the memory as it now is.
          const attempt = d.attempt ?? 0;
          if (
            e instanceof MemwardenError &&
            e.code === 'STORAGE_CONFLICT' &&
            d.consolidation?.event === 'UPDATE' &&
            attempt < CONSOLIDATION_RETRIES
          ) {
            const { sup: _s, consolidation: _c, ...rest } = d;
            return { retry: 'dedupe', draft: { ...rest, attempt: attempt + 1 } };
          }
          throw e;
        }
        this.ctx.metrics.recordWrite(tier);
        // Rolling calibration: a stored trusted memory joins its principal's benign reference.
        if (embedding !== undefined)
          this.d.detection?.stored(d.principal, {
            content: d.content,
            tier,
            label: lineage.label,
            embedding,
          });
        if (d.lineage?.basis === 'override')
          await this.ctx.audit(d.principal, 'lineage.override', receipt.entry.id, {
            parents: [...lineage.parents],
            weights: [...lineage.weights],
            label: lineage.label,
          });
        const memory = toMemoryRecord(receipt.entry, receipt.leafIndex, receipt.bytes);
        const c = d.consolidation;
        if (c?.event === 'UPDATE') {
          const t = c.target;
          await this.ctx.audit(d.principal, 'entry.updated', t.stored.id, {
            by: memory.versionId,
            reason: 'consolidation',
          });
          return {
            done: {
              status: 'stored',
              event: 'UPDATE',
              memory,
              previous: toMemoryRecord(t.entry, t.leafIndex, t.stored.bytes, t.stored.expiresAtNs),
              lineage: reportOf(lineage, d.lineage),
            },
          };
        }
        const old = c?.event === 'ADD' ? c.conflict : undefined;
        if (old !== undefined)
          await this.ctx.audit(d.principal, 'entry.supersede_refused', old.stored.id, {
            by: memory.versionId,
            tier,
            over: old.entry.tier,
          });
        const event = d.sup === undefined ? 'ADD' : 'UPDATE';
        // Two literals rather than a conditional spread (no object per write; same key order).
        if (old === undefined)
          return {
            done: { status: 'stored', event, memory, lineage: reportOf(lineage, d.lineage) },
          };
        return {
          done: {
            status: 'stored',
            event,
            memory,
            conflict: { with: old.entry.lid ?? old.entry.id, reason: 'lower_tier' },
            lineage: reportOf(lineage, d.lineage),
          },
        };
      },
    };
  }

  // ---- helpers ------------------------------------------------------------------------------

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
  /** The quota day of the commit clock, remembered for the UTC day it names. */
  private readonly days = new DayKeys();

  async embed(text: string): Promise<Float32Array> {
    const [v] = await this.embedMany([text]);
    return v as Float32Array;
  }

  private async embedMany(texts: readonly string[]): Promise<Float32Array[]> {
    const t0 = process.hrtime.bigint();
    const vs = await this.d.embedder.embed([...texts]);
    this.ctx.metrics.observeEmbedding(Number(process.hrtime.bigint() - t0) / 1e9);
    if (vs.length !== texts.length || vs.some((v) => v === undefined))
      throw new MemwardenError('EMBEDDING_FAILED', 'embedder returned nothing');
    return vs;
  }
}

const DAY_MS = 86_400_000;

/**
 * `dayKey` of a time, remembered for the UTC day it falls in: one `Date` and ISO string per
 * day instead of per write (ADR 0088). A UTC day is [k·86,400,000, (k+1)·86,400,000) ms, the
 * range over which `dayKey`'s ISO date does not change.
 */
class DayKeys {
  private from = 0;
  private to = 0;
  private key = '';
  of(nowNs: bigint): string {
    const ms = Number(nowNs / NS_PER_MS);
    if (ms >= this.from && ms < this.to) return this.key;
    const key = dayKey(nowNs);
    this.from = Math.floor(ms / DAY_MS) * DAY_MS;
    this.to = this.from + DAY_MS;
    this.key = key;
    return key;
  }
}

/** A given lineage as the pipeline's resolved form (no auto parents, nothing raised). */
function asResolved(l: WriteLineage): ResolvedLineage {
  return {
    parents: l.parents,
    weights: l.weights,
    label: l.label,
    origin: l.parents.length > 0 ? 'explicit' : 'none',
    basis: l.parents.length > 0 ? 'explicit' : 'none',
    autoParents: [],
    raised: false,
  };
}

function lineageOf(d: WriteDraft): WriteLineage {
  if (d.lineage === undefined) throw new MemwardenError('STORAGE_FAILED', 'lineage not resolved');
  return d.lineage;
}
