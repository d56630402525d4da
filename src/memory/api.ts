/**
 * @module memory/api
 * The Memory API contract (Mem0-shaped): what the library's `Memory` class implements and
 * what the HTTP service, the MCP server and the framework adapters call. Plain JSON-able
 * values at this boundary: bytes as base64, nanosecond times as decimal strings.
 */
import type { ParameterSource, Verdict } from '../core/gate/index.js';
import type { Authority, PrincipalKind, SourceTier, TrustLabel } from '../core/trust.js';
import type { JsonObject } from '../core/entry/meta.js';
import type { ReplayMode } from '../core/graph/index.js';
import type {
  ActFor,
  AdminPrincipal,
  ApiKeyInfo,
  ApiKeyScope,
  IssuedApiKey,
} from './identity/principals.js';

export type { ActFor, AdminPrincipal, ApiKeyInfo, ApiKeyScope, IssuedApiKey };

/** One memory as callers see it (the verified view of a signed entry). */
export interface MemoryRecord {
  /**
   * The memory's id: stable across updates (an update is a new signed version of the same
   * memory, ADR 0049). For a memory never updated it is also its version's id.
   */
  readonly id: string;
  /** The id of this signed version (the entry in the log: proofs, lineage and sealed context name it). */
  readonly versionId: string;
  readonly content: string;
  readonly kind: string;
  readonly tier: SourceTier;
  readonly label: TrustLabel;
  readonly authority: Authority;
  /** Principal scope (the RLS tenant). */
  readonly ns: string;
  readonly writer: string;
  readonly kid: string;
  readonly source?: string;
  /** Run / session scope within the principal (Mem0 `runId`). */
  readonly runId?: string;
  /** Agent scope within the principal (Mem0 `agentId`). */
  readonly agentId?: string;
  /** Caller metadata, signed with the memory. */
  readonly metadata?: JsonObject;
  /** When what the memory is about happened (ISO-8601 and exact ns), if given. */
  readonly eventAt?: string;
  readonly eventAtNs?: string;
  readonly parents: readonly string[];
  readonly weights: readonly number[];
  /** ISO-8601 and exact nanoseconds. */
  readonly createdAt: string;
  readonly createdAtNs: string;
  readonly expiresAt?: string;
  readonly supersedes?: string;
  readonly reviewedBy?: string;
  /** Position of the entry's leaf in the log. */
  readonly leafIndex: number;
  /** Base64 of the exact leaf input (id ‖ signature): anyone can recompute the leaf hash. */
  readonly leafData: string;
  /** Base64 of the canonical signed CBOR record. */
  readonly bytes: string;
}

