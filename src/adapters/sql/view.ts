/**
 * @module adapters/sql/view
 * The StorageBackend surface over the shared queries, parameterised by how a driver runs a
 * unit of work. Drivers subclass it and decide only *where* a query runs (its own scoped
 * transaction, or the enclosing one); *what* runs lives in `./log.js`, `./registry.js` and
 * `./entries.js`, so PGlite and PostgreSQL execute identical SQL.
 */
import { MemwardenError } from '../../core/errors.js';
import type { SourceTier } from '../../core/trust.js';
import type {
  AuditEvent,
  AuditQuery,
  BrowseQuery,
  CheckpointRecord,
  KeyRecord,
  LeafKind,
  LeafRecord,
  NodeRecord,
  PrincipalRecord,
  QuotaDemand,
  ReviewDecision,
  ReviewRecord,
  SearchHit,
  SearchQuery,
  StorageBackend,
  StoredEntry,
  TierCount,
  StoredApiKey,
} from '../../ports/storage.js';
import * as entries from './entries.js';
import { deniedError } from './entries.js';
import type { SqlFeatures } from './entries.js';
import * as log from './log.js';
import type { Queryable, Scope } from './queryable.js';
import { checkBrowse, checkFindBy, checkPage, checkScan } from './rank.js';
import * as records from './records.js';
import * as registry from './registry.js';
import type { KeyPatch } from './registry.js';
import { searchEntries } from './search.js';

/** A StorageBackend whose every query runs under `scope` through the driver's `read`/`write`. */
export abstract class SqlView implements StorageBackend {
  constructor(
    readonly scope: Scope,
    readonly features: SqlFeatures,
  ) {}

  /** How a driver runs the quota upsert (`records.QUOTA_UPSERT_SQL`); default: `query`. */
  protected readonly quotaUpsert: records.QuotaUpsert | undefined = undefined;
  /** Run a read-only unit of work under this view's scope. */
  protected abstract read<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Run a write as one all-or-nothing unit under this view's scope. */
  protected abstract write<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  abstract transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T>;
  abstract close(): Promise<void>;
  /**
   * Called inside a write unit (before it ends) that may have changed the log head or quota
   * counts; a driver caching committed state forgets it here (PGlite: `CommittedHint`).
   */
  protected touched(_what: 'log' | 'quotas'): void {}
  /** `fn` as a write that may change `what` (see {@link touched}). */
  private writeTouching<T>(what: 'log' | 'quotas', fn: (q: Queryable) => Promise<T>): Promise<T> {
    return this.write(async (q) => {
      try {
        return await fn(q);
      } finally {
        this.touched(what);
      }
    });
  }

  logSize(): Promise<number> {
    return this.read((q) => log.logSize(q));
  }
  appendLeaves(
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void> {
    return this.writeTouching('log', (q) => log.appendLeaves(q, this.scope, start, leaves, nodes));
  }
  getLeaf(index: number): Promise<LeafRecord | undefined> {
    return this.read((q) => log.getLeaf(q, index));
  }
  getLeaves(start: number, end: number): Promise<LeafRecord[]> {
    return this.read((q) => log.getLeaves(q, start, end));
  }
  getLeafHashes(start: number, end: number): Promise<Uint8Array> {
    return this.read((q) => log.getLeafHashes(q, start, end));
  }
  getLeavesOfKind(kind: LeafKind, start: number, end: number): Promise<LeafRecord[]> {
    return this.read((q) => log.getLeavesOfKind(q, kind, start, end));
  }
  getNodes(refs: readonly { level: number; index: number }[]): Promise<(Uint8Array | undefined)[]> {
    if (refs.length === 0) return Promise.resolve([]); // no transaction for nothing
    return this.read((q) => log.getNodes(q, refs));
  }
  findLeafIndex(entryId: string): Promise<number | undefined> {
    return this.read((q) => log.findLeafIndex(q, entryId));
  }
  putCheckpoint(cp: CheckpointRecord): Promise<void> {
    return this.write((q) => log.putCheckpoint(q, cp));
  }
  latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    return this.read((q) => log.latestCheckpoint(q));
  }
  getCheckpoint(size: number): Promise<CheckpointRecord | undefined> {
    return this.read((q) => log.getCheckpoint(q, size));
  }
  listCheckpoints(): Promise<CheckpointRecord[]> {
    return this.read((q) => log.listCheckpoints(q));
  }

