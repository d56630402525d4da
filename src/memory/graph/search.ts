/**
 * @module memory/graph/search
 * Graph search in the product (issue 19): semantic + PPR, community or RRF selection over one
 * principal's graph, results sealed and scored like memories, and — for a selection that
 * justifies a sensitive action — the AuthSelect replay on the authenticated subgraph with the
 * gate's verdict on the divergence (AuthSelect §5).
 *
 * What counts as authenticated is {@link GraphAuthPolicy}: an edge (any structural write)
 * belongs to G_A only when its writer's kind is admitted AND its lineage label is admitted AND
 * its tier's authority is at least A. The default admits operators, users and agents with a
 * TRUSTED or DERIVED_TRUSTED label: an agent's edge derived from tool or web content carries
 * DERIVED_UNTRUSTED and is not authenticated; a `tool` or `external` principal's never is; an
 * unknown writer never is (fail closed).
 *
 * Seeds: the known entities the query names (longest match, `GraphMemory.groundQuery`), else
 * the entities whose names are semantically closest to the query (cosine ≥ `linkThreshold`).
 * Candidates: entity and passage nodes. RRF fuses a semantic and a lexical ranking of the
 * candidates' text: no structural term, so no structural write can steer it (immune, §4.3).
 */
import { toHex } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import { type Policy, decideByAuthority, requiredAuthority } from '../../core/gate/index.js';
import {
  type GraphIndex,
  authSelect,
  communitySelect,
  divergenceAuthority,
  reciprocalRankFusion,
  type ReplayMode,
} from '../../core/graph/index.js';
import { renderSegments } from '../../core/render/sentinel.js';
import { cosine } from '../../core/smsr/index.js';
import {
  type Authority,
  type PrincipalKind,
  type SourceTier,
  type TrustLabel,
  authorityRank,
  effectiveAuthority,
  meetAuthority,
  tierAuthority,
} from '../../core/trust.js';
import type { Embedder } from '../../ports/embedder.js';
import type { GraphMemory } from './graph.js';
import type { GraphHit, GraphSearchOptions, GraphSearchResult, GraphSelector } from '../api.js';

export type { GraphHit, GraphSearchOptions, GraphSearchResult, GraphSelector };

/** Which writes form the authenticated subgraph G_A (see the module comment). */
export interface GraphAuthPolicy {
  /** Principal kinds whose writes may be authenticated. */
  readonly writerKinds: readonly PrincipalKind[];
  /** Lineage labels an authenticated write may carry. */
  readonly labels: readonly TrustLabel[];
}

/** Writer authority AND trusted lineage (issue 19's default). */
export const DEFAULT_GRAPH_AUTH_POLICY: GraphAuthPolicy = Object.freeze({
  writerKinds: Object.freeze(['operator', 'user', 'agent'] as PrincipalKind[]),
  labels: Object.freeze(['TRUSTED', 'DERIVED_TRUSTED'] as TrustLabel[]),
});

/** Stricter: only operators and users shape an authenticated selection (agents are peers). */
export const USERS_ONLY_GRAPH_AUTH_POLICY: GraphAuthPolicy = Object.freeze({
  writerKinds: Object.freeze(['operator', 'user'] as PrincipalKind[]),
  labels: Object.freeze(['TRUSTED', 'DERIVED_TRUSTED'] as TrustLabel[]),
});

/**
 * The authority a write carries into the graph index under `policy`: its effective authority
 * (tier and label), capped at U unless the writer's kind and the label are admitted. A writer
 * the registry does not know (`undefined`) is never authenticated.
 */
export function graphAuthority(
  policy: GraphAuthPolicy,
  e: { readonly tier: SourceTier; readonly label: TrustLabel },
  writerKind: PrincipalKind | undefined,
): Authority {
  const own = effectiveAuthority(e.tier, e.label);
  const admitted =
    writerKind !== undefined &&
    policy.writerKinds.includes(writerKind) &&
    policy.labels.includes(e.label) &&
    authorityRank(tierAuthority(e.tier)) >= authorityRank('A');
  return admitted ? own : meetAuthority(own, 'U');
}

