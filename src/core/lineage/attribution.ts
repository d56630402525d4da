/**
 * @module core/lineage/attribution
 * Attribution algorithms A : (c, P, X) ↦ {w(p, c) : p ∈ P} (MemLineage §3.5) behind one
 * interface: Coarse, the ScriptedJudge of the deterministic harness (§4.3), and the
 * attention-based extension point (AttnAttr, §3.5, §8). The hardened LLM judge LmSelfEval
 * lives in `lm-self-eval.ts`.
 *
 * Every algorithm returns exactly one weight in [0, 1] per candidate, in candidate order.
 */
import { MemwardenError } from '../errors.js';

/** A candidate parent: an entry that was in the model's context at write time. */
export interface AttributionCandidate {
  readonly id: string;
  readonly content: string;
}

/** The child being written. */
export interface AttributionChild {
  readonly content: string;
}

/** Write-time context X. */
export interface AttributionContext {
  /**
   * Derivation step k ≥ 1 of the child along a chain (1 = derived directly from its sources).
   * Required by {@link ScriptedJudge}; ignored by the others.
   */
  readonly step?: number;
  /** The rendered write-time context, for algorithms that read it. */
  readonly context?: string;
  readonly signal?: AbortSignal;
}

/** One attribution algorithm. */
export interface Attribution {
  readonly name: string;
  attribute(
    child: AttributionChild,
    candidates: readonly AttributionCandidate[],
    context?: AttributionContext,
  ): Promise<number[]>;
}

/** Coarse (§3.5): w = 1 for every candidate in the write-time context. Upper bound on recall. */
export class CoarseAttribution implements Attribution {
  readonly name = 'coarse';
  attribute(_child: AttributionChild, candidates: readonly AttributionCandidate[]): Promise<number[]> {
    return Promise.resolve(candidates.map(() => 1));
  }
}

const unit = (x: number): boolean => Number.isFinite(x) && x >= 0 && x <= 1;

/**
 * The deterministic harness's judge (§4.3): every candidate of a step-k write gets
 * w_k = w0 · d^(k−1). Pins the τ × K ablation (Tables 5–6, 11).
 */
export class ScriptedJudge implements Attribution {
  readonly name: string;
  readonly w0: number;
  readonly d: number;

  constructor(schedule: { readonly w0: number; readonly d: number }) {
    if (!unit(schedule.w0) || !unit(schedule.d))
      throw new MemwardenError('LINEAGE_INVALID', 'ScriptedJudge schedule needs w0, d in [0, 1]');
    this.w0 = schedule.w0;
    this.d = schedule.d;
    this.name = `scripted:w0=${schedule.w0},d=${schedule.d}`;
  }

  /** w_k for step k ≥ 1. */
  weightAt(k: number): number {
    if (!Number.isInteger(k) || k < 1) throw new MemwardenError('LINEAGE_INVALID', 'step must be an integer ≥ 1');
    return this.w0 * this.d ** (k - 1);
  }

  attribute(
    _child: AttributionChild,
    candidates: readonly AttributionCandidate[],
    context?: AttributionContext,
  ): Promise<number[]> {
    try {
      const w = this.weightAt(context?.step ?? 1);
      return Promise.resolve(candidates.map(() => w));
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }
}

/**
 * An attention readout over the inference model (AttnAttr, §3.5): per candidate, the summed
 * attention mass Σ_{ℓ,h} attn_{ℓ,h}(c, p) from the child's tokens to the candidate's span.
 * Requires open weights (§8); memwarden ships no implementation, only this seam.
 */
export type AttentionReadout = (
  child: AttributionChild,
  candidates: readonly AttributionCandidate[],
  context?: AttributionContext,
) => Promise<readonly number[]> | readonly number[];

/**
 * Attention-based attribution. The readout's masses are clamped to [0, 1] (sums over layers
 * and heads can exceed 1). A readout that returns the wrong count, or a negative / non-finite
 * mass, fails closed with `LINEAGE_INVALID`: a broken instrument must not silently drop edges.
 */
export class AttentionAttribution implements Attribution {
  readonly name: string;
  readonly #readout: AttentionReadout;

  constructor(readout: AttentionReadout, name = 'attention') {
    this.#readout = readout;
    this.name = name;
  }

  async attribute(
    child: AttributionChild,
    candidates: readonly AttributionCandidate[],
    context?: AttributionContext,
  ): Promise<number[]> {
    const raw = await this.#readout(child, candidates, context);
    if (!Array.isArray(raw) || raw.length !== candidates.length)
      throw new MemwardenError('LINEAGE_INVALID', 'attention readout returned the wrong number of weights');
    return raw.map((x: unknown) => {
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0)
        throw new MemwardenError('LINEAGE_INVALID', 'attention mass must be a finite number ≥ 0');
      return Math.min(1, x);
    });
  }
}
