/**
 * @module memory/memory
 * `Memory`: the Mem0-shaped library API over the ledger (write path, signatures, log) and a
 * principal-scoped storage view (read path under row-level security). Every call names its
 * principal; reads run through `storage.asPrincipal(principal)`, so isolation is enforced
 * by the database, and every returned entry is re-verified (MemLineage §3.6).
 *
 * This class is the facade and the wiring; the work lives in its parts: `write-path.ts`
 * (add, screening, hold, commit), `search.ts` (the read path), `versions.ts` (update,
 * delete, history, purge), `reviews.ts` (the review queue), `principals.ts` (principals and
 * API keys), `proofs.ts` (inclusion / consistency proofs), `actions.ts` (the action gate)
 * and `context.ts` (the shared storage view, audit trail and ids).
 */
import { fromBase64 } from '../core/bytes.js';
import type { PrincipalKind } from '../core/trust.js';
import type { Clock, RandomSource } from '../ports/clock.js';
import type { Embedder } from '../ports/embedder.js';
import { type MetricsSink, noopMetrics } from '../ports/metrics.js';
import type { RootStorage, StorageBackend, StoredEntry } from '../ports/storage.js';
import type { LineageOptions } from '../core/lineage/index.js';
import { ActionChecker, gateFor } from './action/actions.js';
import { formatVerifierKey } from '../core/merkle/index.js';
import { MemwardenError } from '../core/errors.js';
import { gateDecisions, lineageOf } from './read/inspect.js';
import { Investigator } from './read/investigate.js';
import type {
  ActionVerdict,
  AddOptions,
  AddResult,
  ActFor,
  AdminPrincipal,
  ApiKeyInfo,
  ApiKeyScope,
  IssuedApiKey,
  CheckActionInput,
  ChatTurn,
  CheckpointView,
  ConversationOptions,
  ConversationResult,
  ConsistencyProofView,
  GateDecision,
  GetAllOptions,
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
} from './api.js';
import { type RetentionConfig, retentionConfig } from './config.js';
import { MemoryContext } from './context.js';
import type { Ledger } from './log/ledger.js';
import { type LedgerView, ledgerView } from './log/view.js';
import { type StoreAuditOptions, type StoreAuditReport, auditStore } from './log/store-audit.js';
import { GraphMemory } from './graph/graph.js';
import { KnowledgeGraphTools } from './graph/knowledge-graph.js';
import { PrincipalGraph } from './graph/principal-graph.js';
import { toHex } from '../core/bytes.js';
import type { PrincipalRecord } from '../ports/storage.js';
import { type WriteScreen, MarkerScreen } from './detect/screen.js';
import { SearchEngine } from './read/search.js';
import type { LlmProvider } from '../ports/llm.js';
import type { DetectionPipeline } from './detect/pipeline.js';
import { SharedDetection, callerVector, flaggedOf } from './write/write.js';
import {
  AutoDetection,
  type AutoDetectionOptions,
  type DetectionHooks,
} from './detect/calibration.js';
import { type AttributionSpec, LineageWriter, lineageConfig } from './write/lineage.js';
import { consistencyProof, currentCheckpoint, inclusionProof } from './log/proofs.js';
import { Principals } from './identity/principals.js';
import { readModelOf } from './read/read-model.js';
import { ReviewQueue } from './write/reviews.js';
import { Versions } from './write/versions.js';
import { WritePath } from './write/write-path.js';
import { LlmConsolidation } from './write/consolidate.js';
import { ConversationWriter } from './write/conversation.js';
import { readFilter } from './scope.js';
import { andFilters, parseFilter } from '../core/filter/index.js';
import type { FloodPolicy } from '../core/smsr/flood.js';
import {
  DEFAULT_GRAPH_AUTH_POLICY,
  type GraphAuthPolicy,
  GraphSearch,
  type GraphSearchOptions,
  type GraphSearchResult,
  graphAuthority,
} from './graph/search.js';

