/**
 * @module memory/write/write
 * Write-path helpers for `Memory.add` (issue 7 Pattern 3, issue 6 §VIII):
 * - `SharedDetection` — a caller-supplied pipeline shared by every principal, calibrated once
 *   on first use when a benign sample is given (the default is per-principal, calibration.ts);
 * - `flaggedOf` — the flagged, non-composite findings of a screen (what holds a write);
 * - `needsExtraction` — untrusted content is extracted into short facts (or held) unless
 *   the caller opts out with `verbatim: true`;
 * - `findNearDuplicate` — SMSR §VIII near-duplicate rejection against the principal's own
 *   verified memories;
 * - `callerVector` — a caller's precomputed embedding, checked (ADR 0012).
 */
import type { Finding } from '../../core/detect/index.js';
import { MemwardenError } from '../../core/errors.js';
import { cosine } from '../../core/smsr/near-duplicate.js';
import type { SourceTier } from '../../core/trust.js';
import type { StorageBackend } from '../../ports/storage.js';
import type { DetectionHooks } from '../detect/calibration.js';
import type { DetectionPipeline, ReadCandidate, WriteCandidate } from '../detect/pipeline.js';
import type { Ledger } from '../log/ledger.js';
import { MarkerScreen } from '../detect/screen.js';
import type { ReadModel } from '../read/read-model.js';

/** Tiers whose content is never stored verbatim by default (article Pattern 3). */
export const UNTRUSTED_WRITE_TIERS: ReadonlySet<SourceTier> = new Set(['EXTERNAL_TOOL', 'EXTERNAL_WEB']);

/**
 * A caller-supplied pipeline used as given, shared by every principal (calibrated once, on
 * `benign`, before its first use; concurrent callers share it). The default is per-principal
 * `AutoDetection` (calibration.ts).
 */
export class SharedDetection implements DetectionHooks {
  #ready: Promise<DetectionPipeline> | undefined;

  constructor(
    private readonly pipeline: DetectionPipeline,
    private readonly benign?: readonly string[],
  ) {}

  get(): Promise<DetectionPipeline> {
    if (this.#ready === undefined) {
      const benign = this.benign;
      this.#ready =
        benign === undefined || benign.length === 0
          ? Promise.resolve(this.pipeline)
          : this.pipeline.calibrate(benign).then(() => this.pipeline);
      // A failed calibration (model unavailable) is retried on the next call.
      this.#ready.catch(() => {
        this.#ready = undefined;
      });
    }
    return this.#ready;
  }

  async screenWrite(_principal: string, c: WriteCandidate): Promise<Finding[]> {
    return (await this.get()).screenWrite(c);
  }

  stored(): void {
    // A shared pipeline's reference is the caller's; stored writes do not change it.
  }

  async observeQuery(_principal: string, v: Float32Array): Promise<void> {
    await (await this.get()).observeQuery(v);
  }

  async scoreRead(_principal: string, c: ReadCandidate): Promise<Finding[]> {
    return (await this.get()).scoreRead(c);
  }
}

/** Flagged findings that hold a write / drop a read (the composite only summarises them). */
export function flaggedOf(findings: readonly Finding[]): Finding[] {
  return findings.filter((f) => f.flagged && f.detector !== 'composite');
}

/**
 * Why untrusted content cannot be stored as given, or undefined when it can: verbatim opt-out,
 * a trusted tier, or a short fact (≤ `shortFactChars`, no instruction / role / delimiter marker).
 */
export function needsExtraction(
  content: string,
  tier: SourceTier,
  opts: { verbatim?: boolean; shortFactChars: number },
): boolean {
  if (opts.verbatim === true || !UNTRUSTED_WRITE_TIERS.has(tier)) return false;
  if (content.length > opts.shortFactChars) return true;
  return new MarkerScreen(Number.POSITIVE_INFINITY).screen(content, tier).length > 0;
}

/**
 * The principal's own verified memory nearest to `embedding` with cosine ≥ threshold, or
 * undefined. Looks at the `limit` nearest rows in the principal's view (OPERATOR rows and
 * rows that fail verification do not count) — from the read model when there is one.
 */
export async function findNearDuplicate(
  view: StorageBackend,
  ledger: Ledger,
  q: {
    principal: string;
    embedding: Float32Array;
    threshold: number;
    nowNs: bigint;
    limit?: number;
    /** The read model (ADR 0018): candidates from it, same semantics, no database query. */
    model?: ReadModel | undefined;
  },
): Promise<{ id: string; similarity: number } | undefined> {
  const query = { embedding: q.embedding, nowNs: q.nowNs, limit: q.limit ?? 5 };
  // The read model returns only the hits that can pass the threshold below: a hit's cosine
  // here and its index score differ by float32 rounding only (see `indexScoreSlack`), so none
  // with cosine ≥ threshold is left out — the same verdict, without scoring (in floats) the
  // many rows the index's byte bound already puts below it.
  const modelQuery = { ...query, minScore: q.threshold - indexScoreSlack(q.embedding.length) };
  const hits =
    (await q.model?.search(q.principal, modelQuery)) ?? (await view.searchEntries(query));
  const scored = hits
    .map((h) => ({
      entry: h.entry,
      similarity:
        h.entry.embedding !== undefined && h.entry.embedding.length === q.embedding.length
          ? cosine(q.embedding, h.entry.embedding)
          : (h.vectorScore ?? -1),
    }))
    .filter((h) => h.similarity >= q.threshold && h.entry.owner === q.principal)
    .sort((a, b) => b.similarity - a.similarity);
  for (const h of scored) {
    if (h.entry.deleted === true || h.entry.supersededBy !== undefined) continue;
    const v = await ledger.verifyStored(h.entry);
    if (v.ok && v.entry.ns === q.principal) return { id: h.entry.id, similarity: h.similarity };
  }
  return undefined;
}

/**
 * A bound on |index score − `cosine`| for one pair of d-dimensional vectors: the index scores
 * unit vectors rounded to float32 (each component within 2⁻²⁴ relative, so ≤ 2·2⁻²⁴ on the
 * sum of |products| ≤ 1) with float32 products and sums (≤ (d + 1)·2⁻²⁴ more, any summation
 * order); `cosine` works in float64 (≈ d·2⁻⁵³). (d + 3)·2⁻²⁴ covers it; four times that is used.
 */
export function indexScoreSlack(d: number): number {
  return (d + 3) * 2 ** -22;
}

/**
 * A caller's precomputed embedding, checked before it reaches storage or ranking: the
 * embedder's dimensions, finite, non-zero; returned as a unit-length copy (the caller's array
 * is never stored or mutated).
 */
export function callerVector(v: unknown, dims: number): Float32Array {
  if (!(v instanceof Float32Array) || v.length !== dims) {
    throw new MemwardenError('INPUT_INVALID', `embedding must be ${dims} numbers`, {
      details: { field: 'embedding', dimensions: dims },
    });
  }
  let sq = 0;
  for (let i = 0; i < v.length; i++) sq += (v[i] as number) * (v[i] as number);
  if (!Number.isFinite(sq) || sq === 0) {
    throw new MemwardenError('INPUT_INVALID', 'embedding must be finite and non-zero', {
      details: { field: 'embedding' },
    });
  }
  const norm = Math.sqrt(sq);
  // An indexed loop, not `v.map(fn)` (a call per element on every write): the same quotients.
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = (v[i] as number) / norm;
  return out;
}
