/**
 * @module integrations/langgraph/store
 * `MemwardenStore`: a LangGraph.js `BaseStore` over the Memory API, for one fixed principal or —
 * with `resolvePrincipal` — the principal each namespace belongs to (one deployed graph, many
 * users, each operation under its own principal's RLS scope).
 *
 * Every item is one signed memory of kind `langgraph` whose source URI is the exact address
 * `langgraph://<namespace labels>/<key>` (segments percent-encoded) and whose content is the
 * canonical JSON of the value. A put on an existing key is a new signed version that
 * supersedes the old one (`memory.update`), a delete is a signed tombstone; provenance, the log
 * and per-principal isolation are the Memory's.
 */
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from '@langchain/langgraph-checkpoint';
import { isMemwardenError } from '../../core/errors.js';
import type { AddResult, MemoryApi, MemoryRecord } from '../../memory/api.js';
import { DEFAULT_WRITE_LIMITS } from '../../memory/config.js';
import { checkStructured } from '../../memory/write/limits.js';
import {
  LANGGRAPH_KIND,
  addressUri,
  canonicalJson,
  hasPrefix,
  hasSuffix,
  matchesFilter,
  parseAddressUri,
  textsAtPath,
} from './address.js';

export interface MemwardenStoreTtlConfig {
  /** Default TTL of a put, in minutes (null or absent: never expires, as LangGraph's stores). */
  readonly defaultTtl?: number | null;
  /**
   * Refresh an item's expiry when it is read (`get`, and the items `search` returns), as
   * LangGraph's `TTLConfig.refresh_on_read`: the item lives its own TTL again from the read.
   * A refresh is `Memory.renew` — the stored expiry moves forward; nothing is re-signed or
   * re-logged. A single operation may override it with `refreshTtl`. Default false.
   */
  readonly refreshOnRead?: boolean;
}

/**
 * Maps a namespace (a put's or get's namespace, a search's prefix, a listing's prefix) to the
 * principal that owns it — an authenticated mapping the caller supplies (e.g. the user id in
 * `["memories", userId]`, checked against its own session table). Undefined: no principal may
 * act there, and the operation is refused (`LangGraphPrincipalError`), never run as someone else.
 */
export type PrincipalResolver = (
  namespace: readonly string[],
) => string | undefined | Promise<string | undefined>;

export interface MemwardenStoreOptions {
  /** The Memory underneath (`Memory.open()` or any `MemoryApi`). */
  readonly memory: MemoryApi;
  /** The principal every operation runs as: it owns the items, and sees only its own. */
  readonly principal?: string;
  /** Instead of `principal`: the principal per operation, from its namespace. */
  readonly resolvePrincipal?: PrincipalResolver;
  /**
   * LangGraph's index config (ADR 0072). With `embed` (PostgresStore's: a function of texts, or
   * a LangChain `Embeddings`) or `embeddings` (InMemoryStore's), a query ranks items as LangGraph's
   * stores do: by the best cosine similarity between the query's vector and the vectors of the
   * item's indexed `fields` (JSON paths, default `["$"]`: the whole value; a put's own `index`
   * list overrides them), all from the caller's model. Without one, the Memory's own embedder
   * ranks each item's whole canonical JSON, and `fields` is not used. Either way every put goes
   * through the Memory's write path (its screens use the Memory's embedder, never the caller's).
   * `dims` is accepted and not used; `similarityThreshold` drops query hits scoring below it.
   */
  readonly index?: {
    readonly fields?: readonly string[];
    readonly dims?: number;
    readonly embed?: LangGraphEmbedFunction | LangGraphEmbeddings;
    readonly embeddings?: LangGraphEmbeddings;
    readonly similarityThreshold?: number;
  };
  readonly ttl?: MemwardenStoreTtlConfig;
}

/** A LangChain `Embeddings` (the part a store uses). */
export interface LangGraphEmbeddings {
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
}
/** PostgresStore's `index.embed` as a function: one vector per text, in order. */
export type LangGraphEmbedFunction = (texts: string[]) => Promise<number[][]>;

/** No principal may act in this namespace (the resolver said none). */
export class LangGraphPrincipalError extends Error {
  constructor(readonly namespace: readonly string[]) {
    super(`no principal may act in namespace ${JSON.stringify(namespace)}`);
    this.name = 'LangGraphPrincipalError';
  }
}