export interface AddOptions {
  /** The authenticated principal writing (and owning) the memory. */
  readonly principal: string;
  /** Source tier; the channel decides it. Default USER_OBSERVED. */
  readonly tier?: SourceTier;
  /** Source URI (e.g. `chat:session-1:turn-4`, `https://…`). */
  readonly source?: string;
  readonly kind?: string;
  /**
   * Explicit parents (MemLineage §3.5): entries that were in the model's context when this
   * content was written. Each must load and verify for this principal (`LINEAGE_INVALID`
   * otherwise); the entry's label is propagated from their verified labels (Equation (1)).
   * They are ADDED to the parents auto-attribution finds (the last retrieval of `threadId`, or
   * with `fromLastRetrieval`): a caller's lineage can only add taint, never remove it.
   */
  readonly parents?: readonly string[];
  /**
   * One weight in [0, 1] per explicit parent. A weight below the attribution algorithm's is
   * raised to it (a named parent counts at least as much as the algorithm says).
   */
  readonly weights?: readonly number[];
  /**
   * The conversation thread whose last retrieval is this write's candidate parent set
   * (auto-attribution, §4.4). Without a thread (and without `fromLastRetrieval`) no earlier
   * search becomes a parent.
   */
  readonly threadId?: string;
  /**
   * Derived from the principal's last retrieval made without a `threadId`: its hits become
   * parents (auto-attribution for callers that do not use threads). Default false.
   */
  readonly fromLastRetrieval?: boolean;
  /**
   * An operator's override: take `parents` / `weights` exactly as given (no auto-attribution,
   * no floor). Only an `operator` principal may (`AUTH_FORBIDDEN` otherwise); audited as
   * `lineage.override`.
   */
  readonly lineageOverride?: boolean;
  /**
   * The content was derived by the model. A derived write with no (strong) parent takes the
   * no-strong-parent fallback label (§3.5) instead of its tier's base label.
   */
  readonly derived?: boolean;
  /** A summary over summaries: uses the lower multi-hop τ when configured (§6.6). */
  readonly multiHop?: boolean;
  /** Derivation step k ≥ 1 for a scripted attribution schedule (default: from the parents). */
  readonly step?: number;
  /** Override the tier's default TTL, in milliseconds (null: never expires). */
  readonly ttlMs?: number | null;
  /** A precomputed embedding (384-d for the default model); computed if absent. */
  readonly embedding?: Float32Array;
  /**
   * Store untrusted (EXTERNAL_*) content as given instead of extracting short facts from it
   * (article Pattern 3: an explicit opt-out). Screening and near-duplicate checks still apply.
   */
  readonly verbatim?: boolean;
  /**
   * Caller metadata (a JSON object), signed with the memory (entry v2) and filterable
   * (`filters` of search and getAll). `undefined` properties are dropped, −0 is 0.
   */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /**
   * When what the memory is about happened (ISO 8601, epoch ms or a Date) — distinct from
   * when it was written; filterable (`eventAt`) and used by recency-aware ranking.
   */
  readonly eventAt?: string | number | Date;
  /** Run / session scope within the principal (Mem0 `runId`). */
  readonly runId?: string;
  /** Agent scope within the principal (Mem0 `agentId`). */
  readonly agentId?: string;
  /**
   * The write is an addressed item (a key-value store's put: `source` is its key): its identity
   * is its address, so the dedupe stage — near-duplicate refusal and consolidation (ADD / UPDATE /
   * NOOP) alike — does not apply: a put under one key never updates another key's item.
   * Screening, quota and signing still do.
   */
  readonly keyed?: boolean;
}

/**
 * What an add did (Mem0's events): `ADD` a new memory; `UPDATE` a new signed version of an
 * existing memory (same `id`, `previous` is the version it supersedes); `NOOP` the content is
 * already remembered (`memory` is the existing record, nothing was written).
 */
export type AddEvent = 'ADD' | 'UPDATE' | 'NOOP';

/** Which parents a write used and why (issue 24: users see lineage coming). */
export interface LineageReport {
  readonly parents: readonly string[];
  readonly weights: readonly number[];
  /** The label that goes (or went) into the signed entry. */
  readonly label: TrustLabel;
  /**
   * `none` (no parents), `explicit` (named by the caller), `retrieval` (the recorded retrieval
   * of `thread`), `explicit+retrieval`, or `override` (an operator's, audited).
   */
  readonly basis: 'none' | 'explicit' | 'retrieval' | 'explicit+retrieval' | 'override';
  /** The parents taken from the recorded retrieval. */
  readonly autoParents: readonly string[];
  /** The thread whose retrieval was consulted (`''`: the no-thread retrieval), if any. */
  readonly thread?: string;
  /** The caller's parents / weights were raised to the floor (lineage only adds taint). */
  readonly raised: boolean;
  /** The same, in words. */
  readonly reason: string;
}

/** Result of an add: committed, or held for review (never silently dropped). */
export type AddResult =
  | {
      readonly status: 'stored';
      /** What happened to `memory` (consolidation, issue 20). */
      readonly event: AddEvent;
      /** The (first) stored memory. */
      readonly memory: MemoryRecord;
      /** `UPDATE`: the version superseded (its content is the previous value). */
      readonly previous?: MemoryRecord;
      /**
       * A contradiction that was not a supersession: `memory` was stored beside `with`, a
       * memory of a higher tier that a lower tier may not replace (issue 20's security rule).
       */
      readonly conflict?: { readonly with: string; readonly reason: 'lower_tier' };
      /** Further facts stored from the same content by extraction (Pattern 3), if any. */
      readonly extra?: readonly MemoryRecord[];
      /** Review ids of extracted facts that were held for review, if any. */
      readonly heldFacts?: readonly string[];
      /** Which parents the write used and why. */
      readonly lineage?: LineageReport;
    }
  | {
      readonly status: 'pending_review';
      readonly reviewId: string;
      readonly reasons: readonly string[];
      /** Which parents the write would use and why. */
      readonly lineage?: LineageReport;
    };