export interface MemoryOptions {
  readonly ledger: Ledger;
  /**
   * The store. A storage from `withReadModel` (what `Memory.open` gives on an exclusive backend)
   * carries the in-process read model that serves vector search (ADR 0018); the ledger must
   * then be opened on this same storage.
   */
  readonly storage: RootStorage;
  readonly embedder: Embedder;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly metrics?: MetricsSink;
  readonly retention?: RetentionConfig;
  readonly screens?: readonly WriteScreen[];
  /**
   * The lineage operating point (τ, fallback, strict knobs; MemLineage §3.5, §6.6). Default
   * `DEFAULT_LINEAGE_OPTIONS` (τ = 0, Trusted fallback); `strictLineageOptions(τ)` for §6.6.
   */
  readonly lineage?: LineageOptions;
  /** The attribution algorithm (§3.5): 'coarse' (default), `{ judge }`, `{ scripted }`, or one. */
  readonly attribution?: AttributionSpec;
  /** Turn auto-attribution (§4.4) off: only explicitly named parents count. */
  readonly explicitParentsOnly?: boolean;
  /** The gate's policy document (object or JSON text); default `DEFAULT_POLICY`. */
  readonly policy?: unknown;
  /**
   * A detection pipeline used as given and shared by every principal (issue 7): screens every
   * write (`screenWrite`; flagged → review queue) and scores every retrieved entry
   * (`scoreRead`; flagged → dropped with `POISONING_SIGNAL`). Exclusive with `autoDetection`.
   */
  readonly detection?: DetectionPipeline;
  /** Benign reference texts the shared `detection` is calibrated on before its first use. */
  readonly detectionBenign?: readonly string[];
  /**
   * Per-principal detection that calibrates itself from the principal's own verified memories
   * and query history (ADR 0016; `Memory.open`'s default). Absent, and no `detection`: only
   * `screens` run at write time and reads are not scored.
   */
  readonly autoDetection?: AutoDetectionOptions;
  /**
   * The extraction model (article Pattern 3): untrusted content becomes short facts, each
   * stored as its own entry. Absent: long untrusted content is held (`extraction_required`).
   */
  readonly extractor?: LlmProvider;
  /**
   * The LLM consolidation step (Mem0's update step, issue 20): decides ADD / UPDATE / NOOP for
   * a write against its nearest memories. Absent: the deterministic default. The tier rule
   * holds either way (`write/consolidate.ts`).
   */
  readonly consolidator?: LlmProvider;
  /**
   * What counts as authenticated graph structure for AuthSelect (issue 19). Default
   * `DEFAULT_GRAPH_AUTH_POLICY`: writer kind operator / user / agent AND a trusted lineage label.
   */
  readonly graphAuthPolicy?: GraphAuthPolicy;
  /**
   * Flood control on the write path (issue 19, ADR 0056): default `DEFAULT_FLOOD_POLICY` (two
   * mutually similar writes per hour per bucket at cosine ≥ 0.80); null turns it off.
   */
  readonly floodControl?: FloodPolicy | null;
}

/** Most principals' graphs kept folded at once (least recently used dropped first). */
const MAX_GRAPHS = 1_000;
const NO_VECTOR = new Float32Array(0);

export class Memory implements MemoryApi {
  /**
   * The ledger's read-and-administer view: verification, proofs, checkpoints, principal and key
   * reads, rotation and revocation — nothing that writes (ADR 0029). Every write goes through
   * this class's methods, which run the write path.
   */
  readonly ledger: LedgerView;
  readonly #ledger: Ledger;
  readonly #graphs = new Map<string, Promise<PrincipalGraph>>();
  private readonly ctx: MemoryContext;
  private readonly search_: SearchEngine;
  private readonly lineage: LineageWriter;
  private readonly actions: ActionChecker;
  private readonly writer: WritePath;
  private readonly conversation: ConversationWriter;
  /** The embedder's dimensions: what a caller's vector must have. */
  private readonly dimensions: number;
  private readonly versions: Versions;
  private readonly reviews: ReviewQueue;
  private readonly principals: Principals;
  private readonly detection: DetectionHooks | undefined;
  private readonly investigator: Investigator;
  private readonly graphSearch_: GraphSearch;
  private readonly graphAuthPolicy: GraphAuthPolicy;
  private readonly writerKinds = new Map<string, Promise<PrincipalKind | undefined>>();

