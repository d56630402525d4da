/**
 * An in-test MemoryApi: plain maps, deterministic ids and times, principal-scoped, feeding a
 * MetricsSink the way the real Memory will. Not a model of signing or the log — only of the
 * contract's shapes and scoping, which is what the HTTP layer needs.
 */
import { MemwardenError } from '../../src/core/errors.js';
import type { SourceTier } from '../../src/core/trust.js';
import { Gate } from '../../src/core/gate/index.js';
import { DEFAULT_POLICY } from '../../src/memory/action/default-policy.js';
import type {
  ActionVerdict,
  CheckActionInput,
  AddOptions,
  AddResult,
  CheckpointView,
  ConsistencyProofView,
  GateDecision,
  HistoryEvent,
  InclusionProofView,
  InvestigatedEntry,
  InvestigateOptions,
  InvestigationPage,
  LineageGraph,
  MemoryApi,
  PrincipalInfo,
  MemoryRecord,
  ReviewItem,
  SearchOptions,
  SearchResult,
  UnverifiedEntry,
  ChatTurn,
  ConversationOptions,
  ConversationResult,
} from '../../src/memory/api.js';
import type { MetricsSink } from '../../src/ports/metrics.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const uuid = (n: number): string => `00000000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;

export class FakeMemory implements MemoryApi {
  readonly records = new Map<string, MemoryRecord>();
  readonly deleted = new Set<string>();
  readonly events = new Map<string, HistoryEvent[]>();
  readonly reviews = new Map<string, ReviewItem>();
  /** Every call, by method name, to assert that nothing was written. */
  readonly calls: { method: string; args: unknown[] }[] = [];
  /** Throw this from the next call (error-mapping tests). */
  failNext: unknown;
  #n = 0;
  #metrics: MetricsSink | undefined;

  constructor(metrics?: MetricsSink) {
    this.#metrics = metrics;
    metrics?.setEntriesCollector(() => {
      const counts: Partial<Record<SourceTier, number>> = {};
      for (const r of this.#live()) counts[r.tier] = (counts[r.tier] ?? 0) + 1;
      return counts;
    });
  }

  #enter(method: string, ...args: unknown[]): void {
    this.calls.push({ method, args });
    if (this.failNext !== undefined) {
      const e = this.failNext;
      this.failNext = undefined;
      throw e;
    }
  }

