/**
 * @module integrations/mem0/memory
 * `Memory` with the class surface of Mem0's open-source TypeScript `Memory` (`mem0ai/oss`), over
 * memwarden: a Mem0 user changes one import.
 *
 *     import { Memory } from 'memwarden/mem0';
 *     const memory = new Memory();
 *     await memory.add('I prefer window seats', { userId: 'alice' });
 *     const { results } = await memory.search('seat preference', { filters: { user_id: 'alice' } });
 *
 * Scoping: a Mem0 `userId` is a memwarden principal (row-level-security isolated); `agentId`
 * and `runId` are signed scopes within it (an `agentId` or `runId` alone names a principal of
 * its own). Which principal a `userId` is comes from `resolvePrincipal` — your authenticated
 * mapping — or, by default, a `user` principal of that name, created on first use. Everything
 * memwarden does on a write still happens: screening (a flagged write is held for review and
 * listed in `held`, never stored silently), signing, the log, consolidation (ADD / UPDATE /
 * NOOP, Mem0's NONE). docs/compatibility.md lists every difference.
 */
import { createHash } from 'node:crypto';
import type { AddResult, ChatTurn, HistoryEvent, MemoryRecord } from '../../memory/api.js';
import { Memory as Memwarden, type OpenOptions } from '../../open.js';

/** Mem0's entity ids. */
export interface Mem0Entity {
  readonly userId?: string;
  readonly agentId?: string;
  readonly runId?: string;
}

/** A chat message, as Mem0 takes them. */
export interface Mem0Message {
  readonly role: string;
  readonly content: string;
}

/** Mem0's filters: entity ids (`user_id`, `agent_id`, `run_id`) and metadata conditions. */
export type Mem0Filters = Readonly<Record<string, unknown>>;

export interface Mem0AddOptions extends Mem0Entity {
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly filters?: Mem0Filters;
  /** false: store the messages as they are (memwarden stores turns as they are unless an extraction model is configured). */
  readonly infer?: boolean;
}

export interface Mem0SearchOptions extends Mem0Entity {
  /** Results to return (Mem0's default: 20). `limit` is the older spelling. */
  readonly topK?: number;
  readonly limit?: number;
  readonly filters?: Mem0Filters;
  readonly threshold?: number;
}

export interface Mem0GetAllOptions extends Mem0Entity {
  readonly topK?: number;
  readonly limit?: number;
  readonly filters?: Mem0Filters;
}

/** One memory as Mem0 returns it. */
export interface Mem0MemoryItem {
  readonly id: string;
  readonly memory: string;
  readonly hash: string;
  readonly createdAt: string;
  readonly updatedAt?: string;
  readonly score?: number;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly userId?: string;
  readonly agentId?: string;
  readonly runId?: string;
  /** add results: what happened (Mem0's events; memwarden's NOOP is Mem0's NONE). */
  readonly event?: 'ADD' | 'UPDATE' | 'DELETE' | 'NONE';
}

export interface Mem0SearchResult {
  readonly results: Mem0MemoryItem[];
  /** memwarden: writes held for review by its screens (never stored silently). */
  readonly held?: { readonly reviewId: string; readonly reasons: readonly string[] }[];
}

/** One history row, as Mem0's history store keeps them. */
export interface Mem0HistoryEntry {
  readonly id: string;
  readonly memoryId: string;
  readonly previousValue: string | null;
  readonly newValue: string | null;
  readonly action: 'ADD' | 'UPDATE' | 'DELETE';
  readonly createdAt: string;
  readonly updatedAt: string | null;
  readonly isDeleted: number;
}

/** The memwarden Memory this class drives (what `Memory.open()` returns). */
export type MemwardenMemory = Memwarden;

/**
 * Maps Mem0's entity ids to the principal that owns the memory: your authenticated mapping
 * (e.g. the session's user). Undefined: refused (`Mem0ScopeError`), never run as someone else.
 */
export type Mem0PrincipalResolver = (
  entity: Mem0Entity,
) => string | undefined | Promise<string | undefined>;

export interface Mem0Config {
  /** An open memwarden Memory; absent: `Memory.open(open)` on first use. */
  readonly memory?: MemwardenMemory;
  /** Options for `Memory.open` when no `memory` is given. */
  readonly open?: OpenOptions;
  /** Absent: a `user` principal named after each userId (an `agent` one per lone agentId, …). */
  readonly resolvePrincipal?: Mem0PrincipalResolver;
  // Mem0's own configuration keys are accepted and not used: memwarden brings its own
  // embedder, store and history (docs/compatibility.md).
  readonly version?: string;
  readonly embedder?: unknown;
  readonly vectorStore?: unknown;
  readonly llm?: unknown;
  readonly historyStore?: unknown;
  readonly historyDbPath?: string;
  readonly disableHistory?: boolean;
  readonly customPrompt?: string;
  readonly enableGraph?: boolean;
  readonly graphStore?: unknown;
}

