/**
 * @module memory/graph/graph
 * Graph memory over the provenance ledger (issue 8; AuthSelect §4–§5). Passages are ledger
 * entries of kind `passage`; entities, observations, relations, extractions, synonym links and
 * deletions are signed entries of kind `graph` (`memory/graph-objects`). No storage change: the
 * graph is a fold over verified entries, held in a `core/graph` index that keeps the full view G
 * and the authenticated view G_A side by side and is updated incrementally on every write.
 *
 * Integrity:
 * - an object's integrity is that of its own write — the entry's effective authority (tier and
 *   label, `core/trust`) — never its endpoints' (Definition 1);
 * - derived objects (an extraction from a passage, a synonym link over two entities) take the
 *   minimum over their derivation closure: the write itself and every parent (min-inheritance);
 * - an entry that fails verification never enters the graph; a deletion needs at least the
 *   authority of what it deletes (a U principal cannot remove authenticated structure).
 *
 * Selection is HippoRAG2's: seeds are the known entities a query mentions, passages ranked by
 * their own PPR mass; `select` returns the full-view selection and its AuthSelect replay, and
 * `decide` routes a divergence through the gate (`decideByAuthority`, §5.2).
 */
import {
  type AuthorityDecisionOptions,
  type Verdict,
  decideByAuthority,
} from '../../core/gate/index.js';
import {
  type AuthSelectResult,
  GraphIndex,
  type PprOptions,
  authSelectPpr,
  divergenceAuthority,
} from '../../core/graph/index.js';
import { MemwardenError } from '../../core/errors.js';
import {
  type Authority,
  type SourceTier,
  type TrustLabel,
  authorityRank,
  effectiveAuthority,
  meetAuthority,
} from '../../core/trust.js';
import type { Embedder } from '../../ports/embedder.js';
import type { StoredEntry } from '../../ports/storage.js';
import type { Verification } from '../log/ledger.js';
import type { GraphWriteItem, GraphWriteOutcome } from '../write/write-path.js';
import type { Extractor } from './extract.js';
import { proposeMerges } from './merge.js';
import {
  GRAPH_KIND,
  type GraphObject,
  PASSAGE_KIND,
  encodeGraphObject,
  relationKey,
  safeDecodeGraphObject,
} from './objects.js';

/** Provenance every graph object carries. */
export interface Provenance {
  readonly entryId: string;
  readonly writer: string;
  readonly tier: SourceTier;
  /** Minimum over the write and its derivation closure. */
  readonly authority: Authority;
  /** The entry's signed lineage label. */
  readonly label?: TrustLabel;
  /** When the object's entry expires (ISO-8601), if it does. */
  readonly expiresAt?: string;
}

export interface EntityState {
  readonly name: string;
  readonly entityType: string;
  readonly observations: { readonly text: string; readonly provenance: Provenance }[];
  readonly provenance: Provenance;
}

export interface RelationState {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
  readonly weight: number;
  readonly provenance: Provenance;
}

export interface PassageState {
  readonly id: string;
  readonly content: string;
  readonly provenance: Provenance;
}

/**
 * What a graph write derives from (issue 19): the memory the writer read before writing it.
 * The write path resolves it as for any write — the explicit `parents` plus the last retrieval
 * recorded for `threadId` (or, with `fromLastRetrieval`, the one made without a thread) — and
 * signs the Equation (1) label, so an agent's node or edge derived from tool or web content is
 * DERIVED_UNTRUSTED and never enters the authenticated subgraph.
 */
export interface GraphLineage {
  readonly threadId?: string;
  readonly fromLastRetrieval?: boolean;
  readonly parents?: readonly string[];
}

/** Who writes, through which channel, derived from what. */
export interface WriteContext extends GraphLineage {
  readonly principal: string;
  readonly tier: SourceTier;
}

/**
 * Where a graph reads its entries: stored entries after a leaf index in log order (the
 * principal's visible ones, under row-level security, for a principal's graph), and their
 * verification.
 */
export interface GraphSource {
  list(afterLeafIndex: number, limit: number): Promise<readonly StoredEntry[]>;
  verify(stored: StoredEntry): Promise<Verification>;
}

