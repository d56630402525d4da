/**
 * @module ports/storage
 * The storage port. Every backend (in-memory, PGlite, PostgreSQL) implements it, and one
 * conformance suite (`src/testing/storage-conformance.ts`) runs against each.
 *
 * Rules every implementation keeps:
 * - Writes are atomic per call; a failed call changes nothing.
 * - Nothing is overwritten: inserting an existing key is `STORAGE_CONFLICT`.
 * - Log appends are sequenced: `appendLeaves` names the index it expects to start at and
 *   fails with `STORAGE_CONFLICT` if the log has moved, so two writers can never fork it.
 * - Returned byte arrays are copies or immutable; callers may not mutate them.
 * - Scope (article Pattern 4): a principal view (`asPrincipal`) sees its own rows plus global
 *   OPERATOR rows, writes only its own non-OPERATOR rows, and a scope with no principal sees
 *   nothing. PostgreSQL backends enforce this with row-level security, the in-memory backend in
 *   code with the same semantics; the conformance suite checks both.
 */
import type { PrincipalKind, SourceTier } from '../core/trust.js';
import type { EntryFilter } from '../core/filter/index.js';
import type { JsonObject } from '../core/entry/meta.js';

/** One log leaf as stored: RFC 6962 leaf input and its hash. */
export interface LeafRecord {
  readonly index: number;
  /** The leaf input bytes (entry id ‖ signature, or a `ts:` tombstone). */
  readonly data: Uint8Array;
  /** SHA-256(0x00 ‖ data), RFC 6962 §2.1. */
  readonly hash: Uint8Array;
  /** The entry (or tombstone, or registry statement) this leaf commits. */
  readonly entryId: string;
  /**
   * What the leaf commits: an entry (`id ‖ sig`), a tombstone (`ts:` …) or a signed registry
   * statement (`rg:` ‖ record, ADR 0033).
   */
  readonly kind: LeafKind;
}

/** The kinds of log leaf. */
export type LeafKind = 'entry' | 'tombstone' | 'registry';

/** A stored perfect-subtree hash: level `level` (0 = leaf hash), covering leaves [index·2^level, (index+1)·2^level). */
export interface NodeRecord {
  readonly level: number;
  readonly index: number;
  readonly hash: Uint8Array;
}

/** A checkpoint as stored: the signed note text plus its parsed size and root. */
export interface CheckpointRecord {
  readonly size: number;
  readonly root: Uint8Array;
  /** The C2SP signed note, verbatim. */
  readonly note: string;
  readonly createdAtNs: bigint;
}

