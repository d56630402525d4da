/**
 * @module memory/read/search
 * The read path (MemLineage §3.6; article Patterns 2 and 4): principal-scoped candidate
 * retrieval (the database applies row-level security), tier and TTL filters, vector /
 * lexical / hybrid ranking, re-verification of every candidate (dropped with an audit event
 * when it fails), renew-on-use, and sentinel rendering.
 */
import { toHex } from '../../core/bytes.js';
import { renderSegments } from '../../core/render/sentinel.js';
import { type SourceTier, SourceTiers, effectiveAuthority } from '../../core/trust.js';
import { descending } from '../../core/compare.js';
import { MemwardenError } from '../../core/errors.js';
import type { Clock, RandomSource } from '../../ports/clock.js';
import type { Embedder } from '../../ports/embedder.js';
import type { MetricsSink } from '../../ports/metrics.js';
import type { StorageBackend, StoredEntry } from '../../ports/storage.js';
import type { MemoryRecord, SearchHit, SearchOptions, SearchResult } from '../api.js';
import type { RetentionConfig } from '../config.js';
import type { Ledger, Verification } from '../log/ledger.js';
import { toMemoryRecord } from './records.js';
import type { DetectionHooks } from '../detect/calibration.js';
import { flaggedOf } from '../write/write.js';
import type { ReadModel } from './read-model.js';
import { readFilter } from '../scope.js';
import { resolveSmoothing, smoothPool } from './smoothing.js';

const NO_VECTOR = new Float32Array(0);

/** Tiers a normal query sees (article Pattern 2); research mode adds the external ones. */
const NORMAL_TIERS: readonly SourceTier[] = ['OPERATOR', 'USER_VERIFIED', 'USER_OBSERVED'];
const UNTRUSTED_TIERS: ReadonlySet<SourceTier> = new Set(['EXTERNAL_TOOL', 'EXTERNAL_WEB']);
/**
 * Renew-on-use moves an expiry only when it gains at least this share of the tier's TTL: a
 * retrieved entry then always lives at least 99% of its TTL past its last use, and a hot entry
 * is not rewritten (one transaction each) on every search that returns it.
 */
const RENEW_MIN_STEP = 0.01;

export interface SearchDeps {
  readonly ledger: Ledger;
  readonly embedder: Embedder;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly metrics: MetricsSink;
  readonly retention: RetentionConfig;
  /**
   * Detection (issue 7 Pattern 6), when configured: each query joins the principal's MemSAD
   * history and each verified hit is scored; a flagged hit is dropped.
   */
  readonly detection?: DetectionHooks;
  /**
   * The in-process read model (ADR 0018): vector-ranked candidates come from it, with the
   * database's semantics, instead of a database query. Lexical and hybrid ranking, and a
   * principal the model cannot hold, keep the database path.
   */
  readonly readModel?: ReadModel;
  readonly audit: (
    actor: string,
    action: string,
    subject: string,
    details: Record<string, string | number | boolean | null>,
  ) => Promise<void>;
}

/** Largest result set one search returns (an adapter that ranks a whole scope asks for it). */
export const MAX_SEARCH_LIMIT = 1000;

export class SearchEngine {
  /** Query-embedding cache: the model's time is paid once per distinct query. */
  private readonly queryCache = new Map<string, Float32Array>();

  constructor(private readonly d: SearchDeps) {}