/**
 * How a graph writes: the write path (`Memory`'s, for a principal's graph): each object
 * screened, held for review when flagged, stored as a signed entry with its tier's TTL, under
 * the quota. A stored object comes back as its verified record.
 */
export interface GraphWriter {
  write(items: readonly GraphWriteItem[], ctx: WriteContext): Promise<GraphWriteOutcome[]>;
}

/** One object's write outcome: its entry id, or the review holding it. */
export type GraphObjectResult =
  | { readonly status: 'stored'; readonly id: string }
  | {
      readonly status: 'pending_review';
      readonly reviewId: string;
      readonly reasons: readonly string[];
    };

export interface GraphMemoryOptions {
  readonly source: GraphSource;
  readonly writer: GraphWriter;
  /** The clock expiry is judged by (objects past their entry's expiry are not served). */
  readonly clock?: { nowNs(): bigint };
  readonly extractor?: Extractor;
  readonly embedder?: Embedder;
  /** Synonymy threshold (AuthSelect Table VIII: 0.8). */
  readonly mergeThreshold?: number;
  readonly ppr?: PprOptions;
  /**
   * Which stored entries this graph folds (default: all — one deployment-wide graph). A graph
   * served to one principal must fold only what that principal may read: its own entries and
   * OPERATOR ones (the MCP server passes exactly that).
   */
  readonly visible?: (entry: { readonly owner: string; readonly tier: SourceTier }) => boolean;
  /**
   * The authentication policy (issue 19): the authority a verified write carries into the index
   * before min-inheritance — what decides membership of the authenticated subgraph G_A.
   * Default: the entry's effective authority (tier and lineage label, `core/trust`);
   * `graphAuthority(policy, writerKind)` (memory/graph/search) adds the writer's kind.
   */
  readonly authority?: (entry: {
    readonly writer: string;
    readonly tier: SourceTier;
    readonly label: TrustLabel;
  }) => Authority | Promise<Authority>;
}

export interface GraphSelection extends AuthSelectResult {
  /** Passage entry ids selected on G and on G_A. */
  readonly fullIds: readonly string[];
  readonly authIds: readonly string[];
  /** The authority the full-view selection carries into the gate. */
  readonly authority: Authority;
  readonly seeds: readonly string[];
}

const entityNode = (name: string): string => `entity:${name}`;
const passageNode = (id: string): string => `passage:${id}`;

export class GraphMemory {
  readonly index = new GraphIndex();
  private readonly entities = new Map<string, EntityState>();
  private readonly relations = new Map<string, RelationState>();
  private readonly passages = new Map<string, PassageState>();
  /** entry id → authority, for every graph/passage entry folded so far (derivation closure). */
  private readonly authorityOf = new Map<string, Authority>();
  private lastLeaf = -1;

  private constructor(private readonly opts: GraphMemoryOptions) {}

  /** entry id → provenance of every folded entry. */
  private readonly provOf = new Map<string, Provenance>();
  /** Ids of every graph or passage entry listed, folded or not (see `fold`). */
  private readonly graphEntries = new Set<string>();
  /** entry id → expiry (ns) of every folded entry that expires. */
  private readonly expiryOf = new Map<string, bigint>();

  /** Open over a source and fold every verified graph and passage entry already in it. */
  static async open(opts: GraphMemoryOptions): Promise<GraphMemory> {
    const g = new GraphMemory(opts);
    await g.refresh();
    return g;
  }

  /** Fold entries appended since the last refresh (in log order), verifying each. */
  async refresh(): Promise<number> {
    let folded = 0;
    for (;;) {
      const batch = await this.opts.source.list(this.lastLeaf, 1000);
      if (batch.length === 0) return folded;
      for (const s of batch) {
        this.lastLeaf = Math.max(this.lastLeaf, s.leafIndex);
        if (s.kind !== GRAPH_KIND && s.kind !== PASSAGE_KIND) continue;
        this.graphEntries.add(s.id);
        if (this.opts.visible !== undefined && !this.opts.visible(s)) continue;
        if (this.authorityOf.has(s.id)) continue;
        if (await this.foldStored(s)) folded++;
      }
    }
  }

