/**
 * @module memory/write/lineage
 * Lineage in the write path (MemLineage M4, §3.5; the §4.4 middleware): the candidate parents
 * of a write (explicit, or the principal's last retrieval on that thread), their *verified*
 * labels, the attribution weights, and the Equation (1) label that goes into the signed entry.
 *
 * Trust decisions here are fail-closed: a parent that does not exist for this principal, or
 * whose stored record does not verify, rejects the write with `LINEAGE_INVALID` — a label is
 * never taken from an unverified record, and an edge is never silently dropped.
 */
import { MemwardenError } from '../../core/errors.js';
import {
  type Attribution,
  type LineageOptions,
  type ParentEdge,
  CoarseAttribution,
  DEFAULT_LINEAGE_OPTIONS,
  LmSelfEval,
  ScriptedJudge,
  propagate,
  validateEdges,
  validateLineageOptions,
} from '../../core/lineage/index.js';
import { type SourceTier, type TrustLabel } from '../../core/trust.js';
import type { LlmProvider } from '../../ports/llm.js';
import type { StorageBackend } from '../../ports/storage.js';
import type { Ledger } from '../log/ledger.js';

/** Most parents one entry may name (the HTTP schema's bound, and the entry format's). */
export const MAX_PARENTS = 64;
/** How many (principal, thread) retrievals are remembered for auto-attribution. */
const MAX_THREADS = 10_000;
/** Depth walks stop here: deeper chains count as this step (ScriptedJudge schedule). */
const MAX_STEP = 64;

/**
 * How a deployment picks its attribution algorithm (§3.5): Coarse (default), the hardened
 * LmSelfEval judge over an LLM provider, the harness's scripted schedule, or any
 * {@link Attribution} (e.g. `AttentionAttribution`).
 */
export type AttributionSpec =
  | 'coarse'
  | { readonly judge: LlmProvider }
  | { readonly scripted: { readonly w0: number; readonly d: number } }
  | Attribution;

/** Build the attribution algorithm a spec names. */
export function attributionFrom(spec: AttributionSpec | undefined): Attribution {
  if (spec === undefined || spec === 'coarse') return new CoarseAttribution();
  if ('judge' in spec) return new LmSelfEval(spec.judge);
  if ('scripted' in spec) return new ScriptedJudge(spec.scripted);
  if (typeof spec.attribute !== 'function')
    throw new MemwardenError('LINEAGE_INVALID', 'attribution must implement attribute()');
  return spec;
}

/** Lineage settings of a `Memory` (all explicit; see `LineageOptions`). */
export interface LineageConfig {
  readonly options: LineageOptions;
  readonly attribution: Attribution;
  /** §4.4 `auto_attribute=False`: callers must name parents on every write. */
  readonly explicitParentsOnly: boolean;
}

export function lineageConfig(over?: {
  options?: LineageOptions;
  attribution?: AttributionSpec;
  explicitParentsOnly?: boolean;
}): LineageConfig {
  return {
    options: validateLineageOptions(over?.options ?? DEFAULT_LINEAGE_OPTIONS),
    attribution: attributionFrom(over?.attribution),
    explicitParentsOnly: over?.explicitParentsOnly ?? false,
  };
}

/** What a write asks of the lineage layer. */
export interface LineageRequest {
  readonly principal: string;
  readonly content: string;
  readonly tier: SourceTier;
  readonly threadId?: string;
  readonly parents?: readonly string[];
  readonly weights?: readonly number[];
  readonly derived?: boolean;
  readonly multiHop?: boolean;
  readonly step?: number;
}

/** The lineage that goes into the signed entry. */
export interface ResolvedLineage {
  readonly parents: readonly string[];
  readonly weights: readonly number[];
  readonly label: TrustLabel;
  /** `explicit` (named by the caller), `auto` (last retrieval, §4.4) or `none`. */
  readonly origin: 'explicit' | 'auto' | 'none';
}

interface VerifiedParent {
  readonly id: string;
  readonly content: string;
  readonly label: TrustLabel;
  readonly parents: readonly string[];
}

const threadKey = (principal: string, threadId: string | undefined): string =>
  `${principal}\u0000${threadId ?? ''}`;

/** The §4.4 state slot and the write-time lineage computation. */
export class LineageWriter {
  readonly config: LineageConfig;
  readonly #ledger: Ledger;
  readonly #retrievals = new Map<string, readonly string[]>();
  /** Derivation depth per entry id; entries are immutable, so this never goes stale. */
  readonly #steps = new Map<string, number>();

  constructor(ledger: Ledger, config: LineageConfig) {
    this.#ledger = ledger;
    this.config = config;
  }

  /** on_retrieve (§4.4): the ids just retrieved become the thread's candidate parents. */
  recordRetrieval(principal: string, threadId: string | undefined, ids: readonly string[]): void {
    const k = threadKey(principal, threadId);
    this.#retrievals.delete(k); // re-insert: Map order is recency
    this.#retrievals.set(k, Object.freeze(ids.slice(0, MAX_PARENTS)));
    while (this.#retrievals.size > MAX_THREADS) {
      const oldest = this.#retrievals.keys().next();
      if (oldest.done === true) break;
      this.#retrievals.delete(oldest.value);
    }
  }

  /** The candidate parents auto-attribution would use for (principal, thread). */
  lastRetrieval(principal: string, threadId?: string): readonly string[] | undefined {
    return this.#retrievals.get(threadKey(principal, threadId));
  }