export interface LogStore {
  /** Number of leaves in the log. */
  logSize(): Promise<number>;
  /**
   * Append `leaves` (indices `start`, `start+1`, …) together with the interior nodes they
   * complete, in one atomic step. Fails with `STORAGE_CONFLICT` unless `start` equals the
   * current size.
   */
  appendLeaves(
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void>;
  /**
   * The sequence point of a log shared by several processes: on a transaction view, lock the
   * log head until the transaction ends and return the committed size. Another transaction
   * calling it waits until this one commits or rolls back, so appends made under the lock are
   * numbered in commit order. Optional: a store with a single writer (in-memory, the embedded
   * store behind its data-folder lock) serialises transactions anyway, and callers then read
   * `logSize` inside the transaction.
   */
  lockLogHead?(): Promise<number>;
  getLeaf(index: number): Promise<LeafRecord | undefined>;
  /** Leaves in [start, end). */
  getLeaves(start: number, end: number): Promise<LeafRecord[]>;
  /**
   * The hashes of the leaves in [start, end) visible in this scope, concatenated in index order
   * (32 bytes each) — one read for the verifier's leaf mirror (`memory/verified-leaves.ts`).
   * A leaf that is absent is left out, so a gap shows as a shorter result. Optional so wrappers
   * and doubles keep compiling; callers fall back to `getLeaves`. Every shipped backend has it.
   */
  getLeafHashes?(start: number, end: number): Promise<Uint8Array>;
  /**
   * The leaves of one kind in [start, end), in index order — the ledger reads the registry
   * statements (and tombstones) of the log without scanning every leaf. Optional so wrappers
   * keep compiling; callers fall back to filtering `getLeaves`. Every shipped backend has it.
   */
  getLeavesOfKind?(kind: LeafKind, start: number, end: number): Promise<LeafRecord[]>;
  /** The stored hashes for `refs`, in order; undefined where absent. */
  getNodes(refs: readonly { level: number; index: number }[]): Promise<(Uint8Array | undefined)[]>;
  /** Leaf index of the leaf committing `entryId` (its entry leaf, not a tombstone). */
  findLeafIndex(entryId: string): Promise<number | undefined>;
  putCheckpoint(cp: CheckpointRecord): Promise<void>;
  latestCheckpoint(): Promise<CheckpointRecord | undefined>;
  getCheckpoint(size: number): Promise<CheckpointRecord | undefined>;
  /**
   * Every stored checkpoint, smallest size first (the whole-store audit checks each one and the
   * consistency between neighbours). Optional so wrappers keep compiling; every shipped
   * backend implements it.
   */
  listCheckpoints?(): Promise<CheckpointRecord[]>;
}

export interface PrincipalRecord {
  /** Derived from the first public key: `${kind}:${hex(SHA-256(pk))[0..32]}`. */
  readonly id: string;
  readonly kind: PrincipalKind;
  /** Human label; not unique, not trusted. */
  readonly name: string;
  readonly createdAtNs: bigint;
}

export interface KeyRecord {
  /** `hex(SHA-256(pk))[0..16]`. */
  readonly kid: string;
  readonly principalId: string;
  readonly alg: 'ed25519';
  readonly publicKey: Uint8Array;
  /** Entries signed before this instant do not verify under this key. */
  readonly validFromNs: bigint;
  /** Set by rotation: the key signs nothing at or after this instant. */
  readonly validUntilNs?: bigint;
  /** Set by revocation: nothing signed at or after this instant verifies. */
  readonly revokedAtNs?: bigint;
  /** Log size when revoked: no leaf at or past it verifies under this key, whatever its timestamp. */
  readonly revokedAtLogSize?: number;
  readonly revocationReason?: string;
}

export interface RegistryStore {
  /** `STORAGE_CONFLICT` if the id exists (registration never overwrites). */
  insertPrincipal(p: PrincipalRecord, firstKey: KeyRecord): Promise<void>;
  getPrincipal(id: string): Promise<PrincipalRecord | undefined>;
  listPrincipals(): Promise<PrincipalRecord[]>;
  /** `STORAGE_CONFLICT` if the kid exists. */
  insertKey(k: KeyRecord): Promise<void>;
  /**
   * Close the validity of `kid` (rotation or revocation). Only narrowing updates are legal:
   * a set field is never changed again (`STORAGE_CONFLICT`).
   */
  closeKey(
    kid: string,
    patch: {
      validUntilNs?: bigint;
      revokedAtNs?: bigint;
      revokedAtLogSize?: number;
      revocationReason?: string;
    },
  ): Promise<void>;
  getKey(kid: string): Promise<KeyRecord | undefined>;
  keysOf(principalId: string): Promise<KeyRecord[]>;
}

/** The dimension of stored embeddings (the default local model, DESIGN.md). */
export const EMBEDDING_DIMENSIONS = 384;

/**
 * A stored entry: the exact signed bytes plus the authenticator tag, and query-only metadata.
 *
 * Everything except `bytes`, `macKid`, `mac` and `leafIndex` is *denormalised*: copied out of the
 * signed record (or computed from it) so the database can filter, rank and isolate. The signed
 * bytes stay the source of truth — the read path re-checks every denormalised field it relies
 * on against them, so a row whose columns were edited in place is caught, not trusted.
 *
 * The metadata fields are optional so writers of the previous stage keep compiling; an entry
 * written without them is invisible to `searchEntries` ranking (no content, no embedding) but
 * is still listed, fetched and verified.
 */
export interface StoredEntry {
  readonly id: string;
  /**
   * The principal scope that owns the entry (the RLS tenant key). Denormalised from the signed
   * record so the database can enforce isolation; the read path re-checks it against the bytes.
   */
  readonly owner: string;
  /** Source tier, denormalised for the same reason (OPERATOR rows are global). */
  readonly tier: SourceTier;
  /** Canonical CBOR of the signed record (body + signature), exactly as signed. */
  readonly bytes: Uint8Array;
  readonly leafIndex: number;
  /** HMAC key id and tag over `bytes` (SMSR component 1). */
  readonly macKid: string;
  readonly mac: Uint8Array;
  /** The writing principal (may differ from `owner`, e.g. a tool writing into a user scope). */
  readonly writer?: string;
  /** Record kind (`fact`, `preference`, …), for `kinds` filters. */
  readonly kind?: string;
  readonly createdAtNs?: bigint;
  /** Absent: never expires. An entry with `expiresAtNs <= now` is never returned by search. */
  readonly expiresAtNs?: bigint;
  /** Plaintext copy of the content, for lexical search only. */
  readonly content?: string;
  /** Source URI (`chat:s1:turn-4`, `https://…`), for filters and purge by source. */
  readonly uri?: string;
  /** Lower-case hex SHA-256 of the source blob, for purge by content hash (failure-mode table). */
  readonly srcHash?: string;
  /** {@link EMBEDDING_DIMENSIONS}-d embedding; finite values only. */
  readonly embedding?: Float32Array;
  /** Mutable state: set by {@link EntryStateStore.markDeleted} (a signed tombstone exists). */
  readonly deleted?: boolean;
  /** Mutable state, set once: the id of the newer version that supersedes this one. */
  readonly supersededBy?: string;
  /**
   * The logical memory id (a v2 record's `lid`, else the entry's own id); absent on rows
   * written before it was stored, which then read as their own id (ADR 0049).
   */
  readonly memoryId?: string;
  /** Event time of a v2 record (`evt`), ns. */
  readonly eventAtNs?: bigint;
  /** Caller metadata of a v2 record (`meta`). */
  readonly metadata?: JsonObject;
  /** Run / session scope of a v2 record (`run`). */
  readonly runId?: string;
  /** Agent scope of a v2 record (`agent`). */
  readonly agentId?: string;
  /**
   * The content's length in BM25 tokens, as a SQL backend computed and stored it on insert
   * (the collection statistics read it); returned on reads for the audit, ignored on writes.
   */
  readonly lexLen?: number;
}

export interface EntryStore {
  /** `STORAGE_CONFLICT` if the id exists. State fields (`deleted`, `supersededBy`) are ignored: a new entry is live. */
  putEntry(e: StoredEntry): Promise<void>;
  /**
   * Insert several entries in one call (multi-row statements: the group-commit write path).
   * All-or-nothing like `putEntry`: any conflict or refusal inserts none of them. Optional so
   * wrappers and doubles keep compiling; every shipped backend implements it, and callers fall
   * back to `putEntry` one by one where it is absent.
   */
  putEntries?(es: readonly StoredEntry[]): Promise<void>;
  getEntry(id: string): Promise<StoredEntry | undefined>;
  /** Entries in log order, for audit and listing. */
  listEntries(opts?: { afterLeafIndex?: number; limit?: number }): Promise<StoredEntry[]>;
  /**
   * One page of the entries a vector search in this scope could return, for the read model's
   * partition loader (ADR 0018): the rows `listEntries` returns in this scope that are not
   * deleted, not superseded and carry an embedding, in the same log order, after
   * `afterLeafIndex` (default -1), at most `limit` (1 … 10,000, `INPUT_INVALID` otherwise) —
   * every one with its `embedding` filled, exactly (the float4 values as stored), and every
   * other field as `listEntries` returns it. Expired rows are included (a renewal may revive
   * them). Backends read the embeddings in a binary form instead of text (PGlite: binary result
   * rows; PostgreSQL: `vector_send` / `array_send`), which is what makes a load cheap. Optional
   * so wrappers and doubles keep compiling; every shipped backend implements it on its root and
   * principal views, and callers fall back to `listEntries` where it is absent.
   */
  scanEntries?(opts: { afterLeafIndex?: number; limit: number }): Promise<StoredEntry[]>;
}

/** What {@link EntryStateStore.searchEntries} looks for. */
export interface SearchQuery {
  /** Rank by cosine similarity to this {@link EMBEDDING_DIMENSIONS}-d vector. */
  readonly embedding?: Float32Array;
  /** Rank by lexical match of these words (any of them). */
  readonly text?: string;
  readonly tiers?: readonly SourceTier[];
  readonly kinds?: readonly string[];
  /** Exact source URI. */
  readonly uri?: string;
  /**
   * Only rows this filter admits (`core/filter`: metadata, tier, kind, source, scopes, times),
   * applied before ranking — pushed into SQL on the Postgres backends.
   */
  readonly filter?: EntryFilter;
  /** "Now" for expiry: rows with `expiresAtNs <= nowNs` are excluded. */
  readonly nowNs: bigint;
  /** 1 … 1000. */
  readonly limit: number;
}

/**
 * One search hit. With only `embedding`, hits are the `limit` nearest rows by cosine similarity
 * (`vectorScore` ∈ [-1, 1], best first). With only `text`, the `limit` best lexical matches
 * (`lexicalScore` ∈ (0, 1), best first; rows matching no query word are not returned). With
 * both, the union of the two top-`limit` lists (≤ 2·limit hits), each hit carrying both scores
 * where defined (a lexical score of 0 = no word matched), ordered by vector score; the caller
 * fuses them. Lexical scales are backend-specific (PostgreSQL full text vs the in-memory
 * term-overlap score); compare them only within one result list.
 *
 * A hit ranked by vector only may leave out `entry.embedding` (the SQL backends do: its score is
 * already computed, and shipping 384 floats back per hit costs more than the ranking); fetch the
 * entry with `getEntry` when the vector itself is needed.
 */
export interface SearchHit {
  readonly entry: StoredEntry;
  readonly vectorScore?: number;
  readonly lexicalScore?: number;
}

/**
 * Where an entry stands, from its state columns, first that holds: `deleted` (a tombstone),
 * `superseded` (a newer version), `expired` (`expiresAtNs <= nowNs`), else `live`.
 */
export type EntryStatus = 'live' | 'deleted' | 'superseded' | 'expired';
export const ENTRY_STATUSES: readonly EntryStatus[] = ['live', 'deleted', 'superseded', 'expired'];

/**
 * What {@link EntryStateStore.browseEntries} lists: every filter optional, all must hold. The
 * filters compare the stored (denormalised) columns; callers re-check what they show against
 * the signed bytes.
 */
export interface BrowseQuery {
  /** Only rows of this owner (principal scope). */
  readonly owner?: string;
  readonly tiers?: readonly SourceTier[];
  readonly kinds?: readonly string[];
  /** Exact source URI. */
  readonly uri?: string;
  /** Only rows in one of these states (default: every state). */
  readonly statuses?: readonly EntryStatus[];
  /**
   * Only rows whose content contains this text, ignoring case (ASCII letters everywhere; other
   * letters as the backend's lower-casing has them). 1 … 512 chars. A scan bounded by the page:
   * no index serves it.
   */
  readonly text?: string;
  /** Written at or after this instant (`createdAtNs`); rows without a write time are left out. */
  readonly createdFromNs?: bigint;
  /** Written strictly before this instant. */
  readonly createdBeforeNs?: bigint;
  /** Keyset cursor: only rows with a smaller leaf index (the last row of the previous page). */
  readonly beforeLeafIndex?: number;
  /** "Now" for the `expired` state. */
  readonly nowNs: bigint;
  /** 1 … 1000. */
  readonly limit: number;
}

/** Live-entry count of one tier, for the `memory_entries_current{trust}` gauge. */
export interface TierCount {
  readonly tier: SourceTier;
  readonly count: number;
}

/**
 * Entry state and retrieval (the Memory API's read path). Every method honours the scope of the
 * view it is called on: a principal view sees its own rows plus global OPERATOR rows and may
 * change only its own non-OPERATOR rows. A row the scope cannot see is `STORAGE_NOT_FOUND`
 * (existence is not leaked); a visible row the scope may not change (OPERATOR memory from an
 * agent scope) is `STORAGE_FAILED` with `details.reason = 'denied'`.
 */
export interface EntryStateStore {
  /** Mark an entry deleted (after its signed tombstone). Idempotent. */
  markDeleted(id: string): Promise<void>;
  /** Record the superseding version. Set once: a second call is `STORAGE_CONFLICT`. */
  markSuperseded(id: string, byId: string): Promise<void>;
  /**
   * Move the expiry forward to `newExpiresAtNs` (renew-on-use, review: article failure-mode
   * table). It never moves back and a never-expiring entry stays so. Returns the expiry now in
   * force (undefined: never expires).
   */
  extendExpiry(id: string, newExpiresAtNs: bigint): Promise<bigint | undefined>;
  /** Live (not deleted, not superseded, unexpired) entries ranked by similarity. */
  searchEntries(q: SearchQuery): Promise<SearchHit[]>;
  /**
   * Entries visible in this scope, in log order, for `getAll`. Deleted and superseded entries are
   * left out unless asked for; expired ones are left out when `nowNs` is given; `owner` narrows
   * to one owner (e.g. a principal's own rows without the global OPERATOR ones).
   */
  listEntriesFor(opts: {
    limit: number;
    offset?: number;
    includeDeleted?: boolean;
    includeSuperseded?: boolean;
    nowNs?: bigint;
    owner?: string;
    /** Only rows this filter admits (`core/filter`). */
    filter?: EntryFilter;
  }): Promise<StoredEntry[]>;
  /**
   * Entries with this source URI, source hash and/or logical memory id (all given must match),
   * in log order, deleted ones left out unless asked for — the purge path, and the versions of
   * one memory (a row without a stored memory id is its own). None given is `INPUT_INVALID`.
   */
  findEntriesBy(opts: {
    uri?: string;
    srcHash?: string;
    memoryId?: string;
    includeDeleted?: boolean;
  }): Promise<StoredEntry[]>;
  /** Live entries per tier (tiers with none are omitted); expired ones left out when `nowNs` is given. */
  countEntries(opts?: { nowNs?: bigint }): Promise<TierCount[]>;
  /**
   * One page of the entries visible in this scope that match `q`, in every state, NEWEST FIRST
   * (leaf index descending); the next page passes the last row's leaf index as
   * `beforeLeafIndex` (a keyset: rows written meanwhile never shift a page). Rows come without
   * `embedding`. Bad arguments are `INPUT_INVALID` and touch nothing. The investigation listing
   * (`memory/read/investigate.ts`): on the system scope it reads every principal's rows, so
   * only that module calls it there (test/memory/investigate-scope.test.ts checks). Optional so
   * wrappers, doubles and transaction views keep compiling; every shipped backend implements it
   * on its root and principal views.
   */
  browseEntries?(q: BrowseQuery): Promise<StoredEntry[]>;
}

/** Per-principal, per-tier, per-day write quotas (article Pattern 5). */
export interface QuotaStore {
  /**
   * Count one write against `(principal, tier, dayKey)` if fewer than `limit` were counted:
   * `{ ok: true, used }` with the new count, else `{ ok: false, used }` and nothing changes.
   * Atomic under concurrency: of N concurrent calls at most `limit` succeed. A principal view
   * may consume only its own quota.
   */
  consumeQuota(
    principal: string,
    tier: SourceTier,
    dayKey: string,
    limit: number,
  ): Promise<{ ok: boolean; used: number }>;
  /** The current count (0 when never consumed). */
  quotaUsed(principal: string, tier: SourceTier, dayKey: string): Promise<number>;
  /**
   * Count a batch of writes (one demand each, in queue order) against their quotas in one
   * atomic step — the ledger's group commit calls it inside its commit transaction, so the
   * count commits or rolls back with the writes themselves. Per demand, in order: admitted
   * (`true`, counted) iff fewer than its `limit` writes are counted for its
   * `(principal, tier, dayKey)` so far, else refused (`false`, nothing counted). So when every
   * demand of a group carries the same limit, the first `max(0, limit − used)` are admitted and
   * the rest refused. Atomic under concurrency like {@link consumeQuota} (on PostgreSQL the
   * rows' locks decide, across processes). A principal view may name only its own principal
   * (`STORAGE_FAILED`/denied, nothing counted). Optional so wrappers and doubles keep
   * compiling; every shipped backend implements it, and callers fall back to `consumeQuota`
   * one demand at a time.
   */
  consumeQuotas?(demands: readonly QuotaDemand[]): Promise<boolean[]>;
}

/** One write's claim on a daily quota (see {@link QuotaStore.consumeQuotas}). */
export interface QuotaDemand {
  readonly principal: string;
  readonly tier: SourceTier;
  readonly dayKey: string;
  /** Writes allowed per day; below 1 nothing is admitted. */
  readonly limit: number;
}

/** A write held for human review (write-path filter verdict "review"). */
export interface ReviewRecord {
  readonly id: string;
  /** The principal whose write is held (the row owner). */
  readonly principal: string;
  readonly tier: SourceTier;
  readonly content: string;
  readonly reasons: readonly string[];
  /** Opaque to storage: the serialised add request, replayed on approval. */
  readonly payload: Uint8Array;
  readonly createdAtNs: bigint;
  readonly status: 'pending' | 'approved' | 'rejected';
  readonly decidedBy?: string;
  readonly decidedAtNs?: bigint;
  /** The memory written on approval. */
  readonly memoryId?: string;
  /**
   * Opaque to storage: the host's MAC key id and tag over the item (its payload and its
   * decision state), so an edit at rest is detected (issue 17, ADR 0034). Absent on items
   * held before it existed.
   */
  readonly macKid?: string;
  readonly mac?: Uint8Array;
}

export interface ReviewDecision {
  readonly status: 'approved' | 'rejected';
  readonly decidedBy: string;
  readonly decidedAtNs: bigint;
  readonly memoryId?: string;
  /** The item's new MAC (see {@link ReviewRecord.mac}), stored with the decision. */
  readonly macKid?: string;
  readonly mac?: Uint8Array;
}

/**
 * The review queue. A principal view enqueues and reads its own items; deciding is for the
 * system scope (an operator), `STORAGE_FAILED`/denied from a principal view.
 */
export interface ReviewStore {
  /** `STORAGE_CONFLICT` if the id exists. The item starts `pending`. */
  enqueueReview(
    r: Omit<ReviewRecord, 'status' | 'decidedBy' | 'decidedAtNs' | 'memoryId'>,
  ): Promise<void>;
  /** Oldest first. */
  listReviews(opts?: { status?: ReviewRecord['status']; limit?: number }): Promise<ReviewRecord[]>;
  getReview(id: string): Promise<ReviewRecord | undefined>;
  /** pending → approved | rejected, once: a decided item is `STORAGE_CONFLICT`; unknown is `STORAGE_NOT_FOUND`. */
  decideReview(id: string, d: ReviewDecision): Promise<ReviewRecord>;
}

/** A JSON value (what audit details may hold). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

export interface AuditEvent {
  /** Unique (`STORAGE_CONFLICT` on reuse). */
  readonly id: string;
  readonly atNs: bigint;
  readonly actor: string;
  /** e.g. `entry.dropped`, `review.approved`, `purge`. */
  readonly action: string;
  /** What the event is about (an entry id, a review id). */
  readonly subject?: string;
  readonly details: { readonly [k: string]: JsonValue };
}