  constructor(opts: MemoryOptions) {
    this.#ledger = opts.ledger;
    this.ledger = ledgerView(opts.ledger);
    const readModel = readModelOf(opts.storage);
    if (readModel !== undefined && opts.ledger.storage !== opts.storage) {
      // The model sees only writes made through the storage it observes.
      throw new MemwardenError(
        'INPUT_INVALID',
        'with a read model, the ledger must be opened on the same storage as Memory',
      );
    }
    const ctx = new MemoryContext(
      opts.ledger,
      opts.storage,
      opts.clock,
      opts.random,
      opts.metrics ?? noopMetrics,
      opts.retention ?? retentionConfig(),
      readModel,
    );
    this.ctx = ctx;
    if (opts.detection !== undefined && opts.autoDetection !== undefined) {
      throw new MemwardenError('INPUT_INVALID', 'give either detection or autoDetection, not both');
    }
    const detection: DetectionHooks | undefined =
      opts.detection !== undefined
        ? new SharedDetection(opts.detection, opts.detectionBenign)
        : opts.autoDetection !== undefined
          ? new AutoDetection(ctx, opts.embedder, opts.autoDetection)
          : undefined;
    this.detection = detection;
    const audit = ctx.audit.bind(ctx);
    this.search_ = new SearchEngine({
      ...(detection === undefined ? {} : { detection }),
      ...(readModel === undefined ? {} : { readModel }),
      random: ctx.random,
      ledger: ctx.ledger,
      embedder: opts.embedder,
      clock: ctx.clock,
      metrics: ctx.metrics,
      retention: ctx.retention,
      audit,
    });
    this.lineage = new LineageWriter(
      this.#ledger,
      lineageConfig({
        ...(opts.lineage === undefined ? {} : { options: opts.lineage }),
        ...(opts.attribution === undefined ? {} : { attribution: opts.attribution }),
        ...(opts.explicitParentsOnly === undefined
          ? {}
          : { explicitParentsOnly: opts.explicitParentsOnly }),
      }),
    );
    const lineageOptions = this.lineage.config.options;
    this.actions = new ActionChecker(
      gateFor(opts.policy, lineageOptions),
      this.#ledger,
      audit,
      lineageOptions,
    );
    this.dimensions = opts.embedder.dimensions;
    this.writer = new WritePath(ctx, this.lineage, {
      embedder: opts.embedder,
      screens: opts.screens ?? [new MarkerScreen()],
      detection,
      extractor: opts.extractor,
      consolidation:
        opts.consolidator === undefined ? undefined : new LlmConsolidation(opts.consolidator),
      ...(opts.floodControl === undefined ? {} : { flood: opts.floodControl }),
    });
    this.versions = new Versions(ctx, this.writer);
    const embedder = opts.embedder;
    this.conversation = new ConversationWriter(
      this.writer,
      async (texts) => {
        if (texts.length === 0) return [];
        const t0 = process.hrtime.bigint();
        const vs = await embedder.embed(texts);
        ctx.metrics.observeEmbedding(Number(process.hrtime.bigint() - t0) / 1e9);
        if (vs.length !== texts.length)
          throw new MemwardenError(
            'EMBEDDING_FAILED',
            'embedder returned the wrong number of vectors',
          );
        return vs;
      },
      opts.extractor,
    );
    this.reviews = new ReviewQueue(ctx, this.writer);
    this.principals = new Principals(ctx);
    this.investigator = new Investigator(ctx, opts.embedder);
    this.graphAuthPolicy = opts.graphAuthPolicy ?? DEFAULT_GRAPH_AUTH_POLICY;
    this.graphSearch_ = new GraphSearch({
      random: ctx.random,
      embedder: opts.embedder,
      policy: () => this.actions.gate.policy,
      audit,
    });
    ctx.metrics.setEntriesCollector(async () => {
      const counts = await ctx.storage.countEntries({ nowNs: ctx.clock.nowNs() });
      return Object.fromEntries(counts.map((c) => [c.tier, c.count]));
    });
  }

  private view(principal: string): StorageBackend {
    return this.ctx.view(principal);
  }