  private async foldStored(s: StoredEntry): Promise<boolean> {
    if (s.deleted === true) return false;
    const v = await this.opts.source.verify(s);
    if (!v.ok) return false;
    const e = v.entry;
    if (s.expiresAtNs !== undefined) this.expiryOf.set(e.id, s.expiresAtNs);
    this.fold(
      e.id,
      e.kind,
      e.content,
      e.writer,
      e.tier,
      await this.ownAuthority(e),
      e.parents,
      e.label,
    );
    return true;
  }

  /** A verified write's own authority under the graph's authentication policy. */
  private async ownAuthority(e: {
    readonly writer: string;
    readonly tier: SourceTier;
    readonly label: TrustLabel;
  }): Promise<Authority> {
    const policy = this.opts.authority;
    if (policy === undefined) return effectiveAuthority(e.tier, e.label);
    // Never above the entry's own effective authority, whatever a policy returns.
    return meetAuthority(effectiveAuthority(e.tier, e.label), await policy(e));
  }

  /** Whether a folded object's entry is still live (not past its expiry). */
  private live(p: Provenance): boolean {
    const exp = this.expiryOf.get(p.entryId);
    return exp === undefined || this.opts.clock === undefined || exp > this.opts.clock.nowNs();
  }

  /** Apply one verified entry to the state and the index. */
  private fold(
    id: string,
    kind: string,
    content: string,
    writer: string,
    tier: SourceTier,
    own: Authority,
    parents: readonly string[],
    label: TrustLabel,
  ): void {
    // Min-inheritance over the graph's own derivation closure. A parent that is a graph entry
    // this fold did not take (unverified, deleted, invisible) makes the object BOTTOM; a parent
    // outside the graph (a memory the writer read) was verified by the write path, which signed
    // its trust into this entry's label (`own` already carries it).
    let authority = own;
    for (const p of parents) {
      const pa = this.authorityOf.get(p);
      if (pa !== undefined) authority = meetAuthority(authority, pa);
      else if (this.graphEntries.has(p)) authority = 'BOTTOM';
    }
    this.authorityOf.set(id, authority);
    const exp = this.expiryOf.get(id);
    const prov: Provenance = {
      entryId: id,
      writer,
      tier,
      authority,
      label,
      ...(exp === undefined ? {} : { expiresAt: new Date(Number(exp / 1_000_000n)).toISOString() }),
    };
    this.provOf.set(id, prov);
    if (kind === PASSAGE_KIND) {
      this.passages.set(id, { id, content, provenance: prov });
      this.index.addNode(passageNode(id), 'passage', authority);
      return;
    }
    const o = safeDecodeGraphObject(content);
    if (o === undefined || authority === 'BOTTOM') return;
    this.apply(o, prov);
  }

  private ensureEntity(name: string, entityType: string, prov: Provenance): EntityState {
    let e = this.entities.get(name);
    if (e === undefined) {
      e = { name, entityType, observations: [], provenance: prov };
      this.entities.set(name, e);
      this.index.addNode(entityNode(name), 'entity', prov.authority);
    }
    return e;
  }

