/**
 * @module memory/graph/knowledge-graph
 * The knowledge-graph operations of the reference MCP memory server
 * (`@modelcontextprotocol/server-memory`): create_entities, create_relations, add_observations,
 * delete_entities, delete_observations, delete_relations, read_graph, search_nodes, open_nodes —
 * same names, input shapes and semantics, so an agent written against the reference works
 * unchanged. Every write is a signed, logged `graph` entry of the calling principal and channel
 * (results carry that provenance; the MCP edge moves it to `_meta`), and read_graph may be paged
 * (`cursor`, `limit`) by a client that asks; without them it returns the whole graph.
 *
 * Inputs are validated here (attacker-facing): a bad shape is `INPUT_INVALID`, an observation on
 * a missing entity is `STORAGE_NOT_FOUND` (the reference throws there too); names and
 * observations are bounded by the write path's limits (code points and bytes, no NUL or lone
 * surrogate) and one call writes at most `graphObjectsPerCall` objects (`INPUT_TOO_LARGE`),
 * all checked before anything is written. Writes go through the graph's writer — the write
 * path: screened, held for review when flagged (`held` in the call's result), expiring with
 * their tier, under the quota.
 */
import { MemwardenError } from '../../core/errors.js';
import { DEFAULT_WRITE_LIMITS, type WriteLimits } from '../config.js';
import { checkString } from '../write/limits.js';
import type {
  EntityState,
  GraphMemory,
  GraphObjectResult,
  Provenance,
  RelationState,
  WriteContext,
} from './graph.js';
import type { GraphObject } from './objects.js';

export interface KgDeleteEntitiesResult {
  readonly deleted: readonly string[];
  readonly notFound: readonly string[];
  readonly requested: number;
}
export interface KgDeleteObservationsResult {
  readonly deletedCount: number;
  readonly requested: number;
  readonly missingEntities: readonly string[];
}
export interface KgDeleteRelationsResult {
  readonly deletedCount: number;
  readonly requested: number;
}

export interface KgEntity {
  readonly name: string;
  readonly entityType: string;
  readonly observations: readonly string[];
  readonly provenance?: Provenance;
}
export interface KgRelation {
  readonly from: string;
  readonly to: string;
  readonly relationType: string;
  readonly provenance?: Provenance;
}
export interface KgGraph {
  readonly entities: readonly KgEntity[];
  readonly relations: readonly KgRelation[];
  /** read_graph only: pass back to get the next page; absent on the last page. */
  readonly nextCursor?: string;
}

const str = { type: 'string' } as const;
const strs = { type: 'array', items: str } as const;
const relation = {
  type: 'object',
  properties: { from: str, to: str, relationType: str },
  required: ['from', 'to', 'relationType'],
  additionalProperties: false,
} as const;

/** JSON-Schema input schemas, by tool name (the reference server's, plus read_graph paging). */
export const KG_TOOL_SCHEMAS = {
  create_entities: {
    type: 'object',
    properties: {
      entities: {
        type: 'array',
        items: {
          type: 'object',
          properties: { name: str, entityType: str, observations: strs },
          required: ['name', 'entityType', 'observations'],
          additionalProperties: false,
        },
      },
    },
    required: ['entities'],
  },
  create_relations: {
    type: 'object',
    properties: { relations: { type: 'array', items: relation } },
    required: ['relations'],
  },
  add_observations: {
    type: 'object',
    properties: {
      observations: {
        type: 'array',
        items: {
          type: 'object',
          properties: { entityName: str, contents: strs },
          required: ['entityName', 'contents'],
          additionalProperties: false,
        },
      },
    },
    required: ['observations'],
  },
  delete_entities: { type: 'object', properties: { entityNames: strs }, required: ['entityNames'] },
  delete_observations: {
    type: 'object',
    properties: {
      deletions: {
        type: 'array',
        items: {
          type: 'object',
          properties: { entityName: str, observations: strs },
          required: ['entityName', 'observations'],
          additionalProperties: false,
        },
      },
    },
    required: ['deletions'],
  },
  delete_relations: {
    type: 'object',
    properties: { relations: { type: 'array', items: relation } },
    required: ['relations'],
  },
  read_graph: {
    type: 'object',
    properties: { cursor: str, limit: { type: 'integer', minimum: 1, maximum: 1000 } },
  },
  search_nodes: { type: 'object', properties: { query: str }, required: ['query'] },
  open_nodes: { type: 'object', properties: { names: strs }, required: ['names'] },
} as const;