/** Which audit events to list (every filter optional, all of them must hold). */
export interface AuditQuery {
  readonly limit: number;
  /** Strictly after this time. */
  readonly afterNs?: bigint;
  /** About this subject (an entry id, a review id). */
  readonly subject?: string;
  /** Done by this actor (a principal id). */
  readonly actor?: string;
  /** Whose action starts with this prefix, e.g. `gate.` for every gate verdict. */
  readonly actionPrefix?: string;
  /** Newest first (default oldest first); `limit` then keeps the newest. */
  readonly newestFirst?: boolean;
}

/**
 * Audit events. Append-only; a principal view's events are owned by it and it reads only those,
 * the system scope reads all.
 */
export interface AuditStore {
  appendAudit(e: AuditEvent): Promise<void>;
  /**
   * Append several events in one statement, in order (the batched query-history flush): all or
   * nothing — an invalid event or a reused id appends none of them. Optional so wrappers and
   * doubles keep compiling; every shipped backend implements it, and callers fall back to
   * `appendAudit` one by one in a transaction where it is absent.
   */
  appendAudits?(es: readonly AuditEvent[]): Promise<void>;
  /** Oldest first (or newest first), filtered as `opts` says; ties keep append order. */
  listAudit(opts: AuditQuery): Promise<AuditEvent[]>;
}

