/**
 * @module adapters/memory/backend
 * The in-memory storage backend: fast, dependency-free, for unit tests of the layers above
 * and (with a journal file) for the foundation CLI. It keeps every rule of the storage port
 * (src/ports/storage.ts) and passes the shared conformance suite.
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
import { type Journal, openJournal } from './journal.js';
import { CommittedState, type KeyPatch, StagedWrites, applyStaged } from './state.js';
import { MemoryTx } from './tx.js';

/** What every view of one in-memory store shares. */
interface Shared {
  readonly s: CommittedState;
  readonly journal: Journal | undefined;
  chain: Promise<unknown>;
  closed: boolean;
}

export interface MemoryBackendOptions {
  /** Persist every committed transaction to this JSONL journal and replay it on open. */
  journalPath?: string;
}

/**
 * In-memory StorageBackend; transactions are serialised and all-or-nothing. The object `open`
 * returns is the system scope; {@link MemoryBackend.asPrincipal} hands out principal views with
 * the Postgres backends' row-level-security semantics, enforced in code.
 */
export class MemoryBackend implements StorageBackend {
  /** The store lives in this process: every write passes through this object. */
  readonly exclusive = true;

  private constructor(
    private readonly sh: Shared,
    /** undefined: the system scope. */
    private readonly principal: string | undefined,
  ) {}

  static async open(opts: MemoryBackendOptions = {}): Promise<MemoryBackend> {
    const journal =
      opts.journalPath === undefined ? undefined : await openJournal(opts.journalPath);
    const s = new CommittedState();
    if (journal !== undefined) for (const w of journal.replayed) applyStaged(s, w);
    return new MemoryBackend({ s, journal, chain: Promise.resolve(), closed: false }, undefined);
  }

  /**
   * A view for `principalId`: own rows plus global OPERATOR rows; writes of its own
   * non-OPERATOR rows only. A view cannot switch to another principal (`INPUT_INVALID`).
   */
  asPrincipal(principalId: string): MemoryBackend {
    if (typeof principalId !== 'string' || principalId.length === 0 || principalId.includes('\0'))
      throw new MemwardenError(
        'INPUT_INVALID',
        'principal id must be a non-empty string without NUL',
      );
    if (this.principal !== undefined) {
      if (this.principal !== principalId)
        throw new MemwardenError(
          'INPUT_INVALID',
          'a principal-scoped view cannot switch to another scope',
        );
      return this;
    }
    return new MemoryBackend(this.sh, principalId);
  }

