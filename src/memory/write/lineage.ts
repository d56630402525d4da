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
import { type SourceTier, type TrustLabel, labelValue } from '../../core/trust.js';
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
  /**
   * Auto-attribute from the principal's last retrieval made without a thread (the explicit
   * "derived from the last retrieval" flag, issue 24). With a `threadId`, that thread's last
   * retrieval is used whatever this says.
   */
  readonly fromLastRetrieval?: boolean;
  readonly parents?: readonly string[];
  readonly weights?: readonly number[];
  readonly derived?: boolean;
  readonly multiHop?: boolean;
  readonly step?: number;
  /**
   * Take the caller's parents and weights as given (an operator's override, checked and
   * audited by the write path): auto-attribution and the weight floor do not apply.
   */
  readonly override?: boolean;
}

/** Where a write's parents came from (`LineageReport.basis`). */
export type LineageBasis = 'none' | 'explicit' | 'retrieval' | 'explicit+retrieval' | 'override';

/** The lineage that goes into the signed entry, and how it was decided. */
export interface ResolvedLineage {
  readonly parents: readonly string[];
  readonly weights: readonly number[];
  readonly label: TrustLabel;
  /** `explicit` (named by the caller), `auto` (last retrieval, §4.4), both, or `none`. */
  readonly origin: 'explicit' | 'auto' | 'none';
  readonly basis: LineageBasis;
  /** The parents taken from the recorded retrieval (empty when none). */
  readonly autoParents: readonly string[];
  /** The thread whose retrieval was used (`''` for the no-thread retrieval), if any. */
  readonly thread?: string;
  /**
   * The caller's lineage would have given a lower label or lower weights than the recorded
   * retrievals and the attribution algorithm imply; the floor was applied.
   */
  readonly raised: boolean;
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