/**
 * Bearer API keys of the service. System scope only (a principal view is `STORAGE_FAILED`/denied):
 * the lookup happens before any principal is known.
 */
export interface ApiKeyStore {
  /** `keyHash` = SHA-256 of the secret (32 bytes); the secret itself is never stored. `STORAGE_CONFLICT` if present. */
  putApiKey(k: { principalId: string; keyHash: Uint8Array; createdAtNs: bigint }): Promise<void>;
  /** The principal of an unrevoked key, else undefined. Exact-match lookup of a hash, so no timing oracle on the secret. */
  findApiKey(keyHash: Uint8Array): Promise<string | undefined>;
  /** Revoke (idempotent); `STORAGE_NOT_FOUND` for an unknown key. */
  revokeApiKey(keyHash: Uint8Array): Promise<void>;
  /**
   * Every stored key row (for `memwarden audit` and the one-time adoption of a store's keys
   * into signed statements, ADR 0070); optional: a backend without it adopts and audits none.
   */
  listApiKeys?(): Promise<StoredApiKey[]>;
}

/** An `api_keys` row as stored (unsigned: a cache of the signed API-key statements). */
export interface StoredApiKey {
  readonly principalId: string;
  readonly keyHash: Uint8Array;
  readonly createdAtNs: bigint;
  readonly revoked: boolean;
}