  async transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    this.assertOpen();
    const run = async (): Promise<T> => {
      const staged = new StagedWrites();
      const result = await fn(new MemoryTx(this.sh.s, staged, this.principal));
      if (!staged.isEmpty()) {
        this.sh.journal?.append(staged); // durable before visible
        applyStaged(this.sh.s, staged);
      }
      return result;
    };
    const p = this.sh.chain.then(run, run);
    this.sh.chain = p.catch(() => undefined);
    return p;
  }

  private write<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    return this.transaction(fn);
  }

  /** Reads see committed state only (a fresh, empty overlay). */
  private get r(): MemoryTx {
    this.assertOpen();
    return new MemoryTx(this.sh.s, new StagedWrites(), this.principal);
  }

  private assertOpen(): void {
    if (this.sh.closed) throw new MemwardenError('STORAGE_FAILED', 'backend is closed');
  }

  logSize = (): Promise<number> => this.r.logSize();
  appendLeaves = (
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void> => this.write((tx) => tx.appendLeaves(start, leaves, nodes));
  getLeaf = (i: number): Promise<LeafRecord | undefined> => this.r.getLeaf(i);
  getLeaves = (a: number, b: number): Promise<LeafRecord[]> => this.r.getLeaves(a, b);
  getLeafHashes = (a: number, b: number): Promise<Uint8Array> => this.r.getLeafHashes(a, b);
  getLeavesOfKind = (k: LeafKind, a: number, b: number): Promise<LeafRecord[]> =>
    this.r.getLeavesOfKind(k, a, b);
  getNodes = (
    refs: readonly { level: number; index: number }[],
  ): Promise<(Uint8Array | undefined)[]> => this.r.getNodes(refs);
  findLeafIndex = (id: string): Promise<number | undefined> => this.r.findLeafIndex(id);
  putCheckpoint = (cp: CheckpointRecord): Promise<void> => this.write((tx) => tx.putCheckpoint(cp));
  latestCheckpoint = (): Promise<CheckpointRecord | undefined> => this.r.latestCheckpoint();
  getCheckpoint = (n: number): Promise<CheckpointRecord | undefined> => this.r.getCheckpoint(n);
  listCheckpoints = (): Promise<CheckpointRecord[]> => this.r.listCheckpoints();
  insertPrincipal = (p: PrincipalRecord, k: KeyRecord): Promise<void> =>
    this.write((tx) => tx.insertPrincipal(p, k));
  getPrincipal = (id: string): Promise<PrincipalRecord | undefined> => this.r.getPrincipal(id);
  listPrincipals = (): Promise<PrincipalRecord[]> => this.r.listPrincipals();
  insertKey = (k: KeyRecord): Promise<void> => this.write((tx) => tx.insertKey(k));
  closeKey = (kid: string, patch: KeyPatch): Promise<void> =>
    this.write((tx) => tx.closeKey(kid, patch));
  getKey = (kid: string): Promise<KeyRecord | undefined> => this.r.getKey(kid);
  keysOf = (id: string): Promise<KeyRecord[]> => this.r.keysOf(id);
  putEntry = (e: StoredEntry): Promise<void> => this.write((tx) => tx.putEntry(e));
  putEntries = (es: readonly StoredEntry[]): Promise<void> =>
    this.write(async (tx) => {
      for (const e of es) await tx.putEntry(e); // one transaction: all or nothing
    });
  getEntry = (id: string): Promise<StoredEntry | undefined> => this.r.getEntry(id);
  listEntries = (o?: { afterLeafIndex?: number; limit?: number }): Promise<StoredEntry[]> =>
    this.r.listEntries(o);
  scanEntries = (o: { afterLeafIndex?: number; limit: number }): Promise<StoredEntry[]> =>
    this.r.scanEntries(o);
  markDeleted = (id: string): Promise<void> => this.write((tx) => tx.markDeleted(id));
  markSuperseded = (id: string, by: string): Promise<void> =>
    this.write((tx) => tx.markSuperseded(id, by));
  extendExpiry = (id: string, ns: bigint): Promise<bigint | undefined> =>
    this.write((tx) => tx.extendExpiry(id, ns));
  searchEntries = (q: SearchQuery): Promise<SearchHit[]> => this.r.searchEntries(q);
  listEntriesFor = (o: Parameters<StorageBackend['listEntriesFor']>[0]): Promise<StoredEntry[]> =>
    this.r.listEntriesFor(o);
  findEntriesBy = (o: {
    uri?: string;
    srcHash?: string;
    memoryId?: string;
    includeDeleted?: boolean;
  }): Promise<StoredEntry[]> => this.r.findEntriesBy(o);
  countEntries = (o?: { nowNs?: bigint }): Promise<TierCount[]> => this.r.countEntries(o);
  browseEntries = (q: BrowseQuery): Promise<StoredEntry[]> => this.r.browseEntries(q);
  consumeQuota = (
    p: string,
    t: SourceTier,
    d: string,
    l: number,
  ): Promise<{ ok: boolean; used: number }> => this.write((tx) => tx.consumeQuota(p, t, d, l));
  consumeQuotas = (ds: readonly QuotaDemand[]): Promise<boolean[]> =>
    this.write((tx) => (tx as MemoryTx).consumeQuotas(ds));
  quotaUsed = (p: string, t: SourceTier, d: string): Promise<number> => this.r.quotaUsed(p, t, d);
  enqueueReview = (r: Parameters<StorageBackend['enqueueReview']>[0]): Promise<void> =>
    this.write((tx) => tx.enqueueReview(r));
  listReviews = (o?: {
    status?: ReviewRecord['status'];
    limit?: number;
  }): Promise<ReviewRecord[]> => this.r.listReviews(o);
  getReview = (id: string): Promise<ReviewRecord | undefined> => this.r.getReview(id);
  decideReview = (id: string, d: ReviewDecision): Promise<ReviewRecord> =>
    this.write((tx) => tx.decideReview(id, d));
  appendAudit = (e: AuditEvent): Promise<void> => this.write((tx) => tx.appendAudit(e));
  appendAudits = (es: readonly AuditEvent[]): Promise<void> =>
    this.write(async (tx) => {
      if (tx.appendAudits === undefined) throw new Error('memory tx without appendAudits');
      await tx.appendAudits(es);
    });
  listAudit = (o: AuditQuery): Promise<AuditEvent[]> => this.r.listAudit(o);
  putApiKey = (k: {
    principalId: string;
    keyHash: Uint8Array;
    createdAtNs: bigint;
  }): Promise<void> => this.write((tx) => tx.putApiKey(k));
  findApiKey = (h: Uint8Array): Promise<string | undefined> => this.r.findApiKey(h);
  listApiKeys = (): Promise<StoredApiKey[]> => this.r.listApiKeys();
  revokeApiKey = (h: Uint8Array): Promise<void> => this.write((tx) => tx.revokeApiKey(h));

  /** Close (root only; closing a principal view is a no-op). Waits for queued writers. */
  async close(): Promise<void> {
    if (this.principal !== undefined || this.sh.closed) return;
    await this.sh.chain;
    this.sh.closed = true;
    this.sh.journal?.close();
  }
}