  async search(view: StorageBackend, query: string, opts: SearchOptions): Promise<SearchResult> {
    if (typeof query !== 'string' || query.length === 0 || query.length > 8192) {
      throw new MemwardenError(
        'INPUT_INVALID',
        'query must be a non-empty string of at most 8192 chars',
      );
    }
    // Same on every ranking and backend: PostgreSQL text cannot hold U+0000, and an answer must
    // not depend on whether the read model or the database served the search.
    if (query.includes('\u0000'))
      throw new MemwardenError('INPUT_INVALID', 'query must not contain U+0000', {
        details: { field: 'query' },
      });
    // Mem0-style filters and the scope shortcuts (INPUT_INVALID before anything is read).
    const filter = readFilter(opts);
    const recency = checkRecency(opts.recency);
    // Smoothing retrieves the whole top-m pool (validated and planned before any work).
    const smoothing = opts.smoothing === undefined ? undefined : resolveSmoothing(opts.smoothing);
    const limit =
      smoothing !== undefined
        ? smoothing.m
        : Math.min(Math.max(Math.trunc(opts.limit ?? 5), 1), MAX_SEARCH_LIMIT);
    const threshold = opts.threshold ?? 0;
    const ranking = opts.ranking ?? 'hybrid';
    if (ranking !== 'hybrid' && ranking !== 'vector' && ranking !== 'lexical')
      throw new MemwardenError('INPUT_INVALID', 'ranking must be hybrid, vector or lexical', {
        details: { field: 'ranking' },
      });
    let tiers = opts.mode === 'research' ? [...SourceTiers] : [...NORMAL_TIERS];
    if (opts.allowTiers !== undefined) tiers = tiers.filter((t) => opts.allowTiers?.includes(t));
    const nowNs = this.d.clock.nowNs();
    const pipeline = this.d.detection;
    const queryEmbedding =
      ranking === 'lexical' && pipeline === undefined
        ? undefined
        : (opts.embedding ?? (await this.embedQuery(query)));
    if (pipeline !== undefined && queryEmbedding !== undefined)
      await pipeline.observeQuery(opts.principal, queryEmbedding);
    const filters = {
      tiers,
      ...(filter === undefined ? {} : { filter }),
      nowNs,
      // Over-fetch so entries dropped by verification do not shrink the answer; a fused
      // ranking needs a deeper candidate list from each side (ADR 0050).
      limit:
        ranking === 'vector'
          ? Math.min(limit * 2 + 4, 1000)
          : Math.min(Math.max(limit * 3, FUSION_CANDIDATES), 1000),
    };
    const q = {
      ...(ranking === 'lexical' || queryEmbedding === undefined
        ? {}
        : { embedding: queryEmbedding }),
      ...(ranking === 'vector' ? {} : { text: query }),
      ...filters,
    };
    const model = this.d.readModel;
    const hits =
      (model !== undefined && (q.embedding !== undefined || q.text !== undefined)
        ? await model.search(opts.principal, q)
        : undefined) ?? (await view.searchEntries(q));

    const ranked = rank(hits, ranking);
    if (recency !== undefined) applyRecency(ranked, recency, nowNs);
    const scored = ranked.filter((h) => h.score >= threshold);
    const results: SearchHit[] = [];
    const dropped: { id: string; code: string }[] = [];
    // Verify the result set at once (one batch for the hits needed, `Ledger.verifyMany`), in
    // score order; only when some are dropped does the next batch fill the gap.
    let next = 0;
    while (results.length < limit && next < scored.length) {
      const batch = scored.slice(next, next + (limit - results.length));
      next += batch.length;
      const verdicts = await this.d.ledger.verifyMany(batch.map((h) => h.entry));
      for (let i = 0; i < batch.length; i++) {
        const { entry, score } = batch[i] as (typeof batch)[number];
        const v = verdicts[i] as Verification;
        if (!v.ok) {
          dropped.push({ id: entry.id, code: v.code });
          this.d.metrics.recordSignal('verification_failed');
          await this.d.audit(opts.principal, 'entry.dropped', entry.id, {
            code: v.code,
            stage: v.stage,
          });
          continue;
        }
        // Defence in depth (failure-mode table): a row from another principal is an isolation
        // bug, never a result.
        if (v.entry.ns !== opts.principal && v.entry.tier !== 'OPERATOR') {
          dropped.push({ id: entry.id, code: 'AUTH_FORBIDDEN' });
          await this.d.audit(opts.principal, 'isolation.violation', entry.id, {
            owner: v.entry.ns,
          });
          continue;
        }
        // The row's state columns are a cache: a candidate the signed records say is
        // deleted, superseded or whose stored expiry was tampered with is dropped (issue 17).
        // Without a promise when nothing has to be loaded or refreshed (the same answer).
        const ledger = this.d.ledger;
        let state = ledger.liveStateNow(entry, v.entry, nowNs);
        if (state === null) state = await ledger.liveState(entry, v.entry, nowNs);
        if (state !== undefined) {
          dropped.push({ id: entry.id, code: state.code });
          if (state.tampered) {
            this.d.metrics.recordSignal('verification_failed');
            await this.d.audit(opts.principal, 'entry.dropped', entry.id, {
              code: state.code,
              stage: 'state',
              reason: state.reason,
            });
          }
          continue;
        }
        if (pipeline !== undefined && queryEmbedding !== undefined) {
          // Pattern 6: trust-aware injection risk and implausible similarity (the latter only
          // when the backend returned the stored vector; otherwise it abstains).
          const candidate = {
            content: v.entry.content,
            tier: v.entry.tier,
            queryEmbedding,
            entryEmbedding: entry.embedding ?? NO_VECTOR,
            query,
          };
          const findings =
            pipeline.scoreReadNow?.(opts.principal, candidate) ??
            (await pipeline.scoreRead(opts.principal, candidate));
          // Without the stored vector the vector checks have nothing to compare: skip them.
          const flagged = flaggedOf(
            entry.embedding === undefined
              ? findings.filter(
                  (f) =>
                    f.detector !== 'embedding_mismatch' && f.detector !== 'implausible_similarity',
                )
              : findings,
          );
          if (flagged.length > 0) {
            dropped.push({ id: entry.id, code: 'POISONING_SIGNAL' });
            for (const f of flagged) this.d.metrics.recordSignal(f.detector);
            await this.d.audit(opts.principal, 'entry.poisoning_signal', entry.id, {
              detectors: flagged.map((f) => f.detector).join(','),
              reasons: flagged.map((f) => `${f.detector}: ${f.reason}`).join('; '),
            });
            continue;
          }
        }
        let expires = entry.expiresAtNs;
        if (opts.renew !== false) {
          const target = this.renewTarget(entry, nowNs);
          if (target !== undefined) expires = await this.renew(view, entry, target);
        }
        this.d.metrics.recordRead(v.entry.tier);
        results.push({
          memory: toMemoryRecord(v.entry, v.leafIndex, entry.bytes, expires),
          score,
          untrusted:
            UNTRUSTED_TIERS.has(v.entry.tier) ||
            v.entry.label === 'EXTERNAL' ||
            v.entry.label === 'DERIVED_UNTRUSTED',
        });
      }
    }
    const seal = toHex(this.d.random.randomBytes(16));
    if (smoothing !== undefined) {
      // The pool is never rendered as one context: the model reads the ablated ones.
      return {
        results,
        context: '',
        seal,
        dropped,
        smoothing: smoothPool(results, smoothing, this.d.random),
      };
    }
    const context = renderSegments(
      results.map((r) => ({
        id: r.memory.versionId,
        label: r.memory.label,
        tier: r.memory.tier,
        authority: effectiveAuthority(r.memory.tier, r.memory.label),
        content: r.memory.content,
      })),
      seal,
    );
    return { results, context, seal, dropped };
  }

