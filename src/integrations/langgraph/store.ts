/**
 * @module integrations/langgraph/store
 * `MemwardenStore`: a LangGraph.js `BaseStore` over the Memory API for one fixed principal.
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
import type { AddOptions, AddResult, MemoryApi, MemoryRecord } from '../../memory/api.js';
import {
  LANGGRAPH_KIND,
  addressUri,
  canonicalJson,
  hasPrefix,
  hasSuffix,
  matchesFilter,
  parseAddressUri,
} from './address.js';

export interface MemwardenStoreTtlConfig {
  /** Default TTL of a put, in minutes (null or absent: the memory tier's default retention). */
  readonly defaultTtl?: number | null;
  /**
   * Refresh an item's expiry when it is read with `get`. Not supported yet: the Memory API has
   * no renew call for a single entry (only search renews, with the tier TTL), and a re-write
   * per read would sign and log a new version on every get. Passing `true` throws.
   */
  readonly refreshOnRead?: boolean;
}

export interface MemwardenStoreOptions {
  /** The Memory underneath (`Memory.open()` or any `MemoryApi`). */
  readonly memory: MemoryApi;
  /** The principal every operation runs as: it owns the items, and sees only its own. */
  readonly principal: string;
  /**
   * LangGraph's index config. memwarden embeds the whole content (the value's canonical JSON)
   * with its own embedder, so `fields` is accepted for API compatibility and recorded only.
   */
  readonly index?: { readonly fields?: readonly string[] };
  readonly ttl?: MemwardenStoreTtlConfig;
}

/** Per-put options beyond LangGraph's `put(namespace, key, value, index)`. */
export interface MemwardenPutOptions {
  /** TTL in minutes; null: never expires; absent: `ttl.defaultTtl`. */
  readonly ttl?: number | null;
}

/** A `PutOperation` may carry a TTL (minutes) in `batch`. */
export type MemwardenPutOperation = PutOperation & { readonly ttl?: number | null };

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
}

const PAGE = 1000;
const MS_PER_MINUTE = 60_000;
const SEMANTIC_MAX = 100;

export class MemwardenStore extends BaseStore {
  private readonly memory: MemoryApi;
  private readonly principal: string;
  private readonly defaultTtl: number | null | undefined;
  readonly indexFields: readonly string[] | undefined;

  constructor(opts: MemwardenStoreOptions) {
    super();
    if (typeof opts.principal !== 'string' || opts.principal.length === 0) {
      throw new TypeError('MemwardenStore needs a principal');
    }
    if (opts.ttl?.refreshOnRead === true) {
      throw new TypeError(
        'MemwardenStore: ttl.refreshOnRead is not supported yet (the Memory API has no single-entry renew)',
      );
    }
    this.memory = opts.memory;
    this.principal = opts.principal;
    this.defaultTtl = opts.ttl?.defaultTtl;
    this.indexFields = opts.index?.fields;
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

  /** Run the operations in order; later operations see the effect of earlier puts. */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    let snapshot: Map<string, Live> | undefined;
    const live = async (): Promise<Map<string, Live>> => (snapshot ??= await this.scan());
    const out: unknown[] = [];
    for (const op of operations) {
      if ('namespace' in op)
        validateNamespace(op.namespace, { allowEmpty: true, allowReservedRoot: true });
      else if ('namespacePrefix' in op)
        validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    }
    for (const op of operations) {
      if ('key' in op && 'value' in op) {
        await this.doPut(await live(), op as MemwardenPutOperation);
        out.push(undefined);
      } else if ('key' in op) {
        out.push(await this.doGet(await live(), op));
      } else if ('namespacePrefix' in op) {
        out.push(await this.doSearch(await live(), op));
      } else {
        out.push(this.doListNamespaces(await live(), op));
      }
    }
    return out as OperationResults<Op>;
  }

  // ---- operations ------------------------------------------------------------------------------

  private async doGet(live: Map<string, Live>, op: GetOperation): Promise<Item | null> {
    validateNamespace(op.namespace, { allowEmpty: true, allowReservedRoot: true });
    const hit = live.get(addressUri(op.namespace, op.key));
    return hit === undefined ? null : this.toItem(hit);
  }