export const GraphSelectors: readonly GraphSelector[] = ['ppr', 'community', 'rrf'];

export interface GraphSearchDeps {
  readonly random: { randomBytes(n: number): Uint8Array };
  readonly embedder?: Embedder;
  readonly policy: () => Policy;
  readonly audit?: (
    actor: string,
    action: string,
    subject: string,
    details: Record<string, string | number | boolean | null>,
  ) => Promise<void>;
  /** Cosine a semantic seed link needs (default 0.35). */
  readonly linkThreshold?: number;
}

const entityNode = (name: string): string => `entity:${name}`;

/** Selection over a principal's {@link GraphMemory}. */
export class GraphSearch {
  /** text → embedding (entity names, passage texts, queries), bounded. */
  private readonly vectors = new Map<string, Float32Array>();

  constructor(private readonly d: GraphSearchDeps) {}

  async search(
    graph: GraphMemory,
    query: string,
    opts: GraphSearchOptions,
  ): Promise<GraphSearchResult> {
    if (typeof query !== 'string' || query.length === 0 || query.length > 8192)
      throw new MemwardenError(
        'INPUT_INVALID',
        'query must be a non-empty string of at most 8192 chars',
      );
    const selector = opts.selector ?? 'ppr';
    if (!GraphSelectors.includes(selector))
      throw new MemwardenError(
        'INPUT_INVALID',
        `selector must be one of ${GraphSelectors.join(', ')}`,
      );
    const k = opts.k ?? 5;
    if (!Number.isSafeInteger(k) || k < 1 || k > 50)
      throw new MemwardenError('INPUT_INVALID', 'k must be an integer in 1..50');
    const index = graph.index;
    const candidates = this.candidates(index);
    let seeds: string[] = [];
    let full: number[];
    let auth: number[];
    let diverged = false;
    let mode: ReplayMode | 'immune';
    let scoreOf: (n: number) => number;
    if (selector === 'rrf') {
      ({ full, scoreOf } = await this.rrf(graph, query, candidates, k));
      auth = full;
      mode = 'immune';
    } else {
      seeds = await this.seeds(graph, query, opts.seeds);
      const seedNodes = seeds
        .map((s) => index.index(entityNode(s)))
        .filter((x): x is number => x !== undefined);
      if (seedNodes.length === 0)
        throw new MemwardenError('INPUT_INVALID', 'the query names no known entity', {
          details: { field: 'query' },
        });
      if (selector === 'ppr') {
        const sel = graph.select(query, k, seeds, candidates);
        full = [...sel.full];
        auth = [...sel.auth];
        diverged = sel.diverged;
        mode = sel.mode;
        const sc = sel.fullScores;
        const top = full.length > 0 && sc !== undefined ? (sc[full[0]!] ?? 0) : 0;
        scoreOf = (n) => (sc === undefined || top <= 0 ? 0 : Math.min(1, (sc[n] ?? 0) / top));
      } else {
        const primary = seedNodes[0]!;
        const r = authSelect(index, (view) =>
          communitySelect(view, primary, candidates, k, { seed: 1 }),
        );
        full = [...r.full.nodes];
        auth = [...r.auth.nodes];
        diverged = r.diverged;
        mode = r.mode;
        scoreOf = (n) => 1 - full.indexOf(n) / Math.max(full.length, 1);
      }
    }
    const authority = divergenceAuthority(index, full, diverged);
    const results = this.hits(graph, full, scoreOf);
    const seal = toHex(this.d.random.randomBytes(16));
    const authenticated = diverged
      ? (() => {
          const r = this.hits(graph, auth, (n) => 1 - auth.indexOf(n) / Math.max(auth.length, 1));
          const s = toHex(this.d.random.randomBytes(16));
          return { results: r, context: render(r, s), seal: s };
        })()
      : undefined;
    let verdict: GraphSearchResult['verdict'];
    if (opts.action !== undefined) {
      const policy = this.d.policy();
      const required = requiredAuthority(policy, opts.action);
      const tool = policy.tools.get(opts.action);
      const v = decideByAuthority(required, authority, {
        mode: tool?.mode ?? 'deny',
        tool: opts.action,
        ...(authenticated === undefined
          ? {}
          : { repairedArguments: { selection: authenticated.results.map((h) => h.name) } }),
        usedSources: results.map((h) => ({
          kind: 'segment',
          entryId: h.entryId,
          authority: h.authority,
        })),
      });
      verdict = { kind: v.kind, reason: v.reason, required };
      await this.d.audit?.(opts.principal, `gate.${v.kind}`, opts.action, {
        channel: 'graph_search',
        selector,
        diverged,
        mode,
        have: authority,
        required,
        selected: results.map((h) => h.entryId).join(','),
      });
    }
    return {
      selector,
      seeds,
      results,
      context: render(results, seal),
      seal,
      authSelect: {
        mode,
        diverged,
        authority,
        ...(authenticated === undefined ? {} : { authenticated }),
      },
      ...(verdict === undefined ? {} : { verdict }),
    };
  }