  /**
   * Verify one stored entry for `principal` and check it is live by its signed records
   * (`Ledger.liveState`: tombstones, signed versions, the signed expiry), whatever its state
   * columns say; undefined when it fails or is not live, with an audit event when a column
   * disagrees with the signed records (a row hidden or resurrected at rest).
   */
  async verified(stored: StoredEntry, principal: string): Promise<MemoryRecord | undefined> {
    const v = await this.d.ledger.verifyStored(stored);
    if (!v.ok) {
      await this.d.audit(principal, 'entry.dropped', stored.id, { code: v.code, stage: v.stage });
      return undefined;
    }
    if (v.entry.ns !== principal && v.entry.tier !== 'OPERATOR') return undefined;
    const state = await this.d.ledger.liveState(stored, v.entry, this.d.clock.nowNs());
    if (state !== undefined) {
      if (state.tampered) {
        this.d.metrics.recordSignal('verification_failed');
        await this.d.audit(principal, 'entry.dropped', stored.id, {
          code: state.code,
          stage: 'state',
          reason: state.reason,
        });
      }
      return undefined;
    }
    return toMemoryRecord(v.entry, v.leafIndex, stored.bytes, stored.expiresAtNs);
  }

  /**
   * Renew-on-use: the expiry a retrieved entry is extended to (now + its tier TTL), or undefined
   * when it is kept (renewal off, no TTL, never expiring, or a step under RENEW_MIN_STEP).
   */
  private renewTarget(e: StoredEntry, nowNs: bigint): bigint | undefined {
    const ttl = this.d.retention.ttlMs[e.tier];
    if (!this.d.retention.renewOnUse || ttl === null || e.expiresAtNs === undefined)
      return undefined;
    const ttlNs = BigInt(Math.round(ttl)) * 1_000_000n;
    const target = nowNs + ttlNs;
    const step = BigInt(Math.round(ttl * RENEW_MIN_STEP)) * 1_000_000n;
    return target - e.expiresAtNs < (step > 0n ? step : 1n) ? undefined : target;
  }

  /** Extend `e`'s stored expiry to `target` (best effort: its old expiry when that fails). */
  private async renew(
    view: StorageBackend,
    e: StoredEntry,
    target: bigint,
  ): Promise<bigint | undefined> {
    try {
      return await view.extendExpiry(e.id, target);
    } catch {
      return e.expiresAtNs; // renewal is best effort; never fail a read on it
    }
  }

  private async embedQuery(query: string): Promise<Float32Array> {
    const hit = this.queryCache.get(query);
    if (hit !== undefined) return hit;
    const t0 = process.hrtime.bigint();
    const [v] = await this.d.embedder.embed([query]);
    this.d.metrics.observeEmbedding(Number(process.hrtime.bigint() - t0) / 1e9);
    if (v === undefined) throw new MemwardenError('EMBEDDING_FAILED', 'embedder returned nothing');
    if (this.queryCache.size >= 1024)
      this.queryCache.delete(this.queryCache.keys().next().value as string);
    this.queryCache.set(query, v);
    return v;
  }
}