export interface SearchOptions {
  readonly principal: string;
  /** Research mode admits EXTERNAL_* tiers, marked untrusted (article Pattern 2). */
  readonly mode?: 'normal' | 'research';
  /** Restrict further to these tiers. */
  readonly allowTiers?: readonly SourceTier[];
  readonly limit?: number;
  /** Minimum score in [0, 1]. */
  readonly threshold?: number;
  /**
   * Mem0-style filters (`core/filter`): `{ key: value }` on metadata and on `tier`, `kind`,
   * `source`, `runId`, `agentId`, `createdAt`, `eventAt`; operators `eq ne in nin gt gte lt lte
   * contains icontains`, `'*'` (exists), `AND` / `OR` / `NOT`. Applied before ranking.
   */
  readonly filters?: Readonly<Record<string, unknown>>;
  /** Only memories of this run / session scope (AND-ed with `filters`). */
  readonly runId?: string;
  /** Only memories of this agent scope (AND-ed with `filters`). */
  readonly agentId?: string;
  /**
   * 'hybrid' (default: dense and BM25 scores fused, ADR 0050), 'vector' or 'lexical'.
   */
  readonly ranking?: 'vector' | 'lexical' | 'hybrid';
  /**
   * Recency-aware ranking: a hit's score is multiplied by 2^(−age / halfLifeMs), its age taken
   * from its event time (else its write time) to now. Absent: no recency weight.
   */
  readonly recency?: { readonly halfLifeMs: number };
  /** The conversation thread; the retrieval is remembered per (principal, thread) (§4.4). */
  readonly threadId?: string;
  /**
   * A precomputed query embedding from the same model as the store's (the caller embedded the
   * query itself); the query text is still required for lexical / hybrid ranking and audit.
   * Absent: the memory's embedder embeds `query` (cached per distinct query).
   */
  readonly embedding?: Float32Array;
  /**
   * Renew-on-use for the hits (default true). False: a read that must not move any expiry
   * (a store whose items keep the TTL their writer gave them unless asked to refresh).
   */
  readonly renew?: boolean;
  /**
   * Certified smoothed retrieval (SMSR Algorithm 1, issue 19): retrieve the top-m verified
   * memories, draw `runs` independent uniform k-subsets of them from the host's CSPRNG and return
   * each as its own sealed context (`SearchResult.smoothing`), with the Theorem 2 certificate for
   * the pool actually retrieved. Give the model each ablated context in turn, judge each answer,
   * and aggregate with `voteSmoothed` — never prompt over the whole pool. `limit` is ignored.
   */
  readonly smoothing?: SmoothingOptions;
}

/**
 * How to smooth a search: an explicit pool size `m`, or a target `delta` for an adversary budget
 * `t` from which the planner picks the smallest m (SMSR §VII-J). `k` entries per ablated context
 * (default 5), `runs` contexts (default 5; odd, see core/smsr/certificate), `t` the number of
 * adversarial entries the reported certificate assumes may sit in the pool (default 1).
 */
export type SmoothingOptions =
  | {
      readonly m: number;
      readonly k?: number;
      readonly runs?: number;
      readonly t?: number;
      readonly delta?: undefined;
    }
  | {
      readonly delta: number;
      readonly t: number;
      readonly k?: number;
      readonly runs?: number;
      readonly m?: undefined;
    };

/** Theorem 2's certificate as JSON (the exact rational as decimal strings). */
export interface SmoothingCertificate {
  /** Adversarial entries assumed in the pool (clamped to the pool size). */
  readonly t: number;
  readonly m: number;
  readonly k: number;
  readonly runs: number;
  /** P[one ablated context holds no adversarial entry]. */
  readonly pClean: number;
  /** Upper bound on P[the majority verdict is malicious] (rounded down from `exact`). */
  readonly delta: number;
  /** δ exactly: numerator / denominator. */
  readonly exact: { readonly num: string; readonly den: string };
  /** Runs a majority needs: ⌈runs/2⌉. */
  readonly threshold: number;
}