  private candidates(index: GraphIndex): Int32Array {
    const e = index.nodesOfKind('entity');
    const p = index.nodesOfKind('passage');
    const out = new Int32Array(e.length + p.length);
    out.set(e, 0);
    out.set(p, e.length);
    return out;
  }

  /** Named seeds must exist; else grounded from the query; else the closest entity names. */
  private async seeds(
    graph: GraphMemory,
    query: string,
    given?: readonly string[],
  ): Promise<string[]> {
    if (given !== undefined) {
      if (!Array.isArray(given) || given.length > 32 || !given.every((s) => typeof s === 'string'))
        throw new MemwardenError('INPUT_INVALID', 'seeds must be up to 32 entity names');
      return given.filter((s) => graph.entity(s) !== undefined);
    }
    const grounded = graph.groundQuery(query);
    if (grounded.length > 0 || this.d.embedder === undefined) return grounded;
    const names = graph.entityNames();
    if (names.length === 0) return [];
    const q = await this.embed(query);
    const vs = await this.embedMany(names);
    const scored = names
      .map((n, i) => ({ n, s: cosine(q, vs[i]!) }))
      .filter((x) => x.s >= (this.d.linkThreshold ?? 0.35))
      .sort((a, b) => b.s - a.s);
    return scored.slice(0, 3).map((x) => x.n);
  }