export type KgToolName = keyof typeof KG_TOOL_SCHEMAS;
export const KG_TOOL_NAMES = Object.keys(KG_TOOL_SCHEMAS) as KgToolName[];

function bad(msg: string): never {
  throw new MemwardenError('INPUT_INVALID', msg);
}
function obj(x: unknown, what: string): Record<string, unknown> {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) bad(`${what} must be an object`);
  return x as Record<string, unknown>;
}
function arr(x: unknown, what: string): unknown[] {
  if (!Array.isArray(x)) bad(`${what} must be an array`);
  if (x.length > 1000) bad(`${what} has too many items`);
  return x;
}
/** Validators bound to the write path's limits (names, observation texts, relations). */
function validators(l: WriteLimits) {
  /** A name (entity, type, relation type): bounded like every caller string of a write. */
  const s = (x: unknown, what: string): string => checkString(x, 'name', l, what);
  const ss = (x: unknown, what: string): string[] =>
    arr(x, what).map((v, i) => s(v, `${what}[${i}]`));
  /** Observation texts. */
  const obs = (x: unknown, what: string): string[] =>
    arr(x, what).map((v, i) => checkString(v, 'observation', l, `${what}[${i}]`));
  const rel = (x: unknown, what: string): { from: string; to: string; relationType: string } => {
    const o = obj(x, what);
    return {
      from: s(o.from, `${what}.from`),
      to: s(o.to, `${what}.to`),
      relationType: s(o.relationType, `${what}.relationType`),
    };
  };
  return { s, ss, obs, rel };
}

/** A graph write held for review (what the call reports besides its reference-shaped result). */
export interface HeldGraphObject {
  /** What the object was: `entity`, `observation`, `relation` or a deletion. */
  readonly object: GraphObject['t'];
  /** The entity name / relation key it was about. */
  readonly subject: string;
  readonly reviewId: string;
  readonly reasons: readonly string[];
}

/** One tool call's outcome: the reference server's result and the writes held for review. */
export interface KgCallResult {
  readonly result: unknown;
  readonly held: readonly HeldGraphObject[];
}

const toEntity = (e: EntityState): KgEntity => ({
  name: e.name,
  entityType: e.entityType,
  observations: e.observations.map((o) => o.text),
  provenance: e.provenance,
});
const toRelation = (r: RelationState): KgRelation => ({
  from: r.from,
  to: r.to,
  relationType: r.relationType,
  provenance: r.provenance,
});

/** The nine tools over a GraphMemory, each call on behalf of one principal and channel. */
export class KnowledgeGraphTools {
  private readonly v: ReturnType<typeof validators>;

  constructor(
    private readonly graph: GraphMemory,
    private readonly writeLimits: WriteLimits = DEFAULT_WRITE_LIMITS,
  ) {
    this.v = validators(writeLimits);
  }

  /** Dispatch by tool name (what an MCP server's CallTool handler calls). */
  async call(name: string, args: unknown, ctx: WriteContext): Promise<KgCallResult> {
    const held: HeldGraphObject[] = [];
    const result = await this.dispatch(name, args, ctx, held);
    return { result, held };
  }

  private dispatch(
    name: string,
    args: unknown,
    ctx: WriteContext,
    held: HeldGraphObject[],
  ): Promise<unknown> | unknown {
    switch (name) {
      case 'create_entities':
        return this.create_entities(args, ctx, held);
      case 'create_relations':
        return this.create_relations(args, ctx, held);
      case 'add_observations':
        return this.add_observations(args, ctx, held);
      case 'delete_entities':
        return this.delete_entities(args, ctx, held);
      case 'delete_observations':
        return this.delete_observations(args, ctx, held);
      case 'delete_relations':
        return this.delete_relations(args, ctx, held);
      case 'read_graph':
        return this.read_graph(args ?? {});
      case 'search_nodes':
        return this.search_nodes(args);
      case 'open_nodes':
        return this.open_nodes(args);
      default:
        return bad(`unknown tool ${name}`);
    }
  }