  // ---- write path (write-path.ts) ------------------------------------------------------------

  /**
   * Remember `content` (ADD, UPDATE or NOOP: consolidation, issue 20) — or a conversation:
   * `messages` with roles, each turn (or each fact an extraction model finds) through the same
   * write path (`write/conversation.ts`).
   */
  add(messages: readonly ChatTurn[], opts: ConversationOptions): Promise<ConversationResult>;
  add(content: string, opts: AddOptions): Promise<AddResult>;
  async add(
    content: string | readonly ChatTurn[],
    opts: AddOptions | ConversationOptions,
  ): Promise<AddResult | ConversationResult> {
    if (Array.isArray(content)) return this.conversation.add(content, opts as ConversationOptions);
    const o = opts as AddOptions;
    if (o.embedding === undefined) return this.writer.add(content as string, o);
    return this.writer.add(content as string, {
      ...o,
      embedding: callerVector(o.embedding, this.dimensions),
    });
  }

  // ---- read path (search.ts) -----------------------------------------------------------------

  async search(query: string, given: SearchOptions): Promise<SearchResult> {
    const opts: SearchOptions =
      given.embedding === undefined
        ? given
        : { ...given, embedding: callerVector(given.embedding, this.dimensions) };
    const r = await this.search_.search(this.view(opts.principal), query, opts);
    // on_retrieve (§4.4): these hits are the thread's candidate parents for the next write.
    this.lineage.recordRetrieval(
      opts.principal,
      opts.threadId,
      r.results.map((h) => h.memory.versionId),
    );
    return r;
  }

  // ---- action path (actions.ts) --------------------------------------------------------------

  /** The sensitive-action gate (MemLineage §3.7) on a proposed call; every verdict is audited. */
  checkAction(input: CheckActionInput): Promise<ActionVerdict> {
    return this.actions.check(this.view(input.principal), input);
  }

  /** The memory with this id (stable across updates: its current version), or a version by its own id. */
  async get(id: string, opts: { principal: string }): Promise<MemoryRecord | undefined> {
    this.view(opts.principal); // refuses an empty principal
    const stored = await this.versions.resolve(id, opts.principal);
    if (stored === undefined) return undefined;
    // Liveness is decided on the signed records (search.verified), the columns only a cache.
    return this.search_.verified(stored, opts.principal);
  }

  /**
   * The principal's visible live entries (its own and OPERATOR ones), in log order; `source`
   * narrows to one exact source URI (an index lookup, not a scan); `filters`, `runId` and
   * `agentId` as in search, pushed into the database.
   */
  async getAll(opts: GetAllOptions): Promise<MemoryRecord[]> {
    return (await this.getAllChecked(opts)).memories;
  }

  /** {@link getAll}, with the entries that failed verification named (read/investigate.ts). */
  async getAllChecked(
    opts: GetAllOptions,
  ): Promise<{ memories: MemoryRecord[]; unverified: UnverifiedEntry[] }> {
    const limit = Math.min(Math.max(Math.trunc(opts.limit ?? 100), 1), 1000);
    const offset = Math.max(Math.trunc(opts.offset ?? 0), 0);
    if (!Number.isSafeInteger(limit) || !Number.isSafeInteger(offset))
      throw new MemwardenError('INPUT_INVALID', 'limit and offset must be integers');
    const view = this.view(opts.principal);
    const filter = andFilters(
      readFilter(opts),
      opts.source === undefined ? undefined : parseFilter({ source: opts.source }),
    );
    const rows = await view.listEntriesFor({
      limit,
      offset,
      nowNs: this.ctx.clock.nowNs(),
      ...(filter === undefined ? {} : { filter }),
    });
    return this.investigator.checked(opts.principal, rows);
  }

  private isLive(e: StoredEntry): boolean {
    if (e.deleted === true || e.supersededBy !== undefined) return false;
    return e.expiresAtNs === undefined || e.expiresAtNs > this.ctx.clock.nowNs();
  }

  // ---- update, delete, history, purge (versions.ts) ------------------------------------------