/** One ablated context: k of the pool's memories under their own seal. */
export interface SmoothedContext {
  readonly ids: readonly string[];
  /** Sentinel-delimited segments (as `SearchResult.context`), for one model call. */
  readonly context: string;
  readonly seal: string;
}

/** What a smoothed search adds to its result. */
export interface SmoothingResult {
  /** The parameters used: `m` as asked or as planned from `target`. */
  readonly m: number;
  readonly k: number;
  readonly runs: number;
  readonly t: number;
  /** The δ the planner was asked for (only when `delta` was given). */
  readonly target?: number;
  /** Verified memories in the pool (≤ m; the certificate is for this size). */
  readonly poolSize: number;
  /** Theorem 2 for (t, poolSize, min(k, poolSize), runs); absent when the pool is empty. */
  readonly certificate?: SmoothingCertificate;
  /**
   * The certificate holds as asked: a non-empty pool and, with a `target`, δ ≤ target (a pool
   * smaller than the planned m weakens the bound).
   */
  readonly certified: boolean;
  /** The `runs` ablated contexts, in draw order. */
  readonly contexts: readonly SmoothedContext[];
}

export interface GetAllOptions {
  readonly principal: string;
  /** 1 … 1000 (default 100). */
  readonly limit?: number;
  readonly offset?: number;
  readonly source?: string;
  readonly filters?: Readonly<Record<string, unknown>>;
  readonly runId?: string;
  readonly agentId?: string;
}

export interface SearchHit {
  readonly memory: MemoryRecord;
  readonly score: number;
  readonly untrusted: boolean;
}

export interface SearchResult {
  readonly results: readonly SearchHit[];
  /** The hits rendered as sentinel-delimited segments for a prompt (MemLineage §3.6). */
  readonly context: string;
  /** The random seal of this context's sentinels; the gate parses only segments carrying it. */
  readonly seal: string;
  /** Candidates dropped by verification, with the reason code. */
  readonly dropped: readonly { readonly id: string; readonly code: string }[];
  /**
   * Present when the search was smoothed: `results` is then the pool, `context` is empty (never
   * prompt over the unsmoothed pool) and the model reads `smoothing.contexts` one at a time.
   */
  readonly smoothing?: SmoothingResult;
}

export interface HistoryEvent {
  /**
   * `add` / `update`: a signed version; `delete`: its tombstone; `conflict`: a lower-tier
   * write contradicted this memory and was stored beside it instead of superseding it.
   */
  readonly action: 'add' | 'update' | 'delete' | 'conflict';
  /** The version (entry) this event is about; for `conflict`, the memory stored beside. */
  readonly id: string;
  /** The memory's stable id. */
  readonly memoryId?: string;
  /** `update`: the version it superseded and that version's content. */
  readonly supersedes?: string;
  readonly previous?: string;
  readonly actor: string;
  readonly at: string;
  readonly reason?: string;
  readonly memory?: MemoryRecord;
}

export interface InclusionProofView {
  readonly leafIndex: number;
  readonly treeSize: number;
  readonly leafHash: string;
  readonly hashes: readonly string[];
  readonly checkpoint: CheckpointView;
}

export interface ConsistencyProofView {
  readonly from: number;
  readonly to: number;
  readonly hashes: readonly string[];
  readonly checkpoint: CheckpointView;
}

export interface CheckpointView {
  readonly origin: string;
  readonly size: number;
  readonly root: string;
  readonly note: string;
}

export interface ReviewItem {
  readonly id: string;
  readonly principal: string;
  /** The held record's content: exactly what approval signs (when `integrity` is `verified`). */
  readonly content: string;
  readonly tier: SourceTier;
  readonly reasons: readonly string[];
  readonly status: 'pending' | 'approved' | 'rejected';
  readonly createdAt: string;
  readonly decidedBy?: string;
  readonly memoryId?: string;
  /** The held record's source URI and explicit parents, as approval replays them. */
  readonly source?: string;
  readonly parents?: readonly string[];
  /** SHA-256 (hex) of the held record (the payload approval replays). */
  readonly payloadSha256?: string;
  /**
   * `verified`: the host's MAC over the held record and the item's state holds and the row
   * agrees with it; `tampered`: edited at rest — shown, never approvable (issue 17).
   */
  readonly integrity?: 'verified' | 'tampered';
}