  insertPrincipal(p: PrincipalRecord, firstKey: KeyRecord): Promise<void> {
    return this.write((q) => registry.insertPrincipal(q, p, firstKey));
  }
  getPrincipal(id: string): Promise<PrincipalRecord | undefined> {
    return this.read((q) => registry.getPrincipal(q, id));
  }
  listPrincipals(): Promise<PrincipalRecord[]> {
    return this.read((q) => registry.listPrincipals(q));
  }
  insertKey(k: KeyRecord): Promise<void> {
    return this.write((q) => registry.insertKey(q, k));
  }
  closeKey(kid: string, patch: KeyPatch): Promise<void> {
    return this.write((q) => registry.closeKey(q, kid, patch));
  }
  getKey(kid: string): Promise<KeyRecord | undefined> {
    return this.read((q) => registry.getKey(q, kid));
  }
  keysOf(principalId: string): Promise<KeyRecord[]> {
    return this.read((q) => registry.keysOf(q, principalId));
  }

  putEntry(e: StoredEntry): Promise<void> {
    return this.write((q) => entries.putEntry(q, this.features, e));
  }
  /** Several entries in multi-row INSERTs (not on the port: the PGlite commit path uses it). */
  putEntries(es: readonly StoredEntry[]): Promise<void> {
    return this.write((q) => entries.putEntries(q, this.features, es));
  }
  getEntry(id: string): Promise<StoredEntry | undefined> {
    return this.read((q) => entries.getEntry(q, this.features, id));
  }
  listEntries(opts?: { afterLeafIndex?: number; limit?: number }): Promise<StoredEntry[]> {
    return this.read((q) => entries.listEntries(q, this.features, opts));
  }
  async scanEntries(opts: { afterLeafIndex?: number; limit: number }): Promise<StoredEntry[]> {
    checkScan(opts); // before any transaction: bad input touches nothing
    return this.read((q) =>
      entries.scanEntries(q, this.features, opts, this.scope.kind === 'principal'),
    );
  }

  // ---- entry state and retrieval ----------------------------------------------------------
  markDeleted(id: string): Promise<void> {
    return this.write((q) => entries.markDeleted(q, id));
  }
  markSuperseded(id: string, byId: string): Promise<void> {
    return this.write((q) => entries.markSuperseded(q, id, byId));
  }
  extendExpiry(id: string, newExpiresAtNs: bigint): Promise<bigint | undefined> {
    return this.write((q) => entries.extendExpiry(q, id, newExpiresAtNs));
  }
  searchEntries(query: SearchQuery): Promise<SearchHit[]> {
    return this.read((q) =>
      searchEntries(q, this.features, query, this.scope.kind === 'principal'),
    );
  }
  async listEntriesFor(
    opts: Parameters<StorageBackend['listEntriesFor']>[0],
  ): Promise<StoredEntry[]> {
    checkPage(opts);
    return this.read((q) => entries.listEntriesFor(q, this.features, opts));
  }
  async findEntriesBy(opts: {
    uri?: string;
    srcHash?: string;
    memoryId?: string;
    includeDeleted?: boolean;
  }): Promise<StoredEntry[]> {
    checkFindBy(opts);
    return this.read((q) => entries.findEntriesBy(q, this.features, opts));
  }
  countEntries(opts?: { nowNs?: bigint }): Promise<TierCount[]> {
    return this.read((q) => entries.countEntries(q, opts));
  }
  async browseEntries(query: BrowseQuery): Promise<StoredEntry[]> {
    checkBrowse(query); // before any transaction: bad input touches nothing
    return this.read((q) => entries.browseEntries(q, this.features, query));
  }