  /**
   * on_write (§4.4): parents, attribution weights and the Equation (1) label. Lineage from a
   * caller can only add taint (issue 17): the parents are the caller's explicit ones PLUS the
   * recorded retrieval's (an explicit `parents: []` does not remove them), each weight is at
   * least the attribution algorithm's (on its own derivation step), and the label is never
   * below the one the algorithm alone gives on those parents. Auto-attribution is scoped
   * (issue 24): it uses the retrieval recorded for `threadId`, or the no-thread retrieval only
   * with `fromLastRetrieval`; a write with neither is not tainted by an unrelated search.
   * `override` (an operator's, checked by the caller) takes parents and weights as given.
   */
  async resolve(view: StorageBackend, req: LineageRequest): Promise<ResolvedLineage> {
    const none = this.resolveWithoutParents(req);
    if (none !== undefined) return none;
    const explicit = req.parents !== undefined;
    if (!explicit && req.weights !== undefined)
      throw new MemwardenError('LINEAGE_INVALID', 'weights need parents');
    if (explicit) checkIds(req.parents, req.weights);
    const scoped = req.threadId !== undefined || req.fromLastRetrieval === true;
    const useAuto = scoped && !this.config.explicitParentsOnly && req.override !== true;
    const auto = useAuto ? (this.lastRetrieval(req.principal, req.threadId) ?? []) : [];
    const named = req.parents ?? [];
    let ids: readonly string[];
    if (req.override === true) ids = named;
    else if (auto.length === 0) ids = named;
    else {
      const seen = new Set(named);
      ids = [...named, ...auto.filter((id) => !seen.has(id))];
    }
    checkIds(ids, undefined);
    const namedSet = new Set(named);
    const parents: VerifiedParent[] = [];
    for (const id of ids) parents.push(await this.#verifiedParent(view, req.principal, id));

    // The algorithm's weights on its own derivation step (the floor), and on the caller's step.
    const algorithm = async (step: number | undefined): Promise<readonly number[]> => {
      if (parents.length === 0) return [];
      const k =
        step ??
        (this.config.attribution instanceof ScriptedJudge ? await this.#stepOf(view, parents) : 1);
      const w = await this.config.attribution.attribute(
        { content: req.content },
        parents.map((p) => ({ id: p.id, content: p.content })),
        { step: k },
      );
      if (!Array.isArray(w) || w.length !== parents.length)
        throw new MemwardenError(
          'LINEAGE_INVALID',
          'attribution returned the wrong number of weights',
        );
      return w;
    };
    const callerWeight = (i: number): number | undefined => {
      if (req.weights === undefined) return undefined;
      const at = named.indexOf(ids[i] as string);
      return at < 0 ? undefined : req.weights[at];
    };
    let weights: number[];
    let raised = false;
    let label: TrustLabel;
    const labelOf = (ws: readonly number[]): TrustLabel => {
      const edges: ParentEdge[] = parents.map((p, i) => ({
        label: p.label,
        weight: ws[i] as number,
        explicit: namedSet.has(p.id),
      }));
      validateEdges(edges);
      return propagate(
        {
          tier: req.tier,
          ...(req.derived === undefined && edges.length === 0
            ? {}
            : { derived: req.derived === true || edges.length > 0 }),
          ...(req.multiHop === undefined ? {} : { multiHop: req.multiHop }),
        },
        edges,
        this.config.options,
      );
    };
    if (req.override === true) {
      const given = req.weights ?? (await algorithm(req.step));
      weights = [...given];
      label = labelOf(weights);
    } else {
      const floor = await algorithm(undefined);
      const asked = req.step === undefined ? floor : await algorithm(req.step);
      weights = parents.map((_, i) => {
        const f = floor[i] as number;
        const c = callerWeight(i) ?? (asked[i] as number);
        if (c < f) raised = true;
        return Math.max(f, c);
      });
      if (auto.some((id) => !namedSet.has(id)) && explicit) raised = true;
      label = labelOf(weights);
      // Never below what the algorithm alone gives on these parents (the §3.5 fallback makes
      // Equation (1)'s label non-monotone in the weights: a weight of 0 can lower it).
      const base = labelOf(floor);
      if (labelValue(base) > labelValue(label)) {
        label = base;
        raised = true;
      }
    }
    const usedAuto = ids.filter((id) => !namedSet.has(id));
    const origin = explicit ? 'explicit' : ids.length > 0 ? 'auto' : 'none';
    const basis: LineageBasis =
      req.override === true
        ? 'override'
        : explicit && named.length > 0 && usedAuto.length > 0
          ? 'explicit+retrieval'
          : named.length > 0
            ? 'explicit'
            : usedAuto.length > 0
              ? 'retrieval'
              : 'none';
    return {
      parents: ids,
      weights,
      label,
      origin,
      basis,
      autoParents: usedAuto,
      ...(useAuto ? { thread: req.threadId ?? '' } : {}),
      raised,
    };
  }

  /**
   * {@link resolve} of a write without any parent — none named (no `parents`, no `weights`), no
   * override, and no recorded retrieval its scope would use — answered without awaiting
   * anything (the common write; issue 17's write-cpu budget, ADR 0088). The same lineage
   * `resolve` gives it (`resolve` answers through this): no parents, no weights, the tier's
   * Equation (1) label, nothing raised. Undefined for every other request.
   */
  resolveWithoutParents(req: LineageRequest): ResolvedLineage | undefined {
    if (req.parents !== undefined || req.weights !== undefined || req.override === true)
      return undefined;
    const scoped = req.threadId !== undefined || req.fromLastRetrieval === true;
    const useAuto = scoped && !this.config.explicitParentsOnly;
    if (useAuto && (this.lastRetrieval(req.principal, req.threadId)?.length ?? 0) > 0)
      return undefined;
    const label = propagate(
      {
        tier: req.tier,
        ...(req.derived === undefined ? {} : { derived: req.derived === true }),
        ...(req.multiHop === undefined ? {} : { multiHop: req.multiHop }),
      },
      [],
      this.config.options,
    );
    return {
      parents: [],
      weights: [],
      label,
      origin: 'none',
      basis: 'none',
      autoParents: [],
      ...(useAuto ? { thread: req.threadId ?? '' } : {}),
      raised: false,
    };
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
  if (weights !== undefined)
    for (const w of weights)
      if (typeof w !== 'number' || !(w >= 0 && w <= 1))
        throw new MemwardenError('LINEAGE_INVALID', 'a weight must be a number in [0, 1]');
}