  #live(): MemoryRecord[] {
    return [...this.records.values()].filter((r) => !this.deleted.has(r.id));
  }

  #visible(id: string, principal: string): MemoryRecord | undefined {
    const r = this.records.get(id);
    return r !== undefined && !this.deleted.has(id) && (r.ns === principal || r.tier === 'OPERATOR')
      ? r
      : undefined;
  }

  #must(id: string, principal: string): MemoryRecord {
    const r = this.#visible(id, principal);
    if (r === undefined) throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory');
    return r;
  }

  #make(content: string, opts: AddOptions, supersedes?: string): MemoryRecord {
    const n = ++this.#n;
    const id = uuid(n);
    const r: MemoryRecord = {
      id,
      versionId: id,
      content,
      kind: opts.kind ?? 'fact',
      tier: opts.tier ?? 'USER_OBSERVED',
      label: opts.tier?.startsWith('EXTERNAL') === true ? 'EXTERNAL' : 'TRUSTED',
      authority: 'A',
      ns: opts.principal,
      writer: opts.principal,
      kid: '0123456789abcdef',
      ...(opts.source === undefined ? {} : { source: opts.source }),
      parents: opts.parents ?? [],
      weights: opts.weights ?? [],
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
      createdAtNs: `${BigInt(Date.UTC(2026, 0, 1, 0, 0, n)) * 1_000_000n}`,
      ...(supersedes === undefined ? {} : { supersedes }),
      leafIndex: n - 1,
      leafData: b64(`leaf-${id}`),
      bytes: b64(`cbor-${id}`),
    };
    this.records.set(id, r);
    this.#metrics?.recordWrite(r.tier);
    return r;
  }

  add(messages: readonly ChatTurn[], opts: ConversationOptions): Promise<ConversationResult>;
  add(content: string, opts: AddOptions): Promise<AddResult>;
  async add(
    input: string | readonly ChatTurn[],
    o: AddOptions | ConversationOptions,
  ): Promise<AddResult | ConversationResult> {
    if (typeof input !== 'string') {
      const results = [];
      for (const [i, m] of input.entries()) {
        const r = await this.add(m.content, o as AddOptions);
        if (r.status === 'stored') results.push({ event: r.event, memory: r.memory, message: i });
      }
      return { status: 'stored', results, held: [] };
    }
    const content = input;
    const opts = o as AddOptions;
    this.#enter('add', content, opts);
    if (/ignore previous instructions/i.test(content)) {
      this.#metrics?.recordSignal('instruction_marker');
      this.#metrics?.recordRejected('instruction_marker');
      const id = `rev-${++this.#n}`;
      this.reviews.set(id, {
        id,
        principal: opts.principal,
        content,
        tier: opts.tier ?? 'USER_OBSERVED',
        reasons: ['instruction_marker'],
        status: 'pending',
        createdAt: '2026-01-01T00:00:00.000Z',
      });
      return { status: 'pending_review', reviewId: id, reasons: ['instruction_marker'] };
    }
    const memory = this.#make(content, opts);
    this.events.set(memory.id, [
      { action: 'add', id: memory.id, actor: opts.principal, at: memory.createdAt, memory },
    ]);
    return { status: 'stored', event: 'ADD', memory };
  }

  async search(query: string, opts: SearchOptions): Promise<SearchResult> {
    this.#enter('search', query, opts);
    const words = query.toLowerCase().split(/\W+/).filter(Boolean);
    const hits = this.#live()
      .filter((r) => r.ns === opts.principal || r.tier === 'OPERATOR')
      .map((r) => ({
        memory: r,
        score: words.filter((w) => r.content.toLowerCase().includes(w)).length / words.length,
        untrusted: false,
      }))
      .filter((h) => h.score > (opts.threshold ?? 0))
      .sort((a, b) => b.score - a.score)
      .slice(0, opts.limit ?? 10);
    for (const h of hits) this.#metrics?.recordRead(h.memory.tier);
    const seal = 'ab'.repeat(16);
    const context = hits
      .map(
        (h) =>
          `[BEGIN MEMORY entry_id=${h.memory.id} trust=${h.memory.label} seal=${seal}]\n${h.memory.content}\n[END MEMORY seal=${seal}]`,
      )
      .join('\n');
    return { results: hits, context, seal, dropped: [] };
  }

  async get(id: string, opts: { principal: string }): Promise<MemoryRecord | undefined> {
    this.#enter('get', id, opts);
    const r = this.#visible(id, opts.principal);
    if (r !== undefined) this.#metrics?.recordRead(r.tier);
    return r;
  }

  async getAll(opts: {
    principal: string;
    limit?: number;
    offset?: number;
  }): Promise<MemoryRecord[]> {
    this.#enter('getAll', opts);
    const mine = this.#live().filter((r) => r.ns === opts.principal);
    return mine.slice(opts.offset ?? 0, (opts.offset ?? 0) + (opts.limit ?? 100));
  }

  async getAllChecked(opts: {
    principal: string;
    limit?: number;
    offset?: number;
  }): Promise<{ memories: MemoryRecord[]; unverified: UnverifiedEntry[] }> {
    return { memories: await this.getAll(opts), unverified: [] };
  }

  async update(
    id: string,
    content: string,
    opts: { principal: string; reason?: string },
  ): Promise<MemoryRecord> {
    this.#enter('update', id, content, opts);
    const old = this.#must(id, opts.principal);
    const next = this.#make(content, { principal: opts.principal, tier: old.tier }, old.id);
    this.deleted.add(old.id);
    const ev = this.events.get(old.id) ?? [];
    ev.push({
      action: 'update',
      id: next.id,
      actor: opts.principal,
      at: next.createdAt,
      ...(opts.reason === undefined ? {} : { reason: opts.reason }),
      memory: next,
    });
    this.events.set(next.id, ev);
    return next;
  }

  async renew(id: string, opts: { principal: string; ttlMs?: number }): Promise<MemoryRecord> {
    this.#enter('renew', id, opts);
    return this.#must(id, opts.principal);
  }

  async delete(id: string, opts: { principal: string; reason: string }): Promise<void> {
    this.#enter('delete', id, opts);
    this.#must(id, opts.principal);
    this.deleted.add(id);
    this.events.get(id)?.push({
      action: 'delete',
      id,
      actor: opts.principal,
      at: '2026-01-02T00:00:00.000Z',
      reason: opts.reason,
    });
  }

  async deleteAll(opts: { principal: string; reason?: string }): Promise<number> {
    this.#enter('deleteAll', opts);
    const mine = this.#live().filter((r) => r.ns === opts.principal);
    for (const r of mine) this.deleted.add(r.id);
    return mine.length;
  }

  async history(id: string, opts: { principal: string }): Promise<HistoryEvent[]> {
    this.#enter('history', id, opts);
    const r = this.records.get(id);
    if (r === undefined || r.ns !== opts.principal)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory');
    return this.events.get(id) ?? [];
  }

  async purge(opts: { principal: string; source?: string; contentHash?: string }): Promise<number> {
    this.#enter('purge', opts);
    const hit = this.#live().filter(
      (r) => r.ns === opts.principal && opts.source !== undefined && r.source === opts.source,
    );
    for (const r of hit) this.deleted.add(r.id);
    return hit.length;
  }

  async proof(id: string, opts: { principal: string }): Promise<InclusionProofView> {
    this.#enter('proof', id, opts);
    const r = this.#must(id, opts.principal);
    return {
      leafIndex: r.leafIndex,
      treeSize: this.#n,
      leafHash: b64('h'.repeat(32)),
      hashes: [b64('x'.repeat(32))],
      checkpoint: await this.#cp(),
    };
  }

  async #cp(): Promise<CheckpointView> {
    return {
      origin: 'memwarden.test/log',
      size: this.#n,
      root: b64('r'.repeat(32)),
      note: `memwarden.test/log\n${this.#n}\n${b64('r'.repeat(32))}\n\n— sig\n`,
    };
  }

  async checkpoint(): Promise<CheckpointView> {
    this.#enter('checkpoint');
    return this.#cp();
  }

  async consistency(from: number, to: number): Promise<ConsistencyProofView> {
    this.#enter('consistency', from, to);
    if (to > this.#n) throw new MemwardenError('LOG_SIZE_INVALID', 'size outside the log');
    return { from, to, hashes: [b64('c'.repeat(32))], checkpoint: await this.#cp() };
  }

  async listReviews(opts: {
    principal: string;
    status?: ReviewItem['status'];
  }): Promise<ReviewItem[]> {
    this.#enter('listReviews', opts);
    return [...this.reviews.values()].filter(
      (r) =>
        r.principal === opts.principal && (opts.status === undefined || r.status === opts.status),
    );
  }

  async decideReview(
    id: string,
    decision: 'approve' | 'reject',
    opts: { reviewer: string; reason?: string },
  ): Promise<ReviewItem> {
    this.#enter('decideReview', id, decision, opts);
    const r = this.reviews.get(id);
    if (r === undefined) throw new MemwardenError('STORAGE_NOT_FOUND', 'no such review');
    if (r.status !== 'pending') throw new MemwardenError('REVIEW_NOT_PENDING', 'already decided');
    let memoryId: string | undefined;
    if (decision === 'approve')
      memoryId = this.#make(r.content, { principal: r.principal, tier: r.tier }).id;
    const next: ReviewItem = {
      ...r,
      status: decision === 'approve' ? 'approved' : 'rejected',
      decidedBy: opts.reviewer,
      ...(memoryId === undefined ? {} : { memoryId }),
    };
    this.reviews.set(id, next);
    return next;
  }

  /** The real pure gate on the default policy (no store, so no parentless lookups). */
  readonly #gate = Gate.fromDocument(DEFAULT_POLICY);
  async checkAction(input: CheckActionInput): Promise<ActionVerdict> {
    this.#enter('checkAction', input);
    return this.#gate.decide(input);
  }

  async whoami(principal: string): Promise<PrincipalInfo> {
    this.#enter('whoami', principal);
    return { id: principal, kind: 'user', name: principal };
  }

  async ancestors(id: string, opts: { principal: string }): Promise<LineageGraph> {
    this.#enter('ancestors', id, opts);
    const memory = this.#must(id, opts.principal);
    return {
      root: id,
      nodes: [{ id, depth: 0, state: 'verified', status: 'live', memory }],
      edges: [],
      truncated: false,
    };
  }

  /** The caller's own live records, newest first (a model of the contract's shape and scope only). */
  async investigate(opts: InvestigateOptions): Promise<InvestigationPage> {
    this.#enter('investigate', opts);
    if (opts.owner !== undefined && opts.owner !== opts.principal)
      throw new MemwardenError(
        'AUTH_FORBIDDEN',
        "only an operator may list another principal's entries",
      );
    const rows = this.#live()
      .filter((r) => r.ns === opts.principal)
      .reverse()
      .slice(0, opts.limit ?? 50)
      .map((memory) => ({
        id: memory.id,
        leafIndex: memory.leafIndex,
        status: 'live' as const,
        verified: true,
        memory,
      }));
    return { rows, scope: 'own' };
  }

  async investigateEntry(id: string, opts: { principal: string }): Promise<InvestigatedEntry> {
    this.#enter('investigateEntry', id, opts);
    const memory = this.#must(id, opts.principal);
    return {
      row: { id, leafIndex: memory.leafIndex, status: 'live', verified: true, memory },
      scope: 'own',
    };
  }

  async gateDecisions(opts: { principal: string; limit?: number }): Promise<GateDecision[]> {
    this.#enter('gateDecisions', opts);
    return [];
  }

  async graphSearch(): Promise<never> {
    throw new MemwardenError('INPUT_INVALID', 'the fake memory has no graph');
  }

  async verifierKey(): Promise<string> {
    this.#enter('verifierKey');
    return 'memwarden.test/log+00000000+AQ==';
  }

  // Identity administration is tested on the real Memory (test/server/admin.test.ts).
  #noAdmin(method: string): never {
    this.#enter(method);
    throw new Error(`FakeMemory does not implement ${method}`);
  }
  async actFor(): Promise<string> {
    return this.#noAdmin('actFor');
  }
  async adminCreatePrincipal(): Promise<never> {
    return this.#noAdmin('adminCreatePrincipal');
  }
  async adminListPrincipals(): Promise<never> {
    return this.#noAdmin('adminListPrincipals');
  }
  async adminIssueKey(): Promise<never> {
    return this.#noAdmin('adminIssueKey');
  }
  async adminListKeys(): Promise<never> {
    return this.#noAdmin('adminListKeys');
  }
  async adminRevokeKey(): Promise<never> {
    return this.#noAdmin('adminRevokeKey');
  }
  async adminRotateKey(): Promise<never> {
    return this.#noAdmin('adminRotateKey');
  }

  async close(): Promise<void> {
    this.#enter('close');
  }
}