  // ---- quotas, review queue, audit, API keys -----------------------------------------------
  consumeQuota(
    principal: string,
    tier: SourceTier,
    dayKey: string,
    limit: number,
  ): Promise<{ ok: boolean; used: number }> {
    return this.writeTouching('quotas', (q) =>
      records.consumeQuota(q, principal, tier, dayKey, limit),
    );
  }
  quotaUsed(principal: string, tier: SourceTier, dayKey: string): Promise<number> {
    return this.read((q) => records.quotaUsed(q, principal, tier, dayKey));
  }
  async consumeQuotas(demands: readonly QuotaDemand[]): Promise<boolean[]> {
    records.checkDemands(demands);
    // RLS refuses another principal's row anyway; refusing here first changes nothing at all.
    if (this.scope.kind === 'principal') {
      const own = this.scope.id;
      if (demands.some((d) => d.principal !== own)) throw deniedError('another principal’s quota');
    }
    if (demands.length === 0) return [];
    return this.writeTouching('quotas', (q) => records.consumeQuotas(q, demands, this.quotaUpsert));
  }
  /** Counts of several quota rows in one query (not on the port: the PGlite commit path uses it). */
  quotasUsed(
    keys: readonly { principal: string; tier: SourceTier; day: string }[],
  ): Promise<number[]> {
    if (keys.length === 0) return Promise.resolve([]); // no transaction for nothing
    return this.read((q) => records.quotasUsed(q, keys));
  }
  enqueueReview(r: Parameters<StorageBackend['enqueueReview']>[0]): Promise<void> {
    return this.write((q) => records.enqueueReview(q, r));
  }
  listReviews(opts?: { status?: ReviewRecord['status']; limit?: number }): Promise<ReviewRecord[]> {
    return this.read((q) => records.listReviews(q, opts));
  }
  getReview(id: string): Promise<ReviewRecord | undefined> {
    return this.read((q) => records.getReview(q, id));
  }
  decideReview(id: string, d: ReviewDecision): Promise<ReviewRecord> {
    return this.write((q) => records.decideReview(q, id, d));
  }
  async appendAudit(e: AuditEvent): Promise<void> {
    records.auditDetails(e);
    return this.write((q) => records.appendAudit(q, this.scope, e));
  }
  async appendAudits(es: readonly AuditEvent[]): Promise<void> {
    for (const e of es) records.auditDetails(e);
    return this.write((q) => records.appendAudits(q, this.scope, es));
  }
  listAudit(opts: AuditQuery): Promise<AuditEvent[]> {
    return this.read((q) => records.listAudit(q, opts));
  }
  putApiKey(k: { principalId: string; keyHash: Uint8Array; createdAtNs: bigint }): Promise<void> {
    return this.write((q) => records.putApiKey(q, k));
  }
  findApiKey(keyHash: Uint8Array): Promise<string | undefined> {
    return this.read((q) => records.findApiKey(q, keyHash));
  }
  revokeApiKey(keyHash: Uint8Array): Promise<void> {
    return this.write((q) => records.revokeApiKey(q, keyHash));
  }
  listApiKeys(): Promise<StoredApiKey[]> {
    return this.read((q) => records.listApiKeys(q));
  }
}

/**
 * Validate a principal id for `asPrincipal`. An empty id would read as "no principal" (fail
 * closed, but silently), so it is refused loudly instead.
 */
export function checkPrincipalId(id: string): string {
  if (typeof id !== 'string' || id.length === 0 || id.includes('\0')) {
    throw new MemwardenError(
      'INPUT_INVALID',
      'principal id must be a non-empty string without NUL',
    );
  }
  return id;
}

/**
 * A scoped view may be narrowed to the principal it already is, never widened or switched:
 * code handed an agent's view cannot reach another tenant through it.
 */
export function assertSameScope(scope: Scope, id: string): void {
  if (scope.kind !== 'principal' || scope.id !== id) {
    throw new MemwardenError(
      'INPUT_INVALID',
      'a principal-scoped view cannot switch to another scope',
    );
  }
}