/** A proposed tool call for the sensitive-action gate (MemLineage §3.7). */
export interface CheckActionInput {
  readonly principal: string;
  readonly call: { readonly tool: string; readonly arguments: Readonly<Record<string, unknown>> };
  /** The rendered context the model saw (a `SearchResult.context`). */
  readonly context: string;
  /** The seal of that context (`SearchResult.seal`). */
  readonly seal: string;
  /** Layer 2 parameter provenance: parameter name → candidate values and their source class. */
  readonly sources?: Readonly<Record<string, readonly ParameterSource[]>>;
  /** The user's fresh request this turn (authorises `user_request` source classes). */
  readonly userRequest?: string;
}

/** The gate's verdict (see `core/gate` `Verdict`); every one is also written to the audit log. */
export type ActionVerdict = Verdict;

/** One node of an entry's ancestor DAG (see {@link LineageGraph}). */
export interface LineageNode {
  readonly id: string;
  /** Hops from the entry the graph was asked for (shortest path; the entry itself is 0). */
  readonly depth: number;
  /**
   * `verified`: loaded and re-verified (signature, MAC, log inclusion) — `memory` is set;
   * `unverified`: loaded but failed verification — `code` says why, its parents are not
   * followed; `missing`: not visible to this principal (or gone).
   */
  readonly state: 'verified' | 'unverified' | 'missing';
  readonly status?: 'live' | 'superseded' | 'deleted' | 'expired';
  readonly code?: string;
  readonly memory?: MemoryRecord;
}

/** A derivation edge: `child` names `parent` in its signed record, with this weight. */
export interface LineageEdge {
  readonly child: string;
  readonly parent: string;
  readonly weight: number;
}

/** The ancestors of one entry (MemLineage §3.5's derivation DAG, walked upwards). */
export interface LineageGraph {
  readonly root: string;
  readonly nodes: readonly LineageNode[];
  readonly edges: readonly LineageEdge[];
  /** The walk stopped at its node bound; some ancestors are not listed. */
  readonly truncated: boolean;
}

/** One recorded verdict of the sensitive-action gate (a `gate.<verdict>` audit event). */
export interface GateDecision {
  /** The audit event's id. */
  readonly id: string;
  readonly at: string;
  /** Who asked (the principal that called `checkAction`). */
  readonly principal: string;
  readonly tool: string;
  readonly verdict: string;
  readonly reason: string;
  readonly sensitive: boolean;
  readonly weakestLabel?: string;
  /** The full audit record of the verdict (sources used and rejected, repairs, …). */
  readonly audit: Readonly<Record<string, unknown>>;
}

/** Where an entry stands (see the storage port's `EntryStatus`). */
export type EntryState = 'live' | 'deleted' | 'superseded' | 'expired';

/** A visible entry that failed verification: listed with why, never dropped silently. */
export interface UnverifiedEntry {
  readonly id: string;
  /** The error code of the failed check (`MAC_INVALID`, `SIGNATURE_INVALID`, …). */
  readonly code: string;
  /** Which check failed: `decode`, `mac`, `signature`, `inclusion`, `columns` (a stored
   *  column the listing filtered on disagrees with the signed record), or `state` (its state
   *  columns — deleted, superseded, expiry — disagree with the log's signed records). */
  readonly stage: string;
}

/**
 * What {@link MemoryApi.investigate} lists. Every filter optional, all must hold; times are
 * ISO 8601. An operator sees every principal's entries; anyone else only its own scope (its
 * rows and OPERATOR rows), and naming another `owner` is `AUTH_FORBIDDEN`.
 */