/** Per-put options beyond LangGraph's `put(namespace, key, value, index)`. */
export interface MemwardenPutOptions {
  /** TTL in minutes; null: never expires; absent: `ttl.defaultTtl`. */
  readonly ttl?: number | null;
}

/** A `PutOperation` may carry a TTL (minutes) in `batch`. */
export type MemwardenPutOperation = PutOperation & { readonly ttl?: number | null };

/** `GetOperation` / `SearchOperation` may override `ttl.refreshOnRead` (LangGraph's `refresh_ttl`). */
export type MemwardenGetOperation = GetOperation & { readonly refreshTtl?: boolean };
export type MemwardenSearchOperation = SearchOperation & { readonly refreshTtl?: boolean };

/** Per-read options beyond LangGraph's `get(namespace, key)`. */
export interface MemwardenGetOptions {
  /** Refresh the item's TTL on this read (default: `ttl.refreshOnRead`). */
  readonly refreshTtl?: boolean;
}

/** A put the Memory held for review (a write screen flagged it): never silently dropped. */
export class PutHeldForReviewError extends Error {
  constructor(
    readonly reviewId: string,
    readonly reasons: readonly string[],
  ) {
    super(`memwarden held the put for review (${reasons.join(', ')}); review id ${reviewId}`);
    this.name = 'PutHeldForReviewError';
  }
}

interface Live {
  readonly record: MemoryRecord;
  readonly namespace: string[];
  readonly key: string;
  readonly value: Record<string, unknown>;
  /** False for an item put with `index: false`: listed, never ranked by a query. */
  readonly indexed: boolean;
  /** The put's own `index` field list (absent: the store's `fields`). */
  readonly paths?: readonly string[];
}

const PAGE = 1000;
const MS_PER_MINUTE = 60_000;
/** The Memory's largest result set (`MAX_SEARCH_LIMIT`): a query ranks up to this many items. */
const SEMANTIC_MAX = 1000;
/** Vectors from the caller's model kept per record id (recomputed when evicted). */
const VECTOR_CACHE_MAX = 50_000;

interface CallerEmbedder {
  docs(texts: string[]): Promise<number[][]>;
  query(text: string): Promise<number[]>;
}

function callerEmbedder(index: MemwardenStoreOptions['index']): CallerEmbedder | undefined {
  const e = index?.embeddings ?? index?.embed;
  if (e === undefined) return undefined;
  if (typeof e === 'function')
    return { docs: (t) => e(t), query: async (q) => (await e([q]))[0] ?? [] };
  return { docs: (t) => e.embedDocuments(t), query: (q) => e.embedQuery(q) };
}

export class MemwardenStore extends BaseStore {
  private readonly memory: MemoryApi;
  private readonly fixed: string | undefined;
  private readonly resolver: PrincipalResolver | undefined;
  private readonly defaultTtl: number | null;
  private readonly refreshOnRead: boolean;
  private readonly similarityThreshold: number | undefined;
  readonly indexFields: readonly string[] | undefined;
  private readonly embedder: CallerEmbedder | undefined;
  private readonly index: MemwardenStoreOptions['index'];
  /** record id → the vectors of its indexed texts (caller's model). */
  readonly #vectors = new Map<string, number[][]>();

  constructor(opts: MemwardenStoreOptions) {
    super();
    const fixed = typeof opts.principal === 'string' && opts.principal.length > 0;
    if (fixed === (opts.resolvePrincipal !== undefined)) {
      throw new TypeError('MemwardenStore needs exactly one of principal and resolvePrincipal');
    }
    this.memory = opts.memory;
    this.fixed = fixed ? opts.principal : undefined;
    this.resolver = opts.resolvePrincipal;
    this.defaultTtl = opts.ttl?.defaultTtl ?? null;
    this.refreshOnRead = opts.ttl?.refreshOnRead === true;
    this.indexFields = opts.index?.fields;
    this.similarityThreshold = opts.index?.similarityThreshold;
    this.index = opts.index;
    this.embedder = callerEmbedder(opts.index);
  }

  /** The index configuration, as LangGraph's stores expose it. */
  get indexConfig(): MemwardenStoreOptions['index'] {
    return this.index;
  }

