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
 * a missing entity is `STORAGE_NOT_FOUND` (the reference throws there too).
 */
import { MemwardenError } from '../../core/errors.js';
import type { EntityState, GraphMemory, Provenance, RelationState, WriteContext } from './graph.js';

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

export interface KgDeleteEntitiesResult {
  readonly deleted: readonly string[];
  readonly notFound: readonly string[];
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
function s(x: unknown, what: string): string {
  if (typeof x !== 'string' || x.length === 0 || x.length > 4096)
    bad(`${what} must be a non-empty string`);
  return x;
}
function ss(x: unknown, what: string): string[] {
  return arr(x, what).map((v, i) => s(v, `${what}[${i}]`));
}
function rel(x: unknown, what: string): { from: string; to: string; relationType: string } {
  const o = obj(x, what);
  return {
    from: s(o.from, `${what}.from`),
    to: s(o.to, `${what}.to`),
    relationType: s(o.relationType, `${what}.relationType`),
  };
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
  constructor(private readonly graph: GraphMemory) {}

  /** Dispatch by tool name (what an MCP server's CallTool handler calls). */
  async call(name: string, args: unknown, ctx: WriteContext): Promise<unknown> {
    switch (name) {
      case 'create_entities':
        return this.create_entities(args, ctx);
      case 'create_relations':
        return this.create_relations(args, ctx);
      case 'add_observations':
        return this.add_observations(args, ctx);
      case 'delete_entities':
        return this.delete_entities(args, ctx);
      case 'delete_observations':
        return this.delete_observations(args, ctx);
      case 'delete_relations':
        return this.delete_relations(args, ctx);
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

  /** Creates entities whose names are new; existing names are ignored (reference semantics). */
  async create_entities(args: unknown, ctx: WriteContext): Promise<KgEntity[]> {
    const items = arr(obj(args, 'arguments').entities, 'entities').map((x, i) => {
      const o = obj(x, `entities[${i}]`);
      return {
        name: s(o.name, 'name'),
        entityType: s(o.entityType, 'entityType'),
        observations: ss(o.observations ?? [], 'observations'),
      };
    });
    const out: KgEntity[] = [];
    for (const e of items) {
      if (this.graph.entity(e.name) !== undefined || out.some((x) => x.name === e.name)) continue;
      await this.graph.writeObject({ t: 'entity', ...e }, ctx);
      const st = this.graph.entity(e.name);
      if (st !== undefined) out.push(toEntity(st));
    }
    return out;
  }

  /** Creates relations not already present (duplicates skipped). */
  async create_relations(args: unknown, ctx: WriteContext): Promise<KgRelation[]> {
    const items = arr(obj(args, 'arguments').relations, 'relations').map((x, i) =>
      rel(x, `relations[${i}]`),
    );
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
    const out: KgRelation[] = [];
    for (const r of items) {
      const k = `${r.from}\u0000${r.to}\u0000${r.relationType}`;
      if (have.has(k)) continue;
      have.add(k);
      const id = await this.graph.writeObject({ t: 'relation', ...r }, ctx);
      out.push({
        ...r,
        provenance: {
          entryId: id,
          writer: ctx.principal,
          tier: ctx.tier,
          authority: this.graph.authorityOfEntry(id),
        },
      });
    }
    return out;
  }

  async add_observations(
    args: unknown,
    ctx: WriteContext,
  ): Promise<{ entityName: string; addedObservations: string[] }[]> {
    const items = arr(obj(args, 'arguments').observations, 'observations').map((x, i) => {
      const o = obj(x, `observations[${i}]`);
      return { entityName: s(o.entityName, 'entityName'), contents: ss(o.contents, 'contents') };
    });
    for (const it of items)
      if (this.graph.entity(it.entityName) === undefined)
        throw new MemwardenError(
          'STORAGE_NOT_FOUND',
          `Entity with name ${it.entityName} not found`,
          { details: { entityName: it.entityName } },
        );
    const out: { entityName: string; addedObservations: string[] }[] = [];
    for (const it of items) {
      const e = this.graph.entity(it.entityName)!;
      const added: string[] = [];
      for (const text of it.contents) {
        if (e.observations.some((o) => o.text === text) || added.includes(text)) continue;
        await this.graph.writeObject({ t: 'observation', entity: it.entityName, text }, ctx, [
          e.provenance.entryId,
        ]);
        added.push(text);
      }
      out.push({ entityName: it.entityName, addedObservations: added });
    }
    return out;
  }

  /** Deletes the named entities and their relations; reports which names matched. */
  async delete_entities(args: unknown, ctx: WriteContext): Promise<KgDeleteEntitiesResult> {
    const names = ss(obj(args, 'arguments').entityNames, 'entityNames');
    const deleted: string[] = [];
    const notFound: string[] = [];
    for (const name of names) {
      if (this.graph.entity(name) === undefined) {
        if (!deleted.includes(name)) notFound.push(name);
        continue;
      }
      await this.graph.writeObject({ t: 'delete_entity', name }, ctx);
      // A deletion below the entity's authority is a no-op in the fold: not reported as done.
      (this.graph.entity(name) === undefined ? deleted : notFound).push(name);
    }
    return { deleted, notFound };
  }

  /** Deletes observations; counts only those that were present and are gone. */
  async delete_observations(args: unknown, ctx: WriteContext): Promise<KgDeleteObservationsResult> {
    let deletedCount = 0;
    let requested = 0;
    const missingEntities: string[] = [];
    for (const [i, x] of arr(obj(args, 'arguments').deletions, 'deletions').entries()) {
      const o = obj(x, `deletions[${i}]`);
      const entity = s(o.entityName, 'entityName');
      const texts = ss(o.observations, 'observations');
      requested += texts.length;
      if (this.graph.entity(entity) === undefined) {
        missingEntities.push(entity);
        continue;
      }
      for (const text of texts) {
        const has = (): boolean =>
          this.graph.entity(entity)?.observations.some((ob) => ob.text === text) === true;
        if (!has()) continue;
        await this.graph.writeObject({ t: 'delete_observation', entity, text }, ctx);
        if (!has()) deletedCount++;
      }
    }
    return { deletedCount, requested, missingEntities };
  }

  /** Deletes relations; counts only those that matched and are gone. */
  async delete_relations(args: unknown, ctx: WriteContext): Promise<KgDeleteRelationsResult> {
    const items = arr(obj(args, 'arguments').relations, 'relations').map((x, i) =>
      rel(x, `relations[${i}]`),
    );
    const present = (r: { from: string; to: string; relationType: string }): boolean =>
      this.graph
        .allRelations()
        .some((x) => x.from === r.from && x.to === r.to && x.relationType === r.relationType);
    let deletedCount = 0;
    for (const r of items) {
      if (!present(r)) continue;
      await this.graph.writeObject({ t: 'delete_relation', ...r }, ctx);
      if (!present(r)) deletedCount++;
    }
    return { deletedCount, requested: items.length };
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
    const after = o.cursor === undefined ? undefined : s(o.cursor, 'cursor');
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
    const q = s(obj(args, 'arguments').query, 'query').toLowerCase();
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
    const names = ss(obj(args, 'arguments').names, 'names');
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