export interface InvestigateOptions {
  /** The caller. */
  readonly principal: string;
  /** Only entries owned by this principal (its scope). */
  readonly owner?: string;
  readonly tiers?: readonly SourceTier[];
  readonly kinds?: readonly string[];
  /** Exact source URI. */
  readonly source?: string;
  /** Lineage labels, checked on the signed record (a failing entry is listed whatever it claims). */
  readonly labels?: readonly TrustLabel[];
  /** Default: every state. */
  readonly statuses?: readonly EntryState[];
  /** Text the content contains (ASCII letters ignore case); with `semantic`, the meaning to rank by. */
  readonly query?: string;
  /** Rank live entries by similarity to `query` (one page, best first, no cursor). */
  readonly semantic?: boolean;
  /** Written at or after this instant. */
  readonly from?: string;
  /** Written strictly before this instant. */
  readonly to?: string;
  /** The `nextCursor` of the previous page (newest first). */
  readonly cursor?: string;
  /** Rows per page, 1..200 (default 50). */
  readonly limit?: number;
}

/** One entry of an investigation page. */
export interface InvestigationRow {
  readonly id: string;
  readonly leafIndex: number;
  readonly status: EntryState;
  /** Re-verified now (MAC, signature, log inclusion): `memory` is set; else `failure` is. */
  readonly verified: boolean;
  readonly memory?: MemoryRecord;
  readonly failure?: UnverifiedEntry;
  /**
   * A failing row's columns as stored — NOT verified, shown so an operator can see what it
   * claims (operators only; anyone else gets the failure alone).
   */
  readonly stored?: {
    readonly owner: string;
    readonly tier: SourceTier;
    readonly kind?: string;
    readonly source?: string;
    readonly writer?: string;
    readonly createdAt?: string;
    readonly content?: string;
  };
  /** Semantic ranking only: cosine similarity to the query. */
  readonly score?: number;
}

export interface InvestigationPage {
  /** Newest first (semantic: best first). */
  readonly rows: readonly InvestigationRow[];
  /** Pass back as `cursor` for the next (older) page; absent on the last page. */
  readonly nextCursor?: string;
  /** `all`: every principal's entries (an operator); `own`: the caller's scope. */
  readonly scope: 'all' | 'own';
}

/** One entry as the investigation view opens it (see {@link MemoryApi.investigateEntry}). */
export interface InvestigatedEntry {
  readonly row: InvestigationRow;
  /** A verified entry's inclusion proof (as `proof` serves it). */
  readonly proof?: InclusionProofView;
  /** A verified entry's ancestors, walked in the same scope. */
  readonly lineage?: LineageGraph;
  /** Its versions and deletion, read in the same scope (an operator's: any principal's). */
  readonly history?: readonly HistoryEvent[];
  readonly scope: 'all' | 'own';
}

/** Who a principal is, as the registry knows it. */
export interface PrincipalInfo {
  readonly id: string;
  readonly kind: PrincipalKind;
  readonly name: string;
}

// Conversation ingestion (memory/write/conversation.ts).