  private async doPut(live: Map<string, Live>, op: MemwardenPutOperation): Promise<void> {
    validateNamespace(op.namespace, { allowReservedRoot: true });
    if (typeof op.key !== 'string' || op.key.length === 0) {
      throw new TypeError('LangGraph store keys must be non-empty strings');
    }
    const uri = addressUri(op.namespace, op.key);
    const existing = live.get(uri);
    if (op.value === null || op.value === undefined) {
      if (existing !== undefined) {
        await this.memory.delete(existing.record.id, {
          principal: this.principal,
          reason: 'langgraph delete',
        });
        live.delete(uri);
      }
      return;
    }
    if (typeof op.value !== 'object' || Array.isArray(op.value)) {
      throw new TypeError('LangGraph store values must be JSON objects');
    }
    const value = JSON.parse(canonicalJson(op.value)) as Record<string, unknown>;
    // The address is part of the signed content too: it is what the item says about itself,
    // and it keeps equal values under different keys from reading as near-duplicates.
    const content = canonicalJson({ namespace: op.namespace, key: op.key, value });
    const ttl = op.ttl !== undefined ? op.ttl : this.defaultTtl;
    let record: MemoryRecord;
    if (existing !== undefined && ttl === undefined) {
      // A new signed version superseding the old one: history keeps both.
      record = await this.memory.update(existing.record.id, content, {
        principal: this.principal,
        reason: 'langgraph put',
      });
    } else {
      const base: AddOptions = {
        principal: this.principal,
        kind: LANGGRAPH_KIND,
        source: uri,
        ...(ttl === undefined ? {} : { ttlMs: ttl === null ? null : ttl * MS_PER_MINUTE }),
      };
      if (existing === undefined) {
        record = stored(await this.memory.add(content, base));
      } else {
        // `update` cannot carry a TTL. The new version names the old one as its parent and the
        // old one is tombstoned with a reason pointing at it (never a silent overwrite). When
        // the Memory refuses the new version as a near-duplicate of the old one, the old one
        // is tombstoned first and the new one written without the parent link.
        const old = existing.record.id;
        try {
          record = stored(await this.memory.add(content, { ...base, parents: [old] }));
          await this.memory.delete(old, {
            principal: this.principal,
            reason: `langgraph put superseded by ${record.id}`,
          });
        } catch (e) {
          if (!isNearDuplicateOf(e, old)) throw e;
          await this.memory.delete(old, {
            principal: this.principal,
            reason: 'langgraph put (ttl): replaced',
          });
          record = stored(await this.memory.add(content, base));
        }
      }
    }
    live.set(uri, { record, namespace: [...op.namespace], key: op.key, value });
  }

  private async doSearch(live: Map<string, Live>, op: SearchOperation): Promise<SearchItem[]> {
    validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const limit = Math.max(0, Math.trunc(op.limit ?? 10));
    const offset = Math.max(0, Math.trunc(op.offset ?? 0));
    const inScope = (l: Live): boolean =>
      hasPrefix(l.namespace, op.namespacePrefix) && matchesFilter(l.value, op.filter);
    if (op.query === undefined || op.query.trim() === '') {
      const page = [...live.values()]
        .filter(inScope)
        .sort(
          (a, b) =>
            compareNs(b.record.createdAtNs, a.record.createdAtNs) ||
            a.record.source!.localeCompare(b.record.source!),
        )
        .slice(offset, offset + limit);
      return Promise.all(page.map((l) => this.toItem(l)));
    }
    const r = await this.memory.search(op.query, {
      principal: this.principal,
      limit: SEMANTIC_MAX,
      filters: { kind: LANGGRAPH_KIND },
    });
    const hits: { l: Live; score: number }[] = [];
    for (const h of r.results) {
      if (h.memory.source === undefined) continue;
      const l = live.get(h.memory.source);
      // Only this principal's current version of the item counts.
      if (l === undefined || l.record.id !== h.memory.id || !inScope(l)) continue;
      hits.push({ l, score: h.score });
    }
    hits.sort((a, b) => b.score - a.score);
    return Promise.all(
      hits
        .slice(offset, offset + limit)
        .map(async (h) => ({ ...(await this.toItem(h.l)), score: h.score })),
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
  private async scan(): Promise<Map<string, Live>> {
    const out = new Map<string, Live>();
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.memory.getAll({ principal: this.principal, limit: PAGE, offset });
      if (page.length === 0) return out;
      for (const m of page) {
        if (m.kind !== LANGGRAPH_KIND || m.writer !== this.principal || m.source === undefined)
          continue;
        const addr = parseAddressUri(m.source);
        if (addr === undefined) continue;
        const value = readContent(m.content, addr);
        if (value === undefined) continue;
        const prev = out.get(m.source);
        if (prev !== undefined && compareNs(prev.record.createdAtNs, m.createdAtNs) >= 0) continue;
        out.set(m.source, { record: m, ...addr, value });
      }
    }
  }

  /** createdAt is the first version's time (walked through the history), updatedAt this one's. */
  private async toItem(l: Live): Promise<Item> {
    let created = l.record.createdAt;
    if (l.record.supersedes !== undefined) {
      const h = await this.memory.history(l.record.id, { principal: this.principal });
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

function stored(r: AddResult): MemoryRecord {
  if (r.status !== 'stored') throw new PutHeldForReviewError(r.reviewId, r.reasons);
  return r.memory;
}

/** The Memory's `STORAGE_CONFLICT` / `near_duplicate` refusal, against entry `id`. */
function isNearDuplicateOf(e: unknown, id: string): boolean {
  if (e === null || typeof e !== 'object') return false;
  const x = e as { code?: unknown; details?: { reason?: unknown; of?: unknown } };
  return (
    x.code === 'STORAGE_CONFLICT' && x.details?.reason === 'near_duplicate' && x.details.of === id
  );
}

/** The value of a store item's content, when the content's own address matches its URI. */
function readContent(
  content: string,
  addr: { namespace: string[]; key: string },
): Record<string, unknown> | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (doc === null || typeof doc !== 'object') return undefined;
  const { namespace, key, value } = doc as { namespace?: unknown; key?: unknown; value?: unknown };
  if (key !== addr.key || JSON.stringify(namespace) !== JSON.stringify(addr.namespace))
    return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return value as Record<string, unknown>;
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