  /** At most `graphObjectsPerCall` objects per call, checked before anything is written. */
  private bound(n: number, what: string): void {
    const max = this.writeLimits.graphObjectsPerCall;
    if (n > max)
      throw new MemwardenError(
        'INPUT_TOO_LARGE',
        `${what}: at most ${max} graph objects per call`,
        {
          details: { field: what, limit: max, unit: 'objects' },
        },
      );
  }

  /** Write a call's objects (one batch through the write path); held ones are reported. */
  private async write(
    items: readonly { o: GraphObject; parents?: readonly string[]; subject: string }[],
    ctx: WriteContext,
    held: HeldGraphObject[],
  ): Promise<(string | undefined)[]> {
    if (items.length === 0) return [];
    const rs: GraphObjectResult[] = await this.graph.writeObjects(items, ctx);
    return rs.map((r, i) => {
      if (r.status === 'stored') return r.id;
      const it = items[i]!;
      held.push({ object: it.o.t, subject: it.subject, reviewId: r.reviewId, reasons: r.reasons });
      return undefined;
    });
  }

  /** Creates entities whose names are new; existing names are ignored (reference semantics). */
  async create_entities(
    args: unknown,
    ctx: WriteContext,
    held: HeldGraphObject[] = [],
  ): Promise<KgEntity[]> {
    const items = arr(obj(args, 'arguments').entities, 'entities').map((x, i) => {
      const o = obj(x, `entities[${i}]`);
      return {
        name: this.v.s(o.name, `entities[${i}].name`),
        entityType: this.v.s(o.entityType, `entities[${i}].entityType`),
        observations: this.v.obs(o.observations ?? [], `entities[${i}].observations`),
      };
    });
    this.bound(items.length, 'entities');
    const fresh: typeof items = [];
    for (const e of items) {
      if (this.graph.entity(e.name) !== undefined || fresh.some((x) => x.name === e.name)) continue;
      fresh.push(e);
    }
    const ids = await this.write(
      fresh.map((e) => ({ o: { t: 'entity', ...e } as GraphObject, subject: e.name })),
      ctx,
      held,
    );
    const out: KgEntity[] = [];
    fresh.forEach((e, i) => {
      if (ids[i] === undefined) return;
      const st = this.graph.entity(e.name);
      if (st !== undefined) out.push(toEntity(st));
    });
    return out;
  }

  /** Creates relations not already present (duplicates skipped). */
  async create_relations(
    args: unknown,
    ctx: WriteContext,
    held: HeldGraphObject[] = [],
  ): Promise<KgRelation[]> {
    const items = arr(obj(args, 'arguments').relations, 'relations').map((x, i) =>
      this.v.rel(x, `relations[${i}]`),
    );
    this.bound(items.length, 'relations');
    // The reference refuses a relation whose endpoint does not exist, before writing anything
    // (it no longer creates dangling endpoints).
    for (const r of items)
      for (const name of [r.from, r.to])
        if (this.graph.entity(name) === undefined)
          throw new MemwardenError('STORAGE_NOT_FOUND', `Entity with name ${name} not found`, {
            details: { entityName: name },
          });
    const have = new Set(
      this.graph.allRelations().map((r) => `${r.from}\u0000${r.to}\u0000${r.relationType}`),
    );
    const fresh: typeof items = [];
    for (const r of items) {
      const k = `${r.from}\u0000${r.to}\u0000${r.relationType}`;
      if (have.has(k)) continue;
      have.add(k);
      fresh.push(r);
    }
    const ids = await this.write(
      fresh.map((r) => ({
        o: { t: 'relation', ...r } as GraphObject,
        subject: `${r.from} ${r.relationType} ${r.to}`,
      })),
      ctx,
      held,
    );
    const out: KgRelation[] = [];
    fresh.forEach((r, i) => {
      const id = ids[i];
      if (id === undefined) return;
      const p = this.graph.provenanceOf(id);
      out.push({ ...r, ...(p === undefined ? {} : { provenance: p }) });
    });
    return out;
  }