/**
 * Order candidates: cosine for vector, BM25 for lexical, and for hybrid (the default) a convex
 * combination of the two scores, each min–max normalised over the candidates (ADR 0050):
 * score = ½·(v − v_min)/(v_max − v_min) + ½·(l − l_min)/(l_max − l_min), in [0, 1]. Equal
 * weights, not tuned: on LoCoMo it beats both dense and BM25 rankings, and reciprocal-rank
 * fusion (docs/eval/locomo).
 */
export function rank(
  hits: readonly { entry: StoredEntry; vectorScore?: number; lexicalScore?: number }[],
  ranking: 'vector' | 'lexical' | 'hybrid',
): { entry: StoredEntry; score: number }[] {
  const byScore = (
    a: { entry: StoredEntry; score: number },
    b: { entry: StoredEntry; score: number },
  ): number => descending(a.score, b.score) || a.entry.leafIndex - b.entry.leafIndex;
  if (ranking === 'vector') {
    return hits
      .filter((h) => h.vectorScore !== undefined)
      .map((h) => ({ entry: h.entry, score: h.vectorScore as number }))
      .sort(byScore);
  }
  if (ranking === 'lexical') {
    return hits
      .filter((h) => (h.lexicalScore ?? 0) > 0)
      .map((h) => ({ entry: h.entry, score: h.lexicalScore as number }))
      .sort(byScore);
  }
  // Each side's span over the candidates (no vector score: [0, 0]) — Math.min / Math.max over
  // the same values as spreading them into one call, in one pass without the arrays.
  let vMin = Number.POSITIVE_INFINITY;
  let vMax = Number.NEGATIVE_INFINITY;
  let lMin = Number.POSITIVE_INFINITY;
  let lMax = Number.NEGATIVE_INFINITY;
  let anyVector = false;
  for (const h of hits) {
    const v = h.vectorScore;
    if (v !== undefined) {
      anyVector = true;
      vMin = Math.min(vMin, v);
      vMax = Math.max(vMax, v);
    }
    const l = h.lexicalScore ?? 0;
    lMin = Math.min(lMin, l);
    lMax = Math.max(lMax, l);
  }
  if (!anyVector) vMin = vMax = 0;
  const norm = (x: number, lo: number, hi: number): number => (hi > lo ? (x - lo) / (hi - lo) : 0);
  const out: { entry: StoredEntry; score: number }[] = [];
  for (const h of hits)
    out.push({
      entry: h.entry,
      score:
        FUSION_WEIGHT * (h.vectorScore === undefined ? 0 : norm(h.vectorScore, vMin, vMax)) +
        (1 - FUSION_WEIGHT) * norm(h.lexicalScore ?? 0, lMin, lMax),
    });
  return out.sort(byScore);
}

/** Weight of the dense score in the hybrid fusion (the lexical one gets the rest). */
const FUSION_WEIGHT = 0.5;
/** Candidates fetched from each side for a fused ranking (at least). */
const FUSION_CANDIDATES = 30;
const MAX_HALF_LIFE_MS = 100 * 365 * 24 * 3600 * 1000;

function checkRecency(r: unknown): { halfLifeNs: number } | undefined {
  if (r === undefined) return undefined;
  const h = (r as { halfLifeMs?: unknown } | null)?.halfLifeMs;
  if (typeof h !== 'number' || !Number.isFinite(h) || h <= 0 || h > MAX_HALF_LIFE_MS)
    throw new MemwardenError(
      'INPUT_INVALID',
      'recency.halfLifeMs must be a positive number of ms',
      {
        details: { field: 'recency' },
      },
    );
  return { halfLifeNs: h * 1e6 };
}

/**
 * Recency-aware ranking: each score × 2^(−age / half-life), the age from the memory's event
 * time (else its write time) to now (a future event counts as now). Re-sorted in place.
 */
function applyRecency(
  ranked: { entry: StoredEntry; score: number }[],
  r: { halfLifeNs: number },
  nowNs: bigint,
): void {
  for (const h of ranked) {
    const at = h.entry.eventAtNs ?? h.entry.createdAtNs ?? nowNs;
    const age = at >= nowNs ? 0 : Number(nowNs - at);
    h.score *= 2 ** (-age / r.halfLifeNs);
  }
  ranked.sort((a, b) => b.score - a.score || a.entry.leafIndex - b.entry.leafIndex);
}