  /** The texts an item is ranked by: its `index` paths (or the store's fields), as LangGraph extracts them. */
  private textsOf(value: Record<string, unknown>, paths: readonly string[] | undefined): string[] {
    const out: string[] = [];
    for (const p of paths ?? this.indexFields ?? ['$']) out.push(...textsAtPath(value, p));
    return out;
  }

  /** Embed distinct texts with the caller's model: one call, one vector per text, checked. */
  private async embedTexts(texts: readonly string[]): Promise<Map<string, number[]>> {
    const distinct = [...new Set(texts)];
    const out = new Map<string, number[]>();
    if (distinct.length === 0 || this.embedder === undefined) return out;
    const vs = await this.embedder.docs(distinct);
    distinct.forEach((t, i) => {
      const v = vs[i];
      if (!Array.isArray(v)) throw new Error(`No embedding found for text: ${t}`);
      out.set(t, v);
    });
    return out;
  }

  private cacheVectors(recordId: string, vectors: number[][]): void {
    if (this.#vectors.size >= VECTOR_CACHE_MAX) {
      const oldest = this.#vectors.keys().next().value;
      if (oldest !== undefined) this.#vectors.delete(oldest);
    }
    this.#vectors.set(recordId, vectors);
  }

  /** The principal an operation on `namespace` runs as; refused when there is none. */
  private async principalFor(namespace: readonly string[]): Promise<string> {
    if (this.fixed !== undefined) return this.fixed;
    const p = await this.resolver!(namespace);
    if (typeof p !== 'string' || p.length === 0) throw new LangGraphPrincipalError(namespace);
    return p;
  }

  /** LangGraph's put, plus an optional TTL in minutes. */
  override async put(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    index?: false | string[],
    options?: MemwardenPutOptions,
  ): Promise<void> {
    validateNamespace(namespace);
    const op: MemwardenPutOperation = {
      namespace,
      key,
      value,
      ...(index === undefined ? {} : { index }),
      ...(options?.ttl === undefined ? {} : { ttl: options.ttl }),
    };
    await this.batch([op]);
  }

  /** LangGraph's get, plus a per-read TTL refresh override. */
  override async get(
    namespace: string[],
    key: string,
    options?: MemwardenGetOptions,
  ): Promise<Item | null> {
    // Refused before dispatch, as BaseStore.get refuses it (a dotted label aliases nothing here).
    validateNamespace(namespace, { allowEmpty: true, allowReservedRoot: true });
    const op: MemwardenGetOperation = {
      namespace,
      key,
      ...(options?.refreshTtl === undefined ? {} : { refreshTtl: options.refreshTtl }),
    };
    const [item] = await this.batch([op]);
    return item ?? null;
  }