/**
 * A committed change of a shared store, as its feed reports it (ADR 0037). `sync`: the feed is
 * listening (again) and the log had `size` leaves then — everything committed after is
 * reported, anything before must be read from the store; `lost`: it is not listening, so changes
 * may go unreported until the next `sync`; `log`: the log grew to `size` (read the new leaves'
 * entries: the log is the truth, this is the wake-up); `entry`: an entry's state changed
 * (monotone: deleted and superseded only become set, an expiry only moves forward).
 */
export type StoreEvent =
  | { readonly kind: 'sync'; readonly size: number }
  | { readonly kind: 'lost' }
  | { readonly kind: 'log'; readonly size: number }
  | { readonly kind: 'entry'; readonly op: 'deleted' | 'superseded'; readonly id: string }
  | {
      readonly kind: 'entry';
      readonly op: 'expiry';
      readonly id: string;
      readonly expiresAtNs: bigint | undefined;
    };

/** The change feed of a store several processes share (PostgreSQL: LISTEN/NOTIFY). */
export interface StoreFeed {
  /**
   * Report committed changes to `sink`, in commit order, starting with a `sync` once listening.
   * Returns a function that stops reporting to this sink.
   */
  follow(sink: (e: StoreEvent) => void): () => void;
  /**
   * Optional: `scanEntries` in the system scope over the feed's own connection, so a follower
   * catching up does not queue behind the requests' connections.
   */
  scanEntries?(opts: { afterLeafIndex?: number; limit: number }): Promise<StoredEntry[]>;
}