  /** A new signed version that supersedes the old one (never a silent overwrite). */
  update(
    id: string,
    content: string,
    opts: {
      principal: string;
      reason?: string;
      ttlMs?: number | null;
      metadata?: Readonly<Record<string, unknown>>;
      eventAt?: string | number | Date;
    },
  ): Promise<MemoryRecord> {
    return this.versions.update(id, content, opts);
  }

  /** Extend an own live entry's lifetime (default: its own signed lifetime again). */
  renew(id: string, opts: { principal: string; ttlMs?: number }): Promise<MemoryRecord> {
    return this.versions.renew(id, opts);
  }

  /** Signed tombstone; the entry disappears from reads, its leaf stays provable. */
  delete(id: string, opts: { principal: string; reason: string }): Promise<void> {
    return this.versions.delete(id, opts);
  }

  deleteAll(opts: { principal: string; reason?: string }): Promise<number> {
    return this.versions.deleteAll(opts);
  }

  history(id: string, opts: { principal: string }): Promise<HistoryEvent[]> {
    return this.versions.history(id, opts);
  }

  /**
   * Failure-mode recovery: tombstone every own entry from a source URI or with a content hash;
   * the number tombstoned. With `allPrincipals: true` an operator purges across every
   * principal (audited, each tombstone signed by the operator); anyone else is `AUTH_FORBIDDEN`.
   */
  async purge(opts: {
    principal: string;
    source?: string;
    contentHash?: string;
    allPrincipals?: boolean;
    reason?: string;
  }): Promise<number> {
    return (await this.versions.purge(opts)).purged;
  }

  /** {@link purge}, with the count per owner. */
  purgeDetailed(opts: {
    principal: string;
    source?: string;
    contentHash?: string;
    allPrincipals?: boolean;
    reason?: string;
  }): Promise<{ purged: number; owners: Record<string, number> }> {
    return this.versions.purge(opts);
  }

  // ---- proofs (proofs.ts) --------------------------------------------------------------------

  async proof(id: string, opts: { principal: string }): Promise<InclusionProofView> {
    const e = await this.versions.resolve(id, opts.principal);
    return inclusionProof(this.ctx, e?.id ?? id, opts.principal);
  }

  checkpoint(): Promise<CheckpointView> {
    return currentCheckpoint(this.ctx);
  }

  consistency(from: number, to: number): Promise<ConsistencyProofView> {
    return consistencyProof(this.ctx, from, to);
  }

  // ---- inspection for review tooling (inspect.ts) ---------------------------------------------

  async whoami(principal: string): Promise<PrincipalInfo> {
    // The kind as the signed registry states it (the console shows it and decides its views by
    // it), never the principals table an edit at rest could change (issue 24, ADR 0033).
    const p = await this.#ledger.getPrincipal(principal);
    if (p === undefined) throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    return { id: p.id, kind: p.kind, name: p.name };
  }