  /**
   * Run the operations in order; later operations see the effect of earlier puts. A get or
   * put looks its item up by its address (an indexed source-URI lookup); only a listing
   * (search without a query, listNamespaces) reads all of the principal's items, once per batch.
   */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const views = new Map<string, BatchView>();
    const viewFor = async (namespace: readonly string[]): Promise<BatchView> => {
      const principal = await this.principalFor(namespace);
      let v = views.get(principal);
      if (v === undefined)
        views.set(
          principal,
          (v = new BatchView(
            principal,
            (uri) => this.find(principal, uri),
            () => this.scan(principal),
          )),
        );
      return v;
    };
    const out: unknown[] = [];
    // Every operation is checked, and every principal resolved, before anything is written:
    // a batch refused for bad input changes nothing.
    for (const op of operations) {
      if ('key' in op && 'value' in op) {
        validateNamespace(op.namespace, { allowReservedRoot: true });
        checkPut(op);
        await viewFor(op.namespace);
      } else if ('namespace' in op) {
        validateNamespace(op.namespace, { allowEmpty: true, allowReservedRoot: true });
        await viewFor(op.namespace);
      } else if ('namespacePrefix' in op) {
        validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
        await viewFor(op.namespacePrefix);
      } else await viewFor(listingNamespace(op as ListNamespacesOperation));
    }
    // With the caller's model, the batch's indexed texts are embedded in one call before anything
    // is written (only each address's last put counts): a failing provider changes nothing.
    const putVectors = await this.embedPuts(operations);
    for (const op of operations) {
      if ('key' in op && 'value' in op) {
        await this.doPut(await viewFor(op.namespace), op as MemwardenPutOperation, putVectors);
        out.push(null); // a put answers null, as InMemoryStore (and RedisStore) answer it
      } else if ('key' in op) {
        out.push(await this.doGet(await viewFor(op.namespace), op as MemwardenGetOperation));
      } else if ('namespacePrefix' in op) {
        const sop = op as MemwardenSearchOperation;
        out.push(await this.doSearch(await viewFor(sop.namespacePrefix), sop));
      } else {
        const lop = op as ListNamespacesOperation;
        const view = await viewFor(listingNamespace(lop));
        out.push(this.doListNamespaces(await view.all(), lop));
      }
    }
    return out as OperationResults<Op>;
  }

  /** The caller-model vectors of each address's final indexed put in `operations`. */
  private async embedPuts(
    operations: readonly Operation[],
  ): Promise<Map<PutOperation, number[][]>> {
    const out = new Map<PutOperation, number[][]>();
    if (this.embedder === undefined) return out;
    const last = new Map<string, PutOperation>();
    for (const op of operations)
      if ('key' in op && 'value' in op) last.set(addressUri(op.namespace, op.key), op);
    const texts = new Map<PutOperation, string[]>();
    for (const op of last.values()) {
      if (op.value === null || op.value === undefined || op.index === false) continue;
      const value = JSON.parse(canonicalJson(op.value)) as Record<string, unknown>;
      texts.set(op, this.textsOf(value, op.index));
    }
    const vectors = await this.embedTexts([...texts.values()].flat());
    for (const [op, ts] of texts)
      out.set(
        op,
        ts.map((t) => vectors.get(t)!),
      );
    return out;
  }

  // ---- operations ------------------------------------------------------------------------------

  private async doGet(view: BatchView, op: MemwardenGetOperation): Promise<Item | null> {
    validateNamespace(op.namespace, { allowEmpty: true, allowReservedRoot: true });
    const uri = addressUri(op.namespace, op.key);
    const hit = await view.lookup(uri);
    if (hit === undefined) return null;
    const l = (op.refreshTtl ?? this.refreshOnRead) ? await this.refresh(view, uri, hit) : hit;
    return this.toItem(view.principal, l);
  }

  /** Renew the item's lifetime (its own TTL again, from now); best effort, like renew-on-use. */
  private async refresh(view: BatchView, uri: string, l: Live): Promise<Live> {
    if (l.record.expiresAt === undefined) return l;
    try {
      const record = await this.memory.renew(l.record.id, { principal: view.principal });
      const next = { ...l, record };
      view.set(uri, next);
      return next;
    } catch {
      return l;
    }
  }

  private async doPut(
    view: BatchView,
    op: MemwardenPutOperation,
    putVectors: ReadonlyMap<PutOperation, number[][]>,
  ): Promise<void> {
    validateNamespace(op.namespace, { allowReservedRoot: true });
    checkPut(op);
    const uri = addressUri(op.namespace, op.key);
    const existing = await view.lookup(uri);
    if (op.value === null || op.value === undefined) {
      if (existing !== undefined) {
        await this.memory.delete(existing.record.id, {
          principal: view.principal,
          reason: 'langgraph delete',
        });
        view.delete(uri);
      }
      return;
    }
    const value = JSON.parse(canonicalJson(op.value)) as Record<string, unknown>;
    // The address is part of the signed content too: it is what the item says about itself.
    // `index: false` is recorded with it: such an item is listed, never ranked by a query.
    const noIndex = op.index === false;
    // A put's own field list is recorded too, so any process ranks the item by the same texts.
    const paths = Array.isArray(op.index) ? op.index.map(String) : undefined;
    const content = canonicalJson({
      namespace: op.namespace,
      key: op.key,
      value,
      ...(noIndex ? { index: false } : paths !== undefined ? { index: paths } : {}),
    });
    const ttl = op.ttl !== undefined ? op.ttl : this.defaultTtl;
    const ttlMs = ttl === null ? null : ttl * MS_PER_MINUTE;
    let record: MemoryRecord;
    if (existing !== undefined) {
      // A new signed version superseding the old one: history keeps both.
      try {
        record = await this.memory.update(existing.record.id, content, {
          principal: view.principal,
          reason: 'langgraph put',
          ttlMs,
        });
      } catch (e) {
        // The new version was screened and held (the old one stays current), as a held add.
        if (isMemwardenError(e) && e.code === 'WRITE_HELD')
          throw new PutHeldForReviewError(
            String(e.details?.['reviewId'] ?? ''),
            (e.details?.['reasons'] as string[] | undefined) ?? [],
          );
        throw e;
      }
    } else {
      record = stored(
        await this.memory.add(content, {
          principal: view.principal,
          kind: LANGGRAPH_KIND,
          source: uri,
          ttlMs,
          // Items are addressed by key: {value: 1} beside {value: 2} are two items, not a flood.
          keyed: true,
        }),
      );
    }
    const vectors = putVectors.get(op);
    if (vectors !== undefined) this.cacheVectors(record.id, vectors);
    view.set(uri, {
      record,
      namespace: [...op.namespace],
      key: op.key,
      value,
      indexed: !noIndex,
      ...(paths === undefined ? {} : { paths }),
    });
  }

  /**
   * Rank in-scope items with the caller's model, as LangGraph's stores do: an item's score is the
   * best cosine similarity of the query's vector to its indexed texts' vectors; items without
   * vectors (`index: false`, no text at their fields) follow unscored, in put order.
   */
  private async rankWithCaller(
    query: string,
    items: readonly Live[],
  ): Promise<{ l: Live; score?: number }[]> {
    const q = await this.embedder!.query(query);
    const missing = new Map<Live, string[]>();
    for (const l of items)
      if (l.indexed && !this.#vectors.has(l.record.id))
        missing.set(l, this.textsOf(l.value, l.paths));
    if (missing.size > 0) {
      const vs = await this.embedTexts([...missing.values()].flat());
      for (const [l, ts] of missing)
        this.cacheVectors(
          l.record.id,
          ts.map((t) => vs.get(t)!),
        );
    }
    const scored: { l: Live; score: number }[] = [];
    const unscored: { l: Live }[] = [];
    for (const l of items) {
      const vectors = l.indexed ? (this.#vectors.get(l.record.id) ?? []) : [];
      if (vectors.length === 0) unscored.push({ l });
      else {
        const score = Math.max(...vectors.map((v) => cosine(q, v)));
        if (this.similarityThreshold === undefined || score >= this.similarityThreshold)
          scored.push({ l, score });
      }
    }
    scored.sort((a, b) => b.score - a.score);
    return [...scored, ...unscored];
  }

  private async doSearch(view: BatchView, op: MemwardenSearchOperation): Promise<SearchItem[]> {
    const refresh = op.refreshTtl ?? this.refreshOnRead;
    const item = async (l: Live): Promise<Item> =>
      this.toItem(view.principal, refresh ? await this.refresh(view, l.record.source!, l) : l);
    validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const limit = Math.max(0, Math.trunc(op.limit ?? 10));
    const offset = Math.max(0, Math.trunc(op.offset ?? 0));
    const inScope = (l: Live): boolean =>
      hasPrefix(l.namespace, op.namespacePrefix) && matchesFilter(l.value, op.filter);
    const all = await view.all();
    const byPutOrder = (a: Live, b: Live): number =>
      compareNs(a.record.createdAtNs, b.record.createdAtNs) ||
      a.record.source!.localeCompare(b.record.source!);
    if (this.embedder !== undefined && op.query !== undefined && op.query.trim() !== '') {
      const ranked = await this.rankWithCaller(
        op.query,
        [...all.values()].filter(inScope).sort(byPutOrder),
      );
      return Promise.all(
        ranked.slice(offset, offset + limit).map(async (h) => ({
          ...(await item(h.l)),
          ...(h.score === undefined ? {} : { score: h.score }),
        })),
      );
    }
    if (op.query === undefined || op.query.trim() === '') {
      // Insertion order, as LangGraph's InMemoryStore lists a namespace.
      const page = [...all.values()]
        .filter(inScope)
        .sort(
          (a, b) =>
            compareNs(a.record.createdAtNs, b.record.createdAtNs) ||
            a.record.source!.localeCompare(b.record.source!),
        )
        .slice(offset, offset + limit);
      return Promise.all(page.map(item));
    }
    // Rank every item of the principal (up to the Memory's largest result set), then keep the
    // ones in scope: a namespace's items are found however many better matches live elsewhere.
    // The Memory's renew-on-use is off: an item's lifetime moves only by `refreshOnRead`.
    const r = await this.memory.search(op.query, {
      principal: view.principal,
      limit: Math.max(1, Math.min(SEMANTIC_MAX, all.size)),
      filters: { kind: LANGGRAPH_KIND },
      renew: false,
      ...(this.similarityThreshold === undefined ? {} : { threshold: this.similarityThreshold }),
    });
    const hits: { l: Live; score: number }[] = [];
    for (const h of r.results) {
      if (h.memory.source === undefined) continue;
      const l = all.get(h.memory.source);
      // Only this principal's current, indexed version of the item counts.
      if (l === undefined || l.record.id !== h.memory.id || !l.indexed || !inScope(l)) continue;
      hits.push({ l, score: h.score });
    }
    hits.sort((a, b) => b.score - a.score);
    // Items put with `index: false` follow the ranked ones, unscored, as InMemoryStore returns them.
    const unranked = [...all.values()]
      .filter((l) => !l.indexed && inScope(l))
      .sort((a, b) => compareNs(a.record.createdAtNs, b.record.createdAtNs));
    const ranked: { l: Live; score?: number }[] = [...hits, ...unranked.map((l) => ({ l }))];
    return Promise.all(
      ranked.slice(offset, offset + limit).map(async (h) => ({
        ...(await item(h.l)),
        ...(h.score === undefined ? {} : { score: h.score }),
      })),
    );
  }

  private doListNamespaces(live: Map<string, Live>, op: ListNamespacesOperation): string[][] {
    const seen = new Map<string, string[]>();
    for (const l of live.values()) {
      const ok = (op.matchConditions ?? []).every((c) =>
        c.matchType === 'prefix' ? hasPrefix(l.namespace, c.path) : hasSuffix(l.namespace, c.path),
      );
      if (!ok) continue;
      const ns = op.maxDepth === undefined ? l.namespace : l.namespace.slice(0, op.maxDepth);
      seen.set(JSON.stringify(ns), ns);
    }
    const all = [...seen.values()].sort((a, b) => cmpNamespace(a, b));
    return all.slice(op.offset ?? 0, (op.offset ?? 0) + (op.limit ?? 100));
  }

  // ---- reading the principal's items -------------------------------------------------------

  /** The principal's live store items, by address (the newest if two ever share one). */
  private async scan(principal: string): Promise<Map<string, Live>> {
    const out = new Map<string, Live>();
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.memory.getAll({ principal, limit: PAGE, offset });
      if (page.length === 0) return out;
      for (const m of page) this.keepNewest(principal, out, m);
    }
  }

  /** The principal's live item at one address: a lookup by exact source URI. */
  private async find(principal: string, uri: string): Promise<Live | undefined> {
    const out = new Map<string, Live>();
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.memory.getAll({ principal, source: uri, limit: PAGE, offset });
      for (const m of page) if (m.source === uri) this.keepNewest(principal, out, m);
      if (page.length < PAGE) return out.get(uri);
    }
  }

  /** Add `m` to `out` when it is one of this principal's store items and the newest at its address. */
  private keepNewest(principal: string, out: Map<string, Live>, m: MemoryRecord): void {
    if (m.kind !== LANGGRAPH_KIND || m.writer !== principal || m.source === undefined) return;
    const addr = parseAddressUri(m.source);
    if (addr === undefined) return;
    const doc = readContent(m.content, addr);
    if (doc === undefined) return;
    const prev = out.get(m.source);
    if (prev !== undefined && compareNs(prev.record.createdAtNs, m.createdAtNs) >= 0) return;
    out.set(m.source, {
      record: m,
      ...addr,
      value: doc.value,
      indexed: doc.indexed,
      ...(doc.paths === undefined ? {} : { paths: doc.paths }),
    });
  }

  /** createdAt is the first version's time (walked through the history), updatedAt this one's. */
  private async toItem(principal: string, l: Live): Promise<Item> {
    let created = l.record.createdAt;
    if (l.record.supersedes !== undefined) {
      const h = await this.memory.history(l.record.id, { principal });
      const first = h.find((e) => e.action === 'add');
      if (first !== undefined) created = first.at;
    }
    return {
      namespace: [...l.namespace],
      key: l.key,
      value: structuredClone(l.value),
      createdAt: new Date(created),
      updatedAt: new Date(l.record.createdAt),
    };
  }
}