/** One message of a conversation (OpenAI / Mem0 shape, plus an optional time and metadata). */
export interface ChatTurn {
  readonly role: 'user' | 'assistant' | 'tool' | 'system';
  readonly content: string;
  /** The speaker's name (stored as `name: content`). */
  readonly name?: string;
  /** When the message was said (overrides the call's `eventAt`). */
  readonly eventAt?: string | number | Date;
  /** Metadata of this message (merged over the call's). */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** Options of a conversation add: those of `add`, plus Mem0's `infer`. */
export type ConversationOptions = Omit<
  AddOptions,
  'embedding' | 'parents' | 'weights' | 'derived'
> & {
  /** false: store the turns as they are even when an extraction model is configured. */
  readonly infer?: boolean;
};

/** What happened to one memory of the conversation. */
export interface ConversationItem {
  readonly event: AddEvent;
  readonly memory: MemoryRecord;
  /** Index of the message it came from (absent for extracted facts). */
  readonly message?: number;
  readonly previous?: MemoryRecord;
  readonly conflict?: { readonly with: string; readonly reason: 'lower_tier' };
}

export interface ConversationResult {
  readonly status: 'stored';
  readonly results: readonly ConversationItem[];
  /** Messages (or facts) held for review instead of stored. */
  readonly held: readonly {
    readonly reviewId: string;
    readonly reasons: readonly string[];
    readonly message?: number;
  }[];
}

/** The Memory API. Every call is scoped to a principal; nothing crosses principals. */
export interface MemoryApi {
  /** A conversation: each message (or extracted fact) through the same write path. */
  add(messages: readonly ChatTurn[], opts: ConversationOptions): Promise<ConversationResult>;
  add(content: string, opts: AddOptions): Promise<AddResult>;
  search(query: string, opts: SearchOptions): Promise<SearchResult>;
  get(id: string, opts: { principal: string }): Promise<MemoryRecord | undefined>;
  /**
   * Visible live entries in log order; `source`: only those with this exact source URI;
   * `filters`, `runId`, `agentId` as in search (pushed into the database).
   */
  getAll(opts: GetAllOptions): Promise<MemoryRecord[]>;
  /**
   * `getAll`, with the visible entries that failed verification listed in `unverified`
   * (id and reason code) instead of left out silently.
   */
  getAllChecked(
    opts: GetAllOptions,
  ): Promise<{ memories: MemoryRecord[]; unverified: UnverifiedEntry[] }>;
  /**
   * A new signed version of memory `id` (its id stays); `ttlMs` sets the new version's
   * lifetime, `metadata` / `eventAt` replace the memory's (else kept).
   */
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
  ): Promise<MemoryRecord>;
  /**
   * Extend an own live entry's lifetime to now + `ttlMs` (default: its own signed lifetime);
   * never shortens, audited as `entry.renewed`.
   */
  renew(id: string, opts: { principal: string; ttlMs?: number }): Promise<MemoryRecord>;
  delete(id: string, opts: { principal: string; reason: string }): Promise<void>;
  deleteAll(opts: { principal: string; reason?: string }): Promise<number>;
  history(id: string, opts: { principal: string }): Promise<HistoryEvent[]>;
  /**
   * Tombstone every own entry from a source URI or with a content hash; with `allPrincipals`,
   * an operator's explicit, audited purge across every principal (others: `AUTH_FORBIDDEN`).
   */
  purge(opts: {
    principal: string;
    source?: string;
    contentHash?: string;
    allPrincipals?: boolean;
    reason?: string;
  }): Promise<number>;
  proof(id: string, opts: { principal: string }): Promise<InclusionProofView>;
  checkpoint(): Promise<CheckpointView>;
  consistency(from: number, to: number): Promise<ConsistencyProofView>;
  listReviews(opts: { principal: string; status?: ReviewItem['status'] }): Promise<ReviewItem[]>;
  decideReview(
    id: string,
    decision: 'approve' | 'reject',
    opts: { reviewer: string; reason?: string },
  ): Promise<ReviewItem>;
  /** Run a proposed tool call through the sensitive-action gate; audited as `gate.<kind>`. */
  checkAction(input: CheckActionInput): Promise<ActionVerdict>;
  /** The registry's record of a principal (`PRINCIPAL_UNKNOWN` if none). */
  whoami(principal: string): Promise<PrincipalInfo>;
  /**
   * The ancestor DAG of an entry visible to the principal, every node re-verified;
   * `STORAGE_NOT_FOUND` when the entry is not visible.
   */
  ancestors(id: string, opts: { principal: string }): Promise<LineageGraph>;
  /**
   * The investigation listing (issue 24): entries newest first in every state, filtered, in
   * keyset pages, each re-verified and a failing one shown with its reason. An operator's call
   * reads across principals (the only such read) and is audited as `operator.investigate`.
   */
  investigate(opts: InvestigateOptions): Promise<InvestigationPage>;
  /**
   * One entry as the investigation view opens it: any principal's for an operator (audited as
   * `operator.investigate`), else the caller's scope; `STORAGE_NOT_FOUND` when not there.
   */
  investigateEntry(id: string, opts: { principal: string }): Promise<InvestigatedEntry>;
  /** Recorded gate verdicts, newest first: the caller's own, or everyone's for an operator. */
  gateDecisions(opts: { principal: string; limit?: number }): Promise<GateDecision[]>;
  /** The log's checkpoint verifier key (C2SP signed-note vkey, as `memwarden vkey` prints). */
  verifierKey(): Promise<string>;
  /**
   * Graph search (issue 19): PPR / community / RRF selection over the principal's graph, sealed
   * and scored; with `action`, replayed on the authenticated subgraph (AuthSelect) and decided
   * by the gate (audited as `gate.<verdict>`).
   */
  graphSearch(query: string, opts: GraphSearchOptions): Promise<GraphSearchResult>;
  /**
   * The principal of a platform's end user named by `who` (exactly one of `userId`, `agentId`,
   * `runId`): its own principal, registered on first use under the platform's authority and
   * audited once (`platform.provisioned`); the same name under the same platform is always the
   * same principal, another platform's never (ADR 0058). Channels call it only for a platform
   * key (`mwp_…`).
   */
  actFor(platform: string, who: ActFor): Promise<string>;
  /** Operators only (`AUTH_FORBIDDEN`): register a principal and issue its first key. */
  adminCreatePrincipal(opts: {
    by: string;
    kind: PrincipalKind;
    name: string;
    scope?: ApiKeyScope;
  }): Promise<AdminPrincipal & { kid: string; key: IssuedApiKey }>;
  /** Operators only: every principal. */
  adminListPrincipals(opts: { by: string }): Promise<AdminPrincipal[]>;
  /** Operators only: a new key; `revokeOthers` re-issues a lost key (the others revoked). */
  adminIssueKey(opts: {
    by: string;
    principal: string;
    scope?: ApiKeyScope;
    revokeOthers?: boolean;
    reason?: string;
  }): Promise<IssuedApiKey>;
  /** Operators only: a principal's keys (never their secrets), revoked ones included. */
  adminListKeys(opts: { by: string; principal: string }): Promise<ApiKeyInfo[]>;
  /** Operators only: revoke a key by id (`KEY_UNKNOWN`, `KEY_REVOKED`). */
  adminRevokeKey(opts: { by: string; keyId: string; reason?: string }): Promise<ApiKeyInfo>;
  /** Operators only: a new key of the same principal and scope, the old one revoked. */
  adminRotateKey(opts: { by: string; keyId: string }): Promise<IssuedApiKey & { replaced: string }>;
  close(): Promise<void>;
}