  async ancestors(id: string, opts: { principal: string }): Promise<LineageGraph> {
    const e = await this.versions.resolve(id, opts.principal);
    const g = await lineageOf(
      this.view(opts.principal),
      this.#ledger,
      e?.id ?? id,
      this.ctx.clock.nowNs(),
    );
    if (g === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
    return g;
  }

  async gateDecisions(opts: { principal: string; limit?: number }): Promise<GateDecision[]> {
    this.view(opts.principal); // refuses an empty principal
    // Who sees every principal's decisions: an operator by the signed registry, not the table.
    const kind = await this.#ledger.principalKind(opts.principal);
    return gateDecisions(this.ctx.storage, opts.principal, kind, opts.limit);
  }

  /**
   * Entries newest first in every state, filtered, in keyset pages, each re-verified (a failing
   * one listed with its reason). An operator's call reads across principals — the only such
   * read — and is audited as `operator.investigate`; anyone else's covers its own scope.
   */
  investigate(opts: InvestigateOptions): Promise<InvestigationPage> {
    return this.investigator.investigate(opts);
  }

  /** One entry as the investigation view opens it (an operator: any principal's, audited). */
  async investigateEntry(id: string, opts: { principal: string }): Promise<InvestigatedEntry> {
    const e = await this.investigator.entry(id, opts.principal);
    // Its history in the same scope as the entry (an operator's: any principal's, issue 24 — the
    // console could not show it; the read is covered by the entry's operator.investigate event).
    const scope = e.scope === 'all' ? this.ctx.storage : undefined;
    try {
      // The memory's history by its stable id: a version's row id (what a listing row opens)
      // names one version, and history is the memory's (issue 20).
      const memoryId = e.row.memory?.id ?? id;
      return { ...e, history: await this.versions.history(memoryId, opts, scope) };
    } catch (err) {
      if (err instanceof MemwardenError && err.code === 'STORAGE_NOT_FOUND') return e;
      throw err;
    }
  }

  // ---- graph search (graph/search.ts) ---------------------------------------------------------

  /**
   * Graph search with AuthSelect over the principal's graph (see `MemoryApi.graphSearch`): the
   * same fold the graph tools use (`graph(principal)`), refreshed and read in its per-principal
   * order.
   */
  async graphSearch(query: string, opts: GraphSearchOptions): Promise<GraphSearchResult> {
    const pg = await this.graph(opts.principal);
    return pg.read((g) => this.graphSearch_.search(g, query, opts));
  }

  private writerKind(writer: string): Promise<PrincipalKind | undefined> {
    let k = this.writerKinds.get(writer);
    if (k === undefined) {
      k = this.#ledger.principalKind(writer);
      this.writerKinds.set(writer, k);
      k.catch(() => this.writerKinds.delete(writer));
    }
    return k;
  }

  async verifierKey(): Promise<string> {
    return formatVerifierKey(this.#ledger.log.origin, this.#ledger.checkpointPublicKey);
  }

  // ---- review queue (reviews.ts) -------------------------------------------------------------

  listReviews(opts: { principal: string; status?: ReviewItem['status'] }): Promise<ReviewItem[]> {
    return this.reviews.list(opts);
  }

  /** Approve (replay the held write, marked reviewed-by) or reject; only operators decide. */
  decideReview(
    id: string,
    decision: 'approve' | 'reject',
    opts: { reviewer: string; reason?: string },
  ): Promise<ReviewItem> {
    this.writer.checkReason(opts.reason);
    return this.reviews.decide(id, decision, opts);
  }

  // ---- principals and API keys (principals.ts) -----------------------------------------------

  /**
   * Register a principal (its Ed25519 key held by the host) and issue a bearer API key. The
   * secret is returned once; only its SHA-256 is stored.
   */
  createPrincipal(
    kind: PrincipalKind,
    name: string,
    opts?: { scope?: ApiKeyScope },
  ): Promise<{ id: string; kid: string; apiKey: string; keyId: string; scope: ApiKeyScope }> {
    return this.principals.create(kind, name, opts);
  }

  actFor(platform: string, who: ActFor): Promise<string> {
    return this.principals.actFor(platform, who);
  }

  adminCreatePrincipal(opts: {
    by: string;
    kind: PrincipalKind;
    name: string;
    scope?: ApiKeyScope;
  }): Promise<AdminPrincipal & { kid: string; key: IssuedApiKey }> {
    return this.principals.adminCreate(opts);
  }

  adminListPrincipals(opts: { by: string }): Promise<AdminPrincipal[]> {
    return this.principals.adminList(opts.by);
  }

  adminIssueKey(opts: {
    by: string;
    principal: string;
    scope?: ApiKeyScope;
    revokeOthers?: boolean;
    reason?: string;
  }): Promise<IssuedApiKey> {
    return this.principals.adminIssue(opts);
  }

  adminListKeys(opts: { by: string; principal: string }): Promise<ApiKeyInfo[]> {
    return this.principals.adminListKeys(opts);
  }

  adminRevokeKey(opts: { by: string; keyId: string; reason?: string }): Promise<ApiKeyInfo> {
    return this.principals.adminRevoke(opts);
  }

  adminRotateKey(opts: {
    by: string;
    keyId: string;
  }): Promise<IssuedApiKey & { replaced: string }> {
    return this.principals.adminRotate(opts);
  }

  /**
   * The store's first operator, when it has none (serve's bootstrap, issue 24): `apiKey` when
   * given (e.g. MEMWARDEN_OPERATOR_KEY), else a new key, returned this once. Undefined when an
   * operator exists.
   */
  bootstrapOperator(apiKey?: string): Promise<{ id: string; apiKey: string } | undefined> {
    return this.principals.bootstrapOperator(apiKey);
  }

  /** Issue another API key for an existing principal. */
  issueApiKey(principalId: string): Promise<string> {
    return this.principals.issueApiKey(principalId);
  }

  /**
   * The principal a bearer token belongs to, or undefined. The token is hashed first and the
   * hash looked up exactly, so lookup time does not depend on how much of a secret matched.
   */
  authenticate(token: string): Promise<string | undefined> {
    return this.principals.authenticate(token);
  }

  /** The registered principals (deployment tooling: the CLI, MCP stdio's principal pick). */
  listPrincipals(): Promise<PrincipalRecord[]> {
    return this.#ledger.listPrincipals(); // kinds from the signed registry
  }

  // ---- knowledge graph (graph/principal-graph.ts) ----------------------------------------------

  /**
   * The principal's knowledge graph (the reference MCP memory server's tools): its own graph
   * entries plus OPERATOR ones, written through the write path (screened, held, expiring,
   * counted), read back sealed and scored. Opened (folded) on first use and kept.
   */
  graph(principal: string): Promise<PrincipalGraph> {
    const view = this.view(principal); // refuses an empty principal
    let g = this.#graphs.get(principal);
    if (g !== undefined) {
      this.#graphs.delete(principal); // re-insert: Map order is recency
      this.#graphs.set(principal, g);
      return g;
    }
    const ledger = this.#ledger;
    const ctx = this.ctx;
    const detection = this.detection;
    g = GraphMemory.open({
      source: {
        list: (after, limit) => view.listEntries({ afterLeafIndex: after, limit }),
        verify: (s) => ledger.verifyStored(s),
      },
      writer: { write: (items, w) => this.writer.writeGraph(items, w) },
      clock: ctx.clock,
      // Defence in depth over row-level security: only the principal's own and OPERATOR entries.
      visible: (e) => e.owner === principal || e.tier === 'OPERATOR',
      // What AuthSelect's authenticated subgraph admits (issue 19, ADR 0055).
      authority: async (e) =>
        graphAuthority(this.graphAuthPolicy, e, await this.writerKind(e.writer)),
    }).then(
      (graph) =>
        new PrincipalGraph(principal, graph, new KnowledgeGraphTools(graph, ctx.retention.limits), {
          seal: () => toHex(ctx.random.randomBytes(16)),
          ...(detection === undefined
            ? {}
            : {
                flagged: async (text: string, tier) => {
                  const fs = await detection.scoreRead(principal, {
                    content: text,
                    tier,
                    queryEmbedding: NO_VECTOR,
                    entryEmbedding: NO_VECTOR,
                  });
                  const bad = flaggedOf(
                    fs.filter(
                      (f) =>
                        f.detector !== 'embedding_mismatch' &&
                        f.detector !== 'implausible_similarity',
                    ),
                  );
                  for (const f of bad) ctx.metrics.recordSignal(f.detector);
                  return bad.length > 0;
                },
              }),
        }),
    );
    this.#graphs.set(principal, g);
    g.catch(() => this.#graphs.delete(principal));
    while (this.#graphs.size > MAX_GRAPHS) {
      const oldest = this.#graphs.keys().next();
      if (oldest.done === true) break;
      this.#graphs.delete(oldest.value);
    }
    return g;
  }

  // ---- offline audit (log/store-audit.ts) -------------------------------------------------------

  /** `memwarden audit`: the whole store checked offline (every finding coded). */
  auditStore(opts: StoreAuditOptions = {}): Promise<StoreAuditReport> {
    return auditStore(this.#ledger, opts);
  }

  async close(): Promise<void> {
    try {
      // Buffered detection state (the query history) is persisted before the store closes.
      await this.detection?.close?.();
    } finally {
      await this.#ledger.close();
    }
  }
}

/** Decode a base64 field of a MemoryRecord back to bytes (for proof checking by callers). */
export const recordBytes = (m: MemoryRecord): Uint8Array => fromBase64(m.bytes);