  /** on_write (§4.4): parents, attribution weights and the Equation (1) label. */
  async resolve(view: StorageBackend, req: LineageRequest): Promise<ResolvedLineage> {
    const explicit = req.parents !== undefined;
    if (!explicit && req.weights !== undefined)
      throw new MemwardenError('LINEAGE_INVALID', 'weights need parents');
    const auto =
      explicit || this.config.explicitParentsOnly
        ? undefined
        : this.lastRetrieval(req.principal, req.threadId);
    const ids = req.parents ?? auto ?? [];
    const origin = explicit ? 'explicit' : ids.length > 0 ? 'auto' : 'none';
    checkIds(ids, req.weights);
    const parents: VerifiedParent[] = [];
    for (const id of ids) parents.push(await this.#verifiedParent(view, req.principal, id));

    let weights: readonly number[];
    if (req.weights !== undefined) weights = req.weights;
    else if (parents.length === 0) weights = [];
    else {
      // Only the scripted schedule reads the step; others skip the walk up the chain.
      const step =
        req.step ??
        (this.config.attribution instanceof ScriptedJudge ? await this.#stepOf(view, parents) : 1);
      weights = await this.config.attribution.attribute(
        { content: req.content },
        parents.map((p) => ({ id: p.id, content: p.content })),
        { step },
      );
      if (!Array.isArray(weights) || weights.length !== parents.length)
        throw new MemwardenError(
          'LINEAGE_INVALID',
          'attribution returned the wrong number of weights',
        );
    }
    const edges: ParentEdge[] = parents.map((p, i) => ({
      label: p.label,
      weight: weights[i] as number,
      explicit,
    }));
    validateEdges(edges);
    const label = propagate(
      {
        tier: req.tier,
        ...(req.derived === undefined ? {} : { derived: req.derived || edges.length > 0 }),
        ...(req.multiHop === undefined ? {} : { multiHop: req.multiHop }),
      },
      edges,
      this.config.options,
    );
    return { parents: ids, weights: [...weights], label, origin };
  }

  /** Load a parent through the principal's view and verify it; `LINEAGE_INVALID` otherwise. */
  async #verifiedParent(
    view: StorageBackend,
    principal: string,
    id: string,
  ): Promise<VerifiedParent> {
    const stored = await view.getEntry(id);
    if (stored === undefined)
      throw new MemwardenError('LINEAGE_INVALID', 'unknown parent', { details: { parent: id } });
    const v = await this.#ledger.verifyStored(stored);
    if (!v.ok)
      throw new MemwardenError('LINEAGE_INVALID', 'parent failed verification', {
        details: { parent: id, code: v.code, stage: v.stage },
      });
    // Defence in depth over row-level security: only own or operator entries may be parents.
    if (v.entry.ns !== principal && v.entry.tier !== 'OPERATOR')
      throw new MemwardenError('LINEAGE_INVALID', 'unknown parent', { details: { parent: id } });
    return { id, content: v.entry.content, label: v.entry.label, parents: v.entry.parents };
  }

  /**
   * Derivation step k of the child (1 + the deepest parent's step; an underived entry is step
   * 0), for the scripted schedule w_k = w0·d^(k−1). Parents verified on the way; a grandparent
   * that cannot be loaded counts as step 0 (its own write already had to verify it).
   */
  async #stepOf(view: StorageBackend, parents: readonly VerifiedParent[]): Promise<number> {
    let best = 0;
    for (const p of parents)
      best = Math.max(best, await this.#stepOfEntry(view, p.id, p.parents, 0));
    return Math.min(best + 1, MAX_STEP);
  }

  async #stepOfEntry(
    view: StorageBackend,
    id: string,
    parents: readonly string[],
    depth: number,
  ): Promise<number> {
    const hit = this.#steps.get(id);
    if (hit !== undefined) return hit;
    if (parents.length === 0) return this.#remember(id, 0);
    if (depth >= MAX_STEP) return MAX_STEP;
    let best = 0;
    for (const pid of parents) {
      let s = this.#steps.get(pid);
      if (s === undefined) {
        const stored = await view.getEntry(pid);
        const v = stored === undefined ? undefined : await this.#ledger.verifyStored(stored);
        s = v?.ok === true ? await this.#stepOfEntry(view, pid, v.entry.parents, depth + 1) : 0;
      }
      best = Math.max(best, s);
    }
    return this.#remember(id, Math.min(best + 1, MAX_STEP));
  }

  #remember(id: string, step: number): number {
    if (this.#steps.size >= 100_000) this.#steps.delete(this.#steps.keys().next().value as string);
    this.#steps.set(id, step);
    return step;
  }
}

function checkIds(ids: readonly string[], weights: readonly number[] | undefined): void {
  if (!Array.isArray(ids) || ids.length > MAX_PARENTS)
    throw new MemwardenError('LINEAGE_INVALID', `at most ${MAX_PARENTS} parents`);
  if (new Set(ids).size !== ids.length)
    throw new MemwardenError('LINEAGE_INVALID', 'duplicate parent');
  for (const id of ids)
    if (typeof id !== 'string' || id.length === 0)
      throw new MemwardenError('LINEAGE_INVALID', 'malformed parent id');
  if (weights !== undefined && (!Array.isArray(weights) || weights.length !== ids.length))
    throw new MemwardenError('LINEAGE_INVALID', 'one weight per parent');
}
