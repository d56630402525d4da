/**
 * @module memory/graph/principal-graph
 * One principal's knowledge graph as `Memory.graph(principal)` serves it to a channel (the MCP
 * graph tools): folded from the principal's own and OPERATOR graph entries (its row-level-
 * security view), written through the write path, read back sealed and scored like memories.
 *
 * - Calls are serialised per principal (check-then-write on one fold), never across
 *   principals: a large call of one principal does not hold up another's (issue 17).
 * - Reads (`read_graph`, `search_nodes`, `open_nodes`) return the reference server's JSON with
 *   provenance, and the same objects rendered as sentinel segments under a fresh seal (what a
 *   prompt should get: labelled data, never instructions); every object is scored first by the
 *   detection pipeline's read-time checks (`scoreRead`, content-only: injection risk and the
 *   classifier hook), and a flagged one is left out and listed in `dropped` with
 *   `POISONING_SIGNAL`, as search does with memories.
 */
import { renderSegments } from '../../core/render/sentinel.js';
import { type SourceTier, effectiveAuthority } from '../../core/trust.js';
import type { EntityState, GraphLineage, GraphMemory, Provenance } from './graph.js';
import type {
  HeldGraphObject,
  KgEntity,
  KgGraph,
  KgRelation,
  KnowledgeGraphTools,
} from './knowledge-graph.js';

/** What a graph tool call returns to a channel. */
export interface GraphToolResult {
  /** The reference server's result (entities / relations / graph page), with provenance. */
  readonly result: unknown;
  /** Writes of this call held for review (not in `result`). */
  readonly held: readonly HeldGraphObject[];
  /** Reads: the returned objects as sealed sentinel segments, for a prompt. */
  readonly context?: string;
  /** Reads: the seal of `context`. */
  readonly seal?: string;
  /** Reads: objects left out by read-time scoring. */
  readonly dropped?: readonly { readonly id: string; readonly code: string }[];
}

export interface PrincipalGraphDeps {
  /** Read-time scoring of one object's text: true when flagged (left out). */
  readonly flagged?: (text: string, tier: SourceTier) => Promise<boolean>;
  /** A fresh random seal for a rendered context. */
  readonly seal: () => string;
}

const READS: ReadonlySet<string> = new Set(['read_graph', 'search_nodes', 'open_nodes']);

export class PrincipalGraph {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly tools: KnowledgeGraphTools;
  /** entry id → flagged, per immutable entry (an object's verdict does not change). */
  private readonly verdicts = new Map<string, boolean>();

  constructor(
    readonly principal: string,
    readonly graph: GraphMemory,
    tools: KnowledgeGraphTools,
    private readonly d: PrincipalGraphDeps,
  ) {
    this.tools = tools;
  }

  /**
   * Run one knowledge-graph tool as this principal through channel tier `tier`. A write's
   * `lineage` names what it derives from (the thread whose retrieval it read, explicit parents):
   * the write path signs the inherited label into every object of the call (issue 19).
   */
  call(
    name: string,
    args: unknown,
    tier: SourceTier,
    lineage: GraphLineage = {},
  ): Promise<GraphToolResult> {
    const run = this.chain.then(async (): Promise<GraphToolResult> => {
      await this.graph.refresh();
      const r = await this.tools.call(name, args, { ...lineage, principal: this.principal, tier });
      if (!READS.has(name)) return r;
      return this.sealed(r.result as KgGraph);
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Run `fn` over the refreshed fold, in this principal's call order (a fold is not re-entrant). */
  read<T>(fn: (graph: GraphMemory) => Promise<T>): Promise<T> {
    const run = this.chain.then(async () => {
      await this.graph.refresh();
      return fn(this.graph);
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Score every object of a read, drop the flagged ones, render the rest sealed. */
  private async sealed(g: KgGraph): Promise<GraphToolResult> {
    const dropped: { id: string; code: string }[] = [];
    const ok = async (p: Provenance | undefined, text: string): Promise<boolean> => {
      if (p === undefined || this.d.flagged === undefined) return true;
      let bad = this.verdicts.get(p.entryId);
      if (bad === undefined) {
        bad = await this.d.flagged(text, p.tier);
        if (this.verdicts.size >= 100_000) this.verdicts.clear();
        this.verdicts.set(p.entryId, bad);
      }
      if (bad && !dropped.some((x) => x.id === p.entryId))
        dropped.push({ id: p.entryId, code: 'POISONING_SIGNAL' });
      return !bad;
    };
    const entities: KgEntity[] = [];
    const segments: Parameters<typeof renderSegments>[0][number][] = [];
    const seg = (p: Provenance | undefined, content: string): void => {
      if (p === undefined) return;
      const label = p.label ?? 'EXTERNAL';
      segments.push({
        id: p.entryId,
        label,
        tier: p.tier,
        authority: effectiveAuthority(p.tier, label),
        content,
      });
    };
    for (const e of g.entities) {
      const state = this.graph.entity(e.name);
      // The entity object is its name, type and the observations it was created with; the
      // observations added later are objects of their own, each scored and sealed on its own.
      const own = (state?.observations ?? [])
        .filter((o) => o.provenance.entryId === e.provenance?.entryId)
        .map((o) => o.text);
      const ownText = entityText({ name: e.name, entityType: e.entityType, observations: own });
      if (!(await ok(e.provenance, ownText))) continue;
      seg(e.provenance, ownText);
      if (state === undefined) {
        entities.push(e);
        continue;
      }
      const kept: string[] = [...own];
      for (const o of state.observations) {
        if (o.provenance.entryId === e.provenance?.entryId) continue;
        if (!(await ok(o.provenance, o.text))) continue;
        kept.push(o.text);
        seg(o.provenance, `${e.name}: ${o.text}`);
      }
      entities.push({ ...e, observations: e.observations.filter((t) => kept.includes(t)) });
    }
    const kept = new Set(entities.map((e) => e.name));
    const gone = new Set(g.entities.map((e) => e.name).filter((n) => !kept.has(n)));
    const relations: KgRelation[] = [];
    for (const r of g.relations) {
      if (gone.has(r.from) || gone.has(r.to)) continue;
      if (!(await ok(r.provenance, relationText(r)))) continue;
      relations.push(r);
      seg(r.provenance, relationText(r));
    }
    const seal = this.d.seal();
    return {
      result: { ...g, entities, relations },
      held: [],
      context: segments.length === 0 ? '' : renderSegments(segments, seal),
      seal,
      dropped,
    };
  }
}

function entityText(
  e: Pick<EntityState, 'name' | 'entityType'> & { observations: readonly string[] },
): string {
  return [`${e.name} (${e.entityType})`, ...e.observations].join('\n');
}

function relationText(r: KgRelation): string {
  return `${r.from} ${r.relationType} ${r.to}`;
}