/** A put's key and value as LangGraph accepts them (a value is an object, or null to delete). */
function checkPut(op: PutOperation): void {
  if (typeof op.key !== 'string' || op.key.length === 0)
    throw new TypeError('LangGraph store keys must be non-empty strings');
  if (
    op.value !== null &&
    op.value !== undefined &&
    (typeof op.value !== 'object' || Array.isArray(op.value))
  )
    throw new TypeError('LangGraph store values must be JSON objects');
  // The write path's nesting bound on structured values (a coded INPUT_INVALID, as the HTTP
  // and MCP edges answer a too-deep body), before the value is canonicalised (recursively).
  if (op.value !== null && op.value !== undefined)
    checkStructured(op.value, DEFAULT_WRITE_LIMITS.jsonDepth, 'value');
  checkStructured([...op.namespace, op.key], 2, 'address');
}

function stored(r: AddResult): MemoryRecord {
  if (r.status !== 'stored') throw new PutHeldForReviewError(r.reviewId, r.reasons);
  return r.memory;
}

/** A store item's value (and index flag), when the content's own address matches its URI. */
function readContent(
  content: string,
  addr: { namespace: string[]; key: string },
): { value: Record<string, unknown>; indexed: boolean; paths?: string[] } | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (doc === null || typeof doc !== 'object') return undefined;
  const { namespace, key, value, index } = doc as {
    namespace?: unknown;
    key?: unknown;
    value?: unknown;
    index?: unknown;
  };
  if (key !== addr.key || JSON.stringify(namespace) !== JSON.stringify(addr.namespace))
    return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const paths =
    Array.isArray(index) && index.every((p) => typeof p === 'string')
      ? (index as string[])
      : undefined;
  return {
    value: value as Record<string, unknown>,
    indexed: index !== false,
    ...(paths === undefined ? {} : { paths }),
  };
}