  private async rrf(
    graph: GraphMemory,
    query: string,
    candidates: Int32Array,
    k: number,
  ): Promise<{ full: number[]; scoreOf: (n: number) => number }> {
    const nodes = [...candidates];
    const rels = relationsByEntity(graph);
    const texts = nodes.map((n) => itemText(graph, n, rels));
    const terms = tokens(query);
    const lexical = nodes
      .map((n, i) => ({ n, s: overlap(terms, tokens(texts[i]!)) }))
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s || a.n - b.n)
      .map((x) => x.n);
    let semantic: number[] = [];
    if (this.d.embedder !== undefined && nodes.length > 0) {
      const q = await this.embed(query);
      const vs = await this.embedMany(texts);
      semantic = nodes
        .map((n, i) => ({ n, s: cosine(q, vs[i]!) }))
        .sort((a, b) => b.s - a.s || a.n - b.n)
        .slice(0, Math.max(k * 4, 20))
        .map((x) => x.n);
    }
    const fused = reciprocalRankFusion([semantic, lexical]).slice(0, k);
    const best = fused[0]?.score ?? 0;
    const score = new Map(fused.map((f) => [f.item, best > 0 ? f.score / best : 0]));
    return { full: fused.map((f) => f.item), scoreOf: (n) => score.get(n) ?? 0 };
  }

  private hits(
    graph: GraphMemory,
    nodes: readonly number[],
    scoreOf: (n: number) => number,
  ): GraphHit[] {
    const out: GraphHit[] = [];
    const rels = relationsByEntity(graph);
    for (const n of nodes) {
      const id = graph.index.id(n);
      const authority = graph.index.nodeAuthority(n);
      if (id.startsWith('entity:')) {
        const e = graph.entity(id.slice('entity:'.length));
        if (e === undefined) continue;
        const p = e.provenance as typeof e.provenance & { label?: TrustLabel };
        const label = p.label ?? labelFor(authority);
        out.push({
          node: 'entity',
          name: e.name,
          entryId: p.entryId,
          content: itemText(graph, n, rels),
          score: scoreOf(n),
          tier: p.tier,
          label,
          authority,
          untrusted: authorityRank(authority) < authorityRank('A'),
        });
      } else {
        const pid = id.slice('passage:'.length);
        const ps = graph.passage(pid);
        if (ps === undefined) continue;
        const p = ps.provenance as typeof ps.provenance & { label?: TrustLabel };
        out.push({
          node: 'passage',
          name: pid,
          entryId: pid,
          content: ps.content,
          score: scoreOf(n),
          tier: p.tier,
          label: p.label ?? labelFor(authority),
          authority,
          untrusted: authorityRank(authority) < authorityRank('A'),
        });
      }
    }
    return out;
  }

  private async embed(text: string): Promise<Float32Array> {
    return (await this.embedMany([text]))[0]!;
  }

  private async embedMany(texts: readonly string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !this.vectors.has(t)))];
    if (missing.length > 0 && this.d.embedder !== undefined) {
      const vs = await this.d.embedder.embed(missing);
      if (this.vectors.size + missing.length > 50_000) this.vectors.clear();
      missing.forEach((t, i) => this.vectors.set(t, vs[i]!));
    }
    return texts.map((t) => this.vectors.get(t) ?? new Float32Array(0));
  }
}

/** The label an item is shown with when its provenance does not carry one. */
function labelFor(a: Authority): TrustLabel {
  return authorityRank(a) >= authorityRank('A') ? 'TRUSTED' : 'EXTERNAL';
}

/** Each entity's relations as text with their authority (at most 20 per entity). */
function relationsByEntity(
  graph: GraphMemory,
): Map<string, { text: string; authority: Authority }[]> {
  const out = new Map<string, { text: string; authority: Authority }[]>();
  for (const r of graph.allRelations()) {
    const x = { text: `${r.from} ${r.relationType} ${r.to}`, authority: r.provenance.authority };
    for (const name of r.from === r.to ? [r.from] : [r.from, r.to]) {
      const l = out.get(name) ?? [];
      if (l.length < 20) l.push(x);
      out.set(name, l);
    }
  }
  return out;
}

/**
 * An item's text. An entity's segment carries its observations and relations only when they
 * were written with at least the entity's own authority: a segment is labelled with one
 * authority, and a lower-authority fact inside a trusted entity's segment would be laundered.
 */
function itemText(
  graph: GraphMemory,
  n: number,
  rels: Map<string, { text: string; authority: Authority }[]>,
): string {
  const id = graph.index.id(n);
  if (id.startsWith('passage:')) return graph.passage(id.slice('passage:'.length))?.content ?? '';
  const e = graph.entity(id.slice('entity:'.length));
  if (e === undefined) return '';
  const floor = authorityRank(graph.index.nodeAuthority(n));
  const ok = (a: Authority): boolean => authorityRank(a) >= floor;
  return [
    `${e.name} (${e.entityType})`,
    ...e.observations.filter((o) => ok(o.provenance.authority)).map((o) => o.text),
    ...(rels.get(e.name) ?? []).filter((r) => ok(r.authority)).map((r) => r.text),
  ].join('\n');
}

function render(hits: readonly GraphHit[], seal: string): string {
  return renderSegments(
    hits.map((h) => ({
      id: h.entryId,
      label: h.label,
      tier: h.tier,
      authority: h.authority,
      content: h.content,
    })),
    seal,
  );
}

function tokens(s: string): Set<string> {
  return new Set(
    s
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((t) => t.length > 1),
  );
}
function overlap(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const t of a) if (b.has(t)) n++;
  return n;
}