/** A call named no entity (Mem0 refuses these too) or one the mapping does not resolve. */
export class Mem0ScopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Mem0ScopeError';
  }
}

const DEFAULT_TOP_K = 20;
const DEFAULT_GET_ALL = 100;

export class Memory {
  readonly #config: Mem0Config;
  #ready: Promise<MemwardenMemory> | undefined;
  #owned = false;
  /** Principal per entity key, and per memory id seen (get/update/delete take only an id). */
  readonly #principals = new Map<string, string>();
  readonly #owners = new Map<string, string>();

  constructor(config: Mem0Config = {}) {
    this.#config = config;
  }

  /** Mem0's `Memory.fromConfig`. */
  static fromConfig(config: Mem0Config = {}): Memory {
    return new Memory(config);
  }

  private memory(): Promise<MemwardenMemory> {
    if (this.#ready === undefined) {
      if (this.#config.memory !== undefined) this.#ready = Promise.resolve(this.#config.memory);
      else {
        this.#owned = true;
        this.#ready = Memwarden.open(this.#config.open ?? {});
      }
    }
    return this.#ready;
  }

  /** The principal for these entity ids (created by the default mapping when new). */
  private async principalOf(e: Mem0Entity): Promise<string> {
    const key =
      e.userId !== undefined
        ? `user:${e.userId}`
        : e.agentId !== undefined
          ? `agent:${e.agentId}`
          : e.runId !== undefined
            ? `run:${e.runId}`
            : undefined;
    if (key === undefined)
      throw new Mem0ScopeError('filters must contain at least one of: user_id, agent_id, run_id');
    const known = this.#principals.get(key);
    if (known !== undefined) return known;
    const m = await this.memory();
    let id: string;
    if (this.#config.resolvePrincipal !== undefined) {
      const r = await this.#config.resolvePrincipal(e);
      if (typeof r !== 'string' || r.length === 0)
        throw new Mem0ScopeError(`no principal for ${key}`);
      id = r;
    } else {
      const kind = key.startsWith('user:') ? 'user' : 'agent';
      const name = key.startsWith('user:') ? e.userId! : key;
      const found = (await m.listPrincipals()).find((p) => p.kind === kind && p.name === name);
      id = found?.id ?? (await m.createPrincipal(kind, name)).id;
    }
    this.#principals.set(key, id);
    return id;
  }

  /** Entity ids from the top level and from `filters` (Mem0 2.x puts them in filters). */
  private static split(o: Mem0Entity & { filters?: Mem0Filters }): {
    entity: Mem0Entity;
    filters: Record<string, unknown> | undefined;
  } {
    const f: Record<string, unknown> = { ...(o.filters ?? {}) };
    const pick = (
      top: string | undefined,
      k: 'user_id' | 'agent_id' | 'run_id',
    ): string | undefined => {
      const v = f[k];
      delete f[k];
      return top ?? (typeof v === 'string' ? v : undefined);
    };
    const entity: Mem0Entity = {
      ...opt('userId', pick(o.userId, 'user_id')),
      ...opt('agentId', pick(o.agentId, 'agent_id')),
      ...opt('runId', pick(o.runId, 'run_id')),
    };
    return { entity, filters: Object.keys(f).length === 0 ? undefined : f };
  }

  /** Scopes within the principal (an agentId or runId that does not name the principal itself). */
  private static scopes(e: Mem0Entity): { agentId?: string; runId?: string } {
    const named = e.userId !== undefined ? 'user' : e.agentId !== undefined ? 'agent' : 'run';
    return {
      ...(e.agentId !== undefined && named !== 'agent' ? { agentId: e.agentId } : {}),
      ...(e.runId !== undefined && named !== 'run' ? { runId: e.runId } : {}),
    };
  }

  private async item(
    m: MemwardenMemory,
    principal: string,
    r: MemoryRecord,
    e: Mem0Entity,
    extra: { score?: number; event?: Mem0MemoryItem['event'] } = {},
  ): Promise<Mem0MemoryItem> {
    this.#owners.set(r.id, principal);
    let createdAt = r.createdAt;
    let updatedAt: string | undefined;
    if (r.supersedes !== undefined) {
      // Mem0 keeps a memory's createdAt across updates: the first version's time.
      const h = await m.history(r.id, { principal }).catch(() => [] as HistoryEvent[]);
      const first = h.find((x) => x.action === 'add');
      if (first !== undefined) createdAt = first.at;
      updatedAt = r.createdAt;
    }
    return {
      id: r.id,
      memory: r.content,
      hash: createHash('md5').update(r.content).digest('hex'),
      createdAt,
      ...opt('updatedAt', updatedAt),
      ...opt('metadata', r.metadata as Record<string, unknown> | undefined),
      ...opt('userId', e.userId),
      ...opt('agentId', r.agentId ?? e.agentId),
      ...opt('runId', r.runId ?? e.runId),
      ...opt('score', extra.score),
      ...opt('event', extra.event),
    };
  }

  /** Mem0's `add`: a string, or chat messages. */
  async add(
    messages: string | readonly Mem0Message[],
    opts: Mem0AddOptions = {},
  ): Promise<Mem0SearchResult> {
    const { entity } = Memory.split(opts);
    const principal = await this.principalOf(entity);
    const m = await this.memory();
    const base = {
      principal,
      ...Memory.scopes(entity),
      ...opt('metadata', opts.metadata),
    };
    const results: Mem0MemoryItem[] = [];
    const held: { reviewId: string; reasons: readonly string[] }[] = [];
    const take = async (r: AddResult): Promise<void> => {
      if (r.status !== 'stored') {
        held.push({ reviewId: r.reviewId, reasons: r.reasons });
        return;
      }
      const event = r.event === 'NOOP' ? 'NONE' : r.event;
      results.push(await this.item(m, principal, r.memory, entity, { event }));
      for (const x of r.extra ?? [])
        results.push(await this.item(m, principal, x, entity, { event: 'ADD' }));
    };
    if (typeof messages === 'string') await take(await m.add(messages, base));
    else {
      const turns: ChatTurn[] = messages
        .filter((t) => typeof t.content === 'string' && t.content.length > 0)
        .map((t) => ({ role: toRole(t.role), content: t.content }));
      const r = await m.add(turns, { ...base, ...opt('infer', opts.infer) });
      for (const x of r.results)
        results.push(
          await this.item(m, principal, x.memory, entity, {
            event: x.event === 'NOOP' ? 'NONE' : x.event,
          }),
        );
      for (const h of r.held) held.push({ reviewId: h.reviewId, reasons: h.reasons });
    }
    return held.length === 0 ? { results } : { results, held };
  }

  /** Mem0's `get`: the memory, or null (also when it belongs to no principal this instance maps). */
  async get(memoryId: string): Promise<Mem0MemoryItem | null> {
    const m = await this.memory();
    for (const principal of await this.candidates(memoryId)) {
      const r = await m.get(memoryId, { principal }).catch(() => undefined);
      if (r !== undefined) return this.item(m, principal, r, this.entityOf(principal));
    }
    return null;
  }

  async search(query: string, opts: Mem0SearchOptions = {}): Promise<Mem0SearchResult> {
    const { entity, filters } = Memory.split(opts);
    const principal = await this.principalOf(entity);
    const m = await this.memory();
    const r = await m.search(query, {
      principal,
      limit: opts.topK ?? opts.limit ?? DEFAULT_TOP_K,
      ...Memory.scopes(entity),
      ...opt('filters', filters),
      ...opt('threshold', opts.threshold),
    });
    const results: Mem0MemoryItem[] = [];
    for (const h of r.results)
      results.push(await this.item(m, principal, h.memory, entity, { score: h.score }));
    return { results };
  }

  async getAll(opts: Mem0GetAllOptions = {}): Promise<Mem0SearchResult> {
    const { entity, filters } = Memory.split(opts);
    const principal = await this.principalOf(entity);
    const m = await this.memory();
    const rs = await m.getAll({
      principal,
      limit: opts.topK ?? opts.limit ?? DEFAULT_GET_ALL,
      ...Memory.scopes(entity),
      ...opt('filters', filters),
    });
    const results: Mem0MemoryItem[] = [];
    for (const r of rs) results.push(await this.item(m, principal, r, entity));
    return { results };
  }

  /** Mem0's `update`: a new signed version of the memory; its id stays. */
  async update(memoryId: string, data: string): Promise<{ message: string }> {
    const { m, principal } = await this.owner(memoryId);
    await m.update(memoryId, data, { principal, reason: 'updated via mem0 API' });
    return { message: 'Memory updated successfully!' };
  }

  /** Mem0's `delete`: a signed tombstone (its log leaf stays provable). */
  async delete(memoryId: string): Promise<{ message: string }> {
    const { m, principal } = await this.owner(memoryId);
    await m.delete(memoryId, { principal, reason: 'deleted via mem0 API' });
    this.#owners.delete(memoryId);
    return { message: 'Memory deleted successfully!' };
  }

  /** Mem0's `deleteAll`: every memory of the named user (within an agent / run scope when given). */
  async deleteAll(opts: Mem0Entity = {}): Promise<{ message: string }> {
    if (opts.userId === undefined && opts.agentId === undefined && opts.runId === undefined)
      throw new Mem0ScopeError('At least one filter is required to delete all memories');
    const principal = await this.principalOf(opts);
    const m = await this.memory();
    const scopes = Memory.scopes(opts);
    if (scopes.agentId === undefined && scopes.runId === undefined)
      await m.deleteAll({ principal, reason: 'deleteAll via mem0 API' });
    else
      for (;;) {
        const page = await m.getAll({ principal, limit: 1000, ...scopes });
        if (page.length === 0) break;
        for (const r of page) await m.delete(r.id, { principal, reason: 'deleteAll via mem0 API' });
      }
    return { message: 'Memories deleted successfully!' };
  }

  /** Mem0's `history`: ADD / UPDATE / DELETE rows, oldest first; [] for an unknown id. */
  async history(memoryId: string): Promise<Mem0HistoryEntry[]> {
    const m = await this.memory();
    for (const principal of await this.candidates(memoryId)) {
      const h = await m.history(memoryId, { principal }).catch(() => undefined);
      if (h === undefined || h.length === 0) continue;
      const out: Mem0HistoryEntry[] = [];
      let prev: string | null = null;
      for (const e of h) {
        if (e.action === 'conflict') continue;
        const value = e.memory?.content ?? null;
        out.push({
          id: e.id,
          memoryId,
          previousValue: e.action === 'add' ? null : (e.previous ?? prev),
          newValue: e.action === 'delete' ? null : value,
          action: e.action === 'add' ? 'ADD' : e.action === 'update' ? 'UPDATE' : 'DELETE',
          createdAt: e.at,
          updatedAt: e.action === 'add' ? null : e.at,
          isDeleted: e.action === 'delete' ? 1 : 0,
        });
        if (value !== null) prev = value;
      }
      return out;
    }
    return [];
  }

  /**
   * Mem0's `reset`: deletes every memory (signed tombstones) of every principal this instance
   * maps — with the default mapping, every user and agent principal of the store.
   */
  async reset(): Promise<void> {
    const m = await this.memory();
    const ids = new Set(this.#principals.values());
    if (this.#config.resolvePrincipal === undefined)
      for (const p of await m.listPrincipals())
        if (p.kind === 'user' || p.kind === 'agent') ids.add(p.id);
    for (const principal of ids) await m.deleteAll({ principal, reason: 'reset via mem0 API' });
    this.#owners.clear();
  }

  /** Close the memwarden Memory this instance opened (not one it was given). */
  async close(): Promise<void> {
    if (this.#owned && this.#ready !== undefined) await (await this.#ready).close();
  }

  private entityOf(principal: string): Mem0Entity {
    for (const [k, v] of this.#principals)
      if (v === principal) {
        if (k.startsWith('user:')) return { userId: k.slice(5) };
        if (k.startsWith('agent:')) return { agentId: k.slice(6) };
        if (k.startsWith('run:')) return { runId: k.slice(4) };
      }
    return {};
  }

  /** Principals that may own `memoryId`: its known owner, else every principal this instance maps. */
  private async candidates(memoryId: string): Promise<string[]> {
    const known = this.#owners.get(memoryId);
    const out = new Set<string>(known === undefined ? [] : [known]);
    for (const p of this.#principals.values()) out.add(p);
    if (this.#config.resolvePrincipal === undefined) {
      const m = await this.memory();
      for (const p of await m.listPrincipals())
        if (p.kind === 'user' || p.kind === 'agent') out.add(p.id);
    }
    return [...out];
  }

  private async owner(memoryId: string): Promise<{ m: MemwardenMemory; principal: string }> {
    const m = await this.memory();
    for (const principal of await this.candidates(memoryId))
      if ((await m.get(memoryId, { principal }).catch(() => undefined)) !== undefined)
        return { m, principal };
    throw new Error(`Memory with ID ${memoryId} not found`);
  }
}

/** Mem0's roles onto memwarden's (an unknown role is the user's, as Mem0 formats it). */
function toRole(role: string): ChatTurn['role'] {
  return role === 'assistant' || role === 'tool' || role === 'system' ? role : 'user';
}

function opt<K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [k]: v }) as { [P in K]?: V };
}