  async add_observations(
    args: unknown,
    ctx: WriteContext,
    held: HeldGraphObject[] = [],
  ): Promise<{ entityName: string; addedObservations: string[] }[]> {
    const items = arr(obj(args, 'arguments').observations, 'observations').map((x, i) => {
      const o = obj(x, `observations[${i}]`);
      return {
        entityName: this.v.s(o.entityName, `observations[${i}].entityName`),
        contents: this.v.obs(o.contents, `observations[${i}].contents`),
      };
    });
    this.bound(
      items.reduce((n, it) => n + it.contents.length, 0),
      'observations',
    );
    for (const it of items)
      if (this.graph.entity(it.entityName) === undefined)
        throw new MemwardenError(
          'STORAGE_NOT_FOUND',
          `Entity with name ${it.entityName} not found`,
          { details: { entityName: it.entityName } },
        );
    const plan: { entityName: string; texts: string[] }[] = [];
    const writes: { o: GraphObject; parents: string[]; subject: string }[] = [];
    for (const it of items) {
      const e = this.graph.entity(it.entityName)!;
      const texts: string[] = [];
      for (const text of it.contents) {
        if (e.observations.some((o) => o.text === text) || texts.includes(text)) continue;
        texts.push(text);
        writes.push({
          o: { t: 'observation', entity: it.entityName, text },
          parents: [e.provenance.entryId],
          subject: it.entityName,
        });
      }
      plan.push({ entityName: it.entityName, texts });
    }
    const ids = await this.write(writes, ctx, held);
    let k = 0;
    return plan.map((p) => ({
      entityName: p.entityName,
      addedObservations: p.texts.filter(() => ids[k++] !== undefined),
    }));
  }

  /**
   * Deletes the named entities and their relations; reports which names were deleted and which
   * were not (absent, held for review, or above the caller's authority — never claimed done).
   */
  async delete_entities(
    args: unknown,
    ctx: WriteContext,
    held: HeldGraphObject[] = [],
  ): Promise<KgDeleteEntitiesResult> {
    const names = this.v.ss(obj(args, 'arguments').entityNames, 'entityNames');
    this.bound(names.length, 'entityNames');
    const unique = names.filter((name, i) => names.indexOf(name) === i);
    const present = unique.filter((name) => this.graph.entity(name) !== undefined);
    await this.write(
      present.map((name) => ({ o: { t: 'delete_entity', name } as GraphObject, subject: name })),
      ctx,
      held,
    );
    const deleted = present.filter((n) => this.graph.entity(n) === undefined);
    return {
      deleted,
      notFound: unique.filter((n) => !deleted.includes(n)),
      requested: names.length,
    };
  }

  async delete_observations(
    args: unknown,
    ctx: WriteContext,
    held: HeldGraphObject[] = [],
  ): Promise<KgDeleteObservationsResult> {
    const dels = arr(obj(args, 'arguments').deletions, 'deletions').map((x, i) => {
      const o = obj(x, `deletions[${i}]`);
      return {
        entity: this.v.s(o.entityName, `deletions[${i}].entityName`),
        texts: this.v.obs(o.observations, `deletions[${i}].observations`),
      };
    });
    this.bound(
      dels.reduce((n, d) => n + d.texts.length, 0),
      'deletions',
    );
    const has = (entity: string, text: string): boolean =>
      this.graph.entity(entity)?.observations.some((ob) => ob.text === text) === true;
    const writes: { o: GraphObject; subject: string }[] = [];
    for (const d of dels)
      for (const text of d.texts)
        if (has(d.entity, text))
          writes.push({
            o: { t: 'delete_observation', entity: d.entity, text },
            subject: d.entity,
          });
    await this.write(writes, ctx, held);
    // Counted from the graph after the writes: only observations that were there and are gone.
    const deletedCount = writes.filter((w) => {
      const o = w.o as { entity: string; text: string };
      return !has(o.entity, o.text);
    }).length;
    const missingEntities = dels
      .map((d) => d.entity)
      .filter((e, i, a) => this.graph.entity(e) === undefined && a.indexOf(e) === i);
    return {
      deletedCount,
      requested: dels.reduce((n, d) => n + d.texts.length, 0),
      missingEntities,
    };
  }