// ---- graph search (issue 19; memory/graph/search.ts) ------------------------------------------

export type GraphSelector = 'ppr' | 'community' | 'rrf';

export interface GraphSearchOptions {
  readonly principal: string;
  /** Default `ppr`. */
  readonly selector?: GraphSelector;
  /** Items selected (1..50, default 5). */
  readonly k?: number;
  /** Seed entities by name (default: grounded from the query, then linked semantically). */
  readonly seeds?: readonly string[];
  /**
   * The tool this selection will justify. Given: the selection is replayed on the authenticated
   * subgraph and the gate decides on the result (`verdict`); audited as `gate.<verdict>`.
   */
  readonly action?: string;
}

/** One selected graph item, as a memory hit is. */
export interface GraphHit {
  readonly node: 'entity' | 'passage';
  /** Entity name, or passage entry id. */
  readonly name: string;
  /** The signed entry that created the item. */
  readonly entryId: string;
  readonly content: string;
  /** In [0, 1]: PPR mass / best mass, community degree / best, or normalised RRF. */
  readonly score: number;
  readonly tier: SourceTier;
  readonly label: TrustLabel;
  /** The item's authority in the graph (after min-inheritance and the policy). */
  readonly authority: Authority;
  /** Below A: the item itself is not authenticated. */
  readonly untrusted: boolean;
}

export interface GraphSearchResult {
  readonly selector: GraphSelector;
  readonly seeds: readonly string[];
  readonly results: readonly GraphHit[];
  /** The hits as sentinel segments under `seal` (what a prompt gets). */
  readonly context: string;
  readonly seal: string;
  readonly authSelect: {
    /** `clean`: no unauthenticated structure; `certified`: the margin proved no change;
     *  `replayed`: selection recomputed on G_A; `immune`: the selector reads no structure. */
    readonly mode: ReplayMode | 'immune';
    /** The selection on G differs from its replay on G_A. */
    readonly diverged: boolean;
    /** The authority the selection carries into the gate (U when diverged). */
    readonly authority: Authority;
    /** The replay's selection, when it diverged: hits, sealed like `results`. */
    readonly authenticated?: {
      readonly results: readonly GraphHit[];
      readonly context: string;
      readonly seal: string;
    };
  };
  /** With `action`: the gate's verdict on this selection (AuthSelect §5.2). */
  readonly verdict?: {
    readonly kind: string;
    readonly reason: string;
    readonly required: Authority;
  };
}