/** The whole storage port. */
export interface StorageBackend
  extends
    LogStore,
    RegistryStore,
    EntryStore,
    EntryStateStore,
    QuotaStore,
    ReviewStore,
    AuditStore,
    ApiKeyStore {
  /**
   * True when this process is the store's only writer, so every change passes through this
   * object: the embedded store (PGlite behind its data-folder lock) and the in-memory backend.
   * Absent on a server several processes share. The read model (`memory/read-model.ts`,
   * ADR 0018) runs only where it is true.
   */
  readonly exclusive?: boolean;
  /**
   * Offered by a store other processes write too (the PostgreSQL server): its change feed, so a
   * process can keep in-process state (the read model) current with their commits.
   */
  readonly feed?: StoreFeed | undefined;
  /**
   * Offered by an exclusive backend: a number that changes whenever a principal or key record
   * is written — through this object, any view of it or any transaction — once that write has
   * ended (committed or not). Two equal readings mean no key record changed in between, so a
   * caller may keep what it read of them without a time bound (the ledger's resolved writers:
   * a revocation takes effect on the very next write). Absent: no such promise.
   */
  readonly registryVersion?: number;
  /** Run `fn` so that its writes are all-or-nothing and serialised against other writers. */
  transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * A view of the same store whose every query runs for `principalId` (article Pattern 4):
   * it sees only that principal's rows plus global OPERATOR rows, and may not write OPERATOR
   * rows or rows owned by anyone else. Backends that enforce this in the database (PGlite,
   * PostgreSQL: row-level security) implement it; the object `open` returns acts as the system
   * scope (deployment tooling). A scoped view refuses to switch to another principal
   * (`INPUT_INVALID`); closing a view is a no-op (the root owns the connection).
   */
  asPrincipal?(principalId: string): StorageBackend;
}

/**
 * What `open` returns for every backend (in-memory, PGlite, PostgreSQL): the system scope, able
 * to hand out principal views. (`asPrincipal` is optional on {@link StorageBackend} only because
 * a transaction view need not offer it.)
 */
export type RootStorage = StorageBackend & { asPrincipal(principalId: string): StorageBackend };