  private apply(o: GraphObject, prov: Provenance): void {
    const may = (target: Provenance): boolean =>
      authorityRank(prov.authority) >= authorityRank(target.authority);
    switch (o.t) {
      case 'entity': {
        if (this.entities.has(o.name)) return; // the reference server ignores existing names
        const e = this.ensureEntity(o.name, o.entityType, prov);
        for (const text of o.observations) e.observations.push({ text, provenance: prov });
        return;
      }
      case 'observation': {
        const e = this.entities.get(o.entity);
        if (e !== undefined && !e.observations.some((x) => x.text === o.text))
          e.observations.push({ text: o.text, provenance: prov });
        return;
      }
      case 'relation': {
        const key = relationKey(o.from, o.to, o.relationType);
        if (this.relations.has(key)) return;
        this.ensureEntity(o.from, 'entity', prov);
        this.ensureEntity(o.to, 'entity', prov);
        const weight = o.weight ?? 1;
        this.relations.set(key, {
          from: o.from,
          to: o.to,
          relationType: o.relationType,
          weight,
          provenance: prov,
        });
        if (o.from !== o.to)
          this.index.addEdge({
            id: key,
            a: entityNode(o.from),
            b: entityNode(o.to),
            weight,
            authority: prov.authority,
            kind: 'relation',
          });
        return;
      }
      case 'extraction': {
        if (!this.passages.has(o.passage)) return;
        const pn = passageNode(o.passage);
        o.entities.forEach((name, i) => {
          this.ensureEntity(name, 'entity', prov);
          this.index.addEdge({
            id: `${prov.entryId}#m${i}`,
            a: pn,
            b: entityNode(name),
            weight: 1,
            authority: prov.authority,
            kind: 'mention',
          });
        });
        o.triples.forEach(([s, p, ob], i) => {
          const key = relationKey(s, ob, p);
          this.ensureEntity(s, 'entity', prov);
          this.ensureEntity(ob, 'entity', prov);
          if (!this.relations.has(key))
            this.relations.set(key, {
              from: s,
              to: ob,
              relationType: p,
              weight: 1,
              provenance: prov,
            });
          if (s !== ob)
            this.index.addEdge({
              id: `${prov.entryId}#t${i}`,
              a: entityNode(s),
              b: entityNode(ob),
              weight: 1,
              authority: prov.authority,
              kind: 'relation',
            });
        });
        return;
      }
      case 'synonym': {
        if (!this.entities.has(o.a) || !this.entities.has(o.b) || o.a === o.b) return;
        this.index.addEdge({
          id: `${prov.entryId}#s`,
          a: entityNode(o.a),
          b: entityNode(o.b),
          weight: o.score,
          authority: prov.authority,
          kind: 'synonym',
        });
        return;
      }
      case 'delete_entity': {
        const e = this.entities.get(o.name);
        if (e === undefined || !may(e.provenance)) return;
        this.entities.delete(o.name);
        for (const [k, r] of this.relations)
          if (r.from === o.name || r.to === o.name) this.relations.delete(k);
        // Cascade in the index: drop every edge incident to the entity node.
        const n = this.index.index(entityNode(o.name));
        if (n !== undefined)
          for (const edge of [...this.index.allEdges()])
            if (edge.a === n || edge.b === n) this.index.removeEdge(edge.id);
        return;
      }
      case 'delete_observation': {
        const e = this.entities.get(o.entity);
        if (e === undefined) return;
        const i = e.observations.findIndex((x) => x.text === o.text);
        if (i >= 0 && may(e.observations[i]!.provenance)) e.observations.splice(i, 1);
        return;
      }
      case 'delete_relation': {
        const key = relationKey(o.from, o.to, o.relationType);
        const r = this.relations.get(key);
        if (r === undefined || !may(r.provenance)) return;
        this.relations.delete(key);
        this.index.removeEdge(key);
        return;
      }
    }
  }

  // ---- writes ------------------------------------------------------------------------------

  /**
   * Write structural objects through the writer (the write path), folding each stored one.
   * Returns one result per object, in order: its entry id, or the review holding it.
   */
  async writeObjects(
    items: readonly { readonly o: GraphObject; readonly parents?: readonly string[] }[],
    ctx: WriteContext,
  ): Promise<GraphObjectResult[]> {
    const outs = await this.opts.writer.write(
      items.map((it) => ({
        content: encodeGraphObject(it.o),
        kind: GRAPH_KIND,
        screenText: screenTextOf(it.o),
        ...(it.parents === undefined || it.parents.length === 0 ? {} : { parents: it.parents }),
      })),
      ctx,
    );
    const results: GraphObjectResult[] = [];
    // In order: a later object may name an earlier one as its parent (min-inheritance).
    for (const r of outs)
      results.push(
        r.status === 'stored' ? { status: 'stored', id: await this.foldRecord(r.memory) } : r,
      );
    return results;
  }

  /** Fold a record the writer just stored; returns its id. */
  private async foldRecord(m: GraphWriteStored): Promise<string> {
    if (m.expiresAt !== undefined)
      this.expiryOf.set(m.id, BigInt(Date.parse(m.expiresAt)) * 1_000_000n);
    this.graphEntries.add(m.id);
    this.fold(
      m.id,
      m.kind,
      m.content,
      m.writer,
      m.tier,
      await this.ownAuthority(m),
      m.parents,
      m.label,
    );
    return m.id;
  }

  /**
   * Write one structural object. Returns its entry id; a held object is `WRITE_HELD` (details:
   * the review id and reasons).
   */
  async writeObject(
    o: GraphObject,
    ctx: WriteContext,
    parents: readonly string[] = [],
  ): Promise<string> {
    const [r] = await this.writeObjects([{ o, parents }], ctx);
    return storedId(r as GraphObjectResult);
  }