/** The namespace a listing runs in, for principal resolution: its prefix up to a wildcard. */
function listingNamespace(op: ListNamespacesOperation): string[] {
  const prefix = op.matchConditions?.find((c) => c.matchType === 'prefix')?.path ?? [];
  const i = prefix.indexOf('*');
  return [...(i < 0 ? prefix : prefix.slice(0, i))];
}

/**
 * What one batch knows about the principal's items: addresses looked up or written so far, and
 * (only when a listing needs it) everything, with this batch's own writes laid over it.
 */
class BatchView {
  readonly #known = new Map<string, Live | null>();
  #all: Map<string, Live> | undefined;

  constructor(
    readonly principal: string,
    private readonly find: (uri: string) => Promise<Live | undefined>,
    private readonly scan: () => Promise<Map<string, Live>>,
  ) {}

  async lookup(uri: string): Promise<Live | undefined> {
    const k = this.#known.get(uri);
    if (k !== undefined) return k ?? undefined; // null: deleted in this batch
    if (this.#all !== undefined) return this.#all.get(uri);
    const found = await this.find(uri);
    this.#known.set(uri, found ?? null);
    return found;
  }

  set(uri: string, l: Live): void {
    this.#known.set(uri, l);
    this.#all?.set(uri, l);
  }

  delete(uri: string): void {
    this.#known.set(uri, null);
    this.#all?.delete(uri);
  }

  async all(): Promise<Map<string, Live>> {
    if (this.#all === undefined) {
      const all = await this.scan();
      for (const [uri, l] of this.#known) {
        if (l === null) all.delete(uri);
        else all.set(uri, l);
      }
      this.#all = all;
    }
    return this.#all;
  }
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) dot += a[i]! * b[i]!;
  for (const x of a) na += x * x;
  for (const x of b) nb += x * x;
  return na > 0 && nb > 0 ? dot / (Math.sqrt(na) * Math.sqrt(nb)) : 0;
}

function compareNs(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function cmpNamespace(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = a[i]! < b[i]! ? -1 : a[i]! > b[i]! ? 1 : 0;
    if (c !== 0) return c;
  }
  return a.length - b.length;
}