  async delete_relations(
    args: unknown,
    ctx: WriteContext,
    held: HeldGraphObject[] = [],
  ): Promise<KgDeleteRelationsResult> {
    const items = arr(obj(args, 'arguments').relations, 'relations').map((x, i) =>
      this.v.rel(x, `relations[${i}]`),
    );
    this.bound(items.length, 'relations');
    const present = (r: { from: string; to: string; relationType: string }): boolean =>
      this.graph
        .allRelations()
        .some((x) => x.from === r.from && x.to === r.to && x.relationType === r.relationType);
    const there = items.filter(present);
    await this.write(
      there.map((r) => ({
        o: { t: 'delete_relation', ...r } as GraphObject,
        subject: `${r.from} ${r.relationType} ${r.to}`,
      })),
      ctx,
      held,
    );
    // Counted from the graph after the writes: only relations that matched and are gone.
    return { deletedCount: there.filter((r) => !present(r)).length, requested: items.length };
  }
  /**
   * The whole graph (what the reference returns), or — when the caller pages with `limit` or
   * `cursor` — a page at a time: entities in name order, each relation on its `from` entity's page.
   */
  read_graph(args: unknown): KgGraph {
    const o = obj(args, 'arguments');
    if (o.limit === undefined && o.cursor === undefined)
      return {
        entities: this.graph.allEntities().map(toEntity),
        relations: this.graph.allRelations().map(toRelation),
      };
    const limit = o.limit === undefined ? 100 : Number(o.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      bad('limit must be an integer in 1..1000');
    const after = o.cursor === undefined ? undefined : this.v.s(o.cursor, 'cursor');
    const all = this.graph
      .allEntities()
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const start = after === undefined ? 0 : all.findIndex((e) => e.name > after);
    const page = start < 0 ? [] : all.slice(start, start + limit);
    const names = new Set(page.map((e) => e.name));
    // Each relation is returned once: on the page of its `from` entity.
    const relations = this.graph
      .allRelations()
      .filter((r) => names.has(r.from))
      .map(toRelation);
    const last = page[page.length - 1];
    const more = start >= 0 && start + limit < all.length;
    return {
      entities: page.map(toEntity),
      relations,
      ...(more && last !== undefined ? { nextCursor: last.name } : {}),
    };
  }

  /** Case-insensitive match on names, types and observation text; relations touching a hit. */
  search_nodes(args: unknown): KgGraph {
    const q = this.v.s(obj(args, 'arguments').query, 'query').toLowerCase();
    const hits = this.graph
      .allEntities()
      .filter(
        (e) =>
          e.name.toLowerCase().includes(q) ||
          e.entityType.toLowerCase().includes(q) ||
          e.observations.some((o) => o.text.toLowerCase().includes(q)),
      );
    return this.subgraph(hits);
  }

  /** The named entities (missing names skipped) and every relation touching one of them. */
  open_nodes(args: unknown): KgGraph {
    const names = this.v.ss(obj(args, 'arguments').names, 'names');
    return this.subgraph(
      names.map((n) => this.graph.entity(n)).filter((e): e is EntityState => e !== undefined),
    );
  }

  private subgraph(es: readonly EntityState[]): KgGraph {
    const names = new Set(es.map((e) => e.name));
    return {
      entities: es.map(toEntity),
      relations: this.graph
        .allRelations()
        // Relations with at least one endpoint in the result, as the reference returns them
        // (since its fix of issue #3137), so a node's connections are discoverable.
        .filter((r) => names.has(r.from) || names.has(r.to))
        .map(toRelation),
    };
  }
}