  /**
   * Add a passage and, when an extractor is configured (or `extraction` is given), its
   * extraction as a derived write whose parent is the passage (min-inheritance).
   */
  async addPassage(
    content: string,
    ctx: WriteContext,
    extraction?: {
      entities: readonly string[];
      triples: readonly (readonly [string, string, string])[];
    },
  ): Promise<string> {
    const [r] = await this.opts.writer.write(
      [{ content, kind: PASSAGE_KIND, screenText: content }],
      ctx,
    );
    const id = storedId(
      r === undefined || r.status !== 'stored'
        ? (r as GraphObjectResult)
        : { status: 'stored', id: await this.foldRecord(r.memory) },
    );
    let x = extraction;
    if (x === undefined && this.opts.extractor !== undefined) {
      try {
        x = await this.opts.extractor.extract(content);
      } catch (err) {
        // Fail closed: a malformed extraction adds no structure; the passage itself is kept.
        if (!(err instanceof MemwardenError && err.code === 'LLM_MALFORMED')) throw err;
      }
    }
    if (x !== undefined && x.entities.length > 0)
      await this.writeObject(
        {
          t: 'extraction',
          passage: id,
          entities: [...x.entities],
          triples: x.triples.map((t) => [t[0], t[1], t[2]] as const),
        },
        ctx,
        [id],
      );
    return id;
  }

  /**
   * Propose synonym links by embedding similarity and write each as a signed `synonym` entry by
   * `ctx`, with the two entities' own writes as parents. Returns the ids written.
   */
  async mergeSynonyms(ctx: WriteContext, names?: readonly string[]): Promise<string[]> {
    if (this.opts.embedder === undefined)
      throw new MemwardenError('INPUT_INVALID', 'merge needs an embedder');
    const pool = names ?? [...this.entities.keys()];
    const props = await proposeMerges(pool, this.opts.embedder, this.opts.mergeThreshold ?? 0.8);
    const ids: string[] = [];
    for (const p of props) {
      const a = this.entities.get(p.a);
      const b = this.entities.get(p.b);
      if (a === undefined || b === undefined) continue;
      const parents = [...new Set([a.provenance.entryId, b.provenance.entryId])];
      ids.push(
        await this.writeObject({ t: 'synonym', a: p.a, b: p.b, score: p.score }, ctx, parents),
      );
    }
    return ids;
  }

  // ---- reads --------------------------------------------------------------------------------

  /** A live entity (its entry unexpired), with its live observations. */
  entity(name: string): EntityState | undefined {
    const e = this.entities.get(name);
    return e === undefined ? undefined : this.liveEntity(e);
  }
  entityNames(): string[] {
    return this.allEntities().map((e) => e.name);
  }
  allEntities(): EntityState[] {
    const out: EntityState[] = [];
    for (const e of this.entities.values()) {
      const l = this.liveEntity(e);
      if (l !== undefined) out.push(l);
    }
    return out;
  }
  /** Live relations between live entities. */
  allRelations(): RelationState[] {
    return [...this.relations.values()].filter(
      (r) =>
        this.live(r.provenance) &&
        this.entity(r.from) !== undefined &&
        this.entity(r.to) !== undefined,
    );
  }

  private liveEntity(e: EntityState): EntityState | undefined {
    if (this.opts.clock === undefined || this.expiryOf.size === 0) return e;
    if (!this.live(e.provenance)) return undefined;
    const obs = e.observations.filter((o) => this.live(o.provenance));
    return obs.length === e.observations.length ? e : { ...e, observations: obs };
  }
  passage(id: string): PassageState | undefined {
    return this.passages.get(id);
  }
  /** The provenance of a folded entry, if any. */
  provenanceOf(id: string): Provenance | undefined {
    return this.provOf.get(id);
  }
  /** Authority of a folded entry after min-inheritance (⊥ when unknown). */
  authorityOfEntry(id: string): Authority {
    return this.authorityOf.get(id) ?? 'BOTTOM';
  }

  /** Query grounding: known entity names mentioned in the query (longest match wins). */
  groundQuery(query: string): string[] {
    const q = ` ${query.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ')} `;
    const names = [...this.entities.keys()].sort((a, b) => b.length - a.length);
    const out: string[] = [];
    let rest = q;
    for (const n of names) {
      const needle = ` ${n
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, ' ')
        .trim()} `;
      if (needle.trim().length === 0 || !rest.includes(needle)) continue;
      out.push(n);
      rest = rest.replace(needle, ' ');
    }
    return out;
  }

  /** PPR selection of `k` passages for `query`, with its AuthSelect replay (§5.1). */
  select(
    query: string,
    k = 5,
    seedsOverride?: readonly string[],
    candidates?: ArrayLike<number>,
  ): GraphSelection {
    const seeds = seedsOverride ?? this.groundQuery(query);
    const seedNodes = seeds
      .map((s) => this.index.index(entityNode(s)))
      .filter((x): x is number => x !== undefined);
    if (seedNodes.length === 0)
      throw new MemwardenError('INPUT_INVALID', 'the query mentions no known entity');
    const r = authSelectPpr(
      this.index,
      {
        seeds: seedNodes.map((node) => ({ node, weight: 1 })),
        candidates: candidates ?? this.index.nodesOfKind('passage'),
        k,
      },
      this.opts.ppr,
    );
    const toIds = (ns: readonly number[]): string[] =>
      ns.map((n) => this.index.id(n).replace(/^(passage|entity):/, ''));
    return {
      ...r,
      fullIds: toIds(r.full),
      authIds: toIds(r.auth),
      authority: divergenceAuthority(this.index, r.full, r.diverged),
      seeds,
    };
  }

  /**
   * Route a selection through the gate (§5.2): `required` comes from `requiredAuthority(policy,
   * tool)`. Advisory answers (U) are allowed and the caller substitutes `authIds` on divergence;
   * A/T actions get the tool's mode (`require_user`, `deny`, or `repair_and_retry` with the
   * arguments recomputed from the authenticated selection).
   */
  decide(
    sel: GraphSelection,
    required: Authority,
    options: AuthorityDecisionOptions = {},
  ): Verdict {
    return decideByAuthority(required, sel.authority, {
      tool: options.tool ?? 'graph_selection',
      ...options,
      usedSources: sel.fullIds.map((entryId) => ({
        kind: 'segment',
        entryId,
        authority: this.authorityOfEntry(entryId),
      })),
    });
  }
}

/** A stored graph object as the writer returns it (the verified record's fields used here). */
type GraphWriteStored = Extract<GraphWriteOutcome, { status: 'stored' }>['memory'];

/** The entry id of a stored object; a held one is `WRITE_HELD`. */
function storedId(r: GraphObjectResult): string {
  if (r.status === 'stored') return r.id;
  throw new MemwardenError('WRITE_HELD', 'the graph object was held for review', {
    details: { reviewId: r.reviewId, reasons: [...r.reasons] },
  });
}

/** A name of four words or more reads as a sentence: the instruction screen reads it as one. */
const sentenceLike = (name: string): boolean => name.trim().split(/\s+/u).length >= 4;

/**
 * The text of a graph object, as screening reads it (names, types, observations). The sentences
 * come first and names and types last, bracketed as labels: the instruction screen (issue 22)
 * weighs how a text opens, and a bare label in front ("note 0", "Call log") reads as an
 * imperative and held tool results that `add_memory` stores. A sentence-like name is read as a
 * sentence too; the marker screens read every part wherever it stands.
 */
export function screenTextOf(o: GraphObject): string {
  switch (o.t) {
    case 'entity':
      return [
        ...(sentenceLike(o.name) ? [o.name] : []),
        ...o.observations,
        `[${o.entityType}] ${o.name}`,
      ].join('\n');
    case 'observation':
      return `${o.text}\n[${o.entity}]`;
    case 'relation':
      return `${o.from} ${o.relationType} ${o.to}`;
    case 'extraction':
      return [...o.entities, ...o.triples.map((t) => t.join(' '))].join('\n');
    case 'synonym':
      return `${o.a}\n${o.b}`;
    case 'delete_entity':
      return `[${o.name}]`;
    case 'delete_observation':
      return `${o.text}\n[${o.entity}]`;
    case 'delete_relation':
      return `${o.from} ${o.relationType} ${o.to}`;
  }
}
