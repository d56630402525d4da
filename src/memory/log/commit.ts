/**
 * @module memory/log/commit
 * The commit capability of the ledger, split out of `Ledger` (ADR 0029): signing a new entry
 * (`write`), committing an entry its writer signed (`submit`) and appending a signed tombstone
 * (`tombstone`), all through the pipelined group commit (ADR 0011, 0021, 0028).
 *
 * Only `src/memory/write/` — the one write path every channel goes through — may import this
 * module (dependency-cruiser rule `commit-only-from-the-write-path`; the evaluation harnesses'
 * exemption is named there). Everything else holds a `Ledger`, which verifies, proves and
 * checkpoints but cannot write.
 */
import { sha256 } from '../../core/crypto/sha256.js';
import type { Ed25519Signer } from '../../core/crypto/ed25519.js';
import { toBase64, toHex, utf8 } from '../../core/bytes.js';
import {
  type EntryBody,
  type SignedEntry,
  type SignedTombstone,
  decodeSignedEntry,
  encodeEntryBody,
  encodeSignedEntry,
  encodeSignedTombstone,
  signEntry,
  encodeTombstoneBody,
  entryLeafData,
  signingInput,
  tombstoneLeafData,
  tombstoneSigningInput,
  uuidv7,
} from '../../core/entry/index.js';
import { MemwardenError } from '../../core/errors.js';
import {
  type PrincipalKind,
  type SourceTier,
  type TrustLabel,
  baseLabel,
  mayWriteTier,
} from '../../core/trust.js';
import type { Clock, RandomSource } from '../../ports/clock.js';
import type { QuotaDemand, StorageBackend, StoredEntry } from '../../ports/storage.js';
import type { HostKeys } from '../identity/keys.js';
import type { VerifierRegistry } from '../identity/registry.js';
import type { CommitQueue, Ledger } from './ledger.js';
import type { LockedAppend, MerkleLog } from './log.js';

/** What a caller supplies for a new entry; the ledger fills in id, time, nonce and key. */
export interface EntryInput {
  readonly writer: string;
  readonly content: string;
  readonly tier: SourceTier;
  readonly kind?: string;
  /** Principal scope; defaults to the writer. */
  readonly ns?: string;
  /** Lineage label; defaults to the tier's base label (the lineage layer computes it). */
  readonly label?: TrustLabel;
  readonly parents?: readonly string[];
  readonly weights?: readonly number[];
  /** SHA-256 of the original data blob; defaults to SHA-256(content). */
  readonly src?: Uint8Array;
  /** SHA-256 of the write-time context; defaults to SHA-256 of the empty context. */
  readonly ctx?: Uint8Array;
  readonly uri?: string;
  readonly exp?: bigint;
  readonly rev?: string;
  readonly sup?: string;
}

/**
 * The daily quota a write consumes in its commit transaction (issue 3, article Pattern 5). The
 * row is always the writer's own for the entry's tier — the caller names only the day and the
 * limit, never whose quota — so committing through the system scope charges exactly the row
 * the writer's own scoped view could.
 */
export interface WriteQuota {
  /** UTC day, `YYYY-MM-DD` (`memory/config.ts` `dayKey`). */
  readonly dayKey: string;
  /** Writes allowed per day for this tier. */
  readonly limit: number;
}

/** Options of {@link Ledger.write}. */
export interface WriteOptions {
  readonly embedding?: Float32Array;
  /**
   * Consume one write of the writer's daily quota atomically with the write: counted only if
   * the write commits; over the limit, the write is refused with `QUOTA_EXCEEDED` and nothing
   * of it is stored (no leaf, no entry, no count). ADR 0021.
   */
  readonly quota?: WriteQuota;
}

/** A committed entry: the record, its exact bytes and where it sits in the log. */
export interface Receipt {
  readonly entry: SignedEntry;
  readonly bytes: Uint8Array;
  readonly leafIndex: number;
}

interface Pending {
  readonly id: string;
  readonly leafData: Uint8Array;
  readonly kind: 'entry' | 'tombstone';
  /**
   * Persist the record inside the commit transaction, once its leaf index is known: either a
   * stored entry (batched with its neighbours into one `putEntries` call) or a callback.
   */
  readonly persist:
    | { readonly entry: (leafIndex: number) => StoredEntry }
    | ((tx: StorageBackend, leafIndex: number) => Promise<void>);
  /** The quota this write consumes in the commit transaction (none: not counted). */
  readonly quota: QuotaDemand | undefined;
  readonly resolve: (leafIndex: number) => void;
  readonly reject: (e: unknown) => void;
}

/** A writer's kind, current key and signer, as resolved at `at` (store registry `version`). */
interface ResolvedWriter {
  readonly kind: PrincipalKind;
  readonly kid: string;
  readonly signer: Ed25519Signer;
  readonly at: bigint;
  readonly version: number | undefined;
}

/** The refusal of a write over its daily quota (the error `Memory.add` reports). */
function quotaExceeded(d: { tier: SourceTier; limit: number }): MemwardenError {
  return new MemwardenError('QUOTA_EXCEEDED', `daily ${d.tier} write quota of ${d.limit} reached`, {
    details: { tier: d.tier, limit: d.limit },
  });
}

/**
 * Count the quota of the writes in a taken batch, inside its commit transaction: one
 * `consumeQuotas` call for the whole batch (one set-based statement on the SQL backends), or
 * one `consumeQuota` per write where a wrapper lacks it. Returns the writes admitted (in order)
 * and those refused.
 */
async function admitQuotas(
  tx: StorageBackend,
  batch: readonly Pending[],
): Promise<{ admitted: Pending[]; refused: Pending[] }> {
  const counted = batch.filter((p) => p.quota !== undefined);
  if (counted.length === 0) return { admitted: [...batch], refused: [] };
  const demands = counted.map((p) => p.quota as QuotaDemand);
  let verdicts: boolean[];
  if (tx.consumeQuotas !== undefined) verdicts = await tx.consumeQuotas(demands);
  else {
    verdicts = [];
    for (const d of demands)
      verdicts.push((await tx.consumeQuota(d.principal, d.tier, d.dayKey, d.limit)).ok);
  }
  const refused = new Set(counted.filter((_, i) => verdicts[i] !== true));
  if (refused.size === 0) return { admitted: [...batch], refused: [] };
  return { admitted: batch.filter((p) => !refused.has(p)), refused: [...refused] };
}

/**
 * Persist a committed batch in log order: runs of stored entries go to the store in one
 * multi-row `putEntries` call (one statement instead of one per entry), callbacks (tombstones)
 * run in between, so every record still lands after the ones queued before it.
 */
async function persistBatch(
  tx: StorageBackend,
  batch: readonly Pending[],
  start: number,
): Promise<void> {
  let run: StoredEntry[] = [];
  const flush = async (): Promise<void> => {
    if (run.length === 0) return;
    const es = run;
    run = [];
    if (tx.putEntries !== undefined) await tx.putEntries(es);
    else for (const e of es) await tx.putEntry(e);
  };
  for (let i = 0; i < batch.length; i++) {
    const p = (batch[i] as Pending).persist;
    if (typeof p === 'function') {
      await flush();
      await p(tx, start + i);
    } else run.push(p.entry(start + i));
  }
  await flush();
}

const EMPTY_CTX = sha256(new Uint8Array(0));
const exhaustedKey = (d: QuotaDemand): string => `${d.principal}\u0000${d.tier}\u0000${d.dayKey}`;
/** Commit transactions open at once: one holding the log head, one queued behind it. */
const COMMIT_DEPTH = 2;
/** Most records one commit transaction takes (bounds its statements and its lock hold). */
const MAX_BATCH = 2048;
/** How long a resolved writer key is reused (1 s). */
const WRITER_CACHE_NS = 1_000_000_000n;
/** How long a quota found exhausted refuses writes before they are signed (1 s). */
const EXHAUSTED_NS = 1_000_000_000n;

/** One committer per ledger (its queue is the log's append order in this process). */
const committers = new WeakMap<Ledger, Committer>();

/**
 * The ledger's committer: created on first use and attached to the ledger, which drains it
 * before checkpoints, revocations and close, and tells it when keys change.
 */
export function committerOf(ledger: Ledger): Committer {
  return Committer.of(ledger);
}

export class Committer implements CommitQueue {
  /** See {@link committerOf}. */
  static of(ledger: Ledger): Committer {
    let c = committers.get(ledger);
    if (c === undefined) {
      c = new Committer(ledger);
      committers.set(ledger, c);
    }
    return c;
  }

  private pending: Pending[] = [];
  /** Entries a queued new version supersedes (see `write`). */
  private readonly superseding = new Set<string>();
  /**
   * Quotas found exhausted recently (writer, tier, day → the limit then and until when): a
   * write over a quota is refused before it is signed instead of in the commit. Only a hint
   * that something was refused at that limit; kept {@link EXHAUSTED_NS}, so a quota reset by an
   * operator is seen within that window.
   */
  private readonly exhausted = new Map<string, { limit: number; until: bigint }>();
  /** Commit transactions open (≤ COMMIT_DEPTH). */
  private inflight = 0;
  /** A commit transaction is waiting for the log head. */
  private waiting = false;
  /** Settles when the most recently opened commit transaction has finished. */
  private lastCommit: Promise<void> = Promise.resolve();
  /** Resolved writers (kind, current key, signer), see `resolveWriter`. */
  private readonly writers = new Map<string, ResolvedWriter>();
  private readonly writerLookups = new Map<
    string,
    { lookup: Promise<ResolvedWriter>; version: number | undefined }
  >();
  private readonly storage: StorageBackend;
  private readonly log: MerkleLog;
  private readonly registry: VerifierRegistry;
  private readonly keys: HostKeys;
  private readonly clock: Clock;
  private readonly random: RandomSource;

  private constructor(private readonly ledger: Ledger) {
    this.storage = ledger.storage;
    this.log = ledger.log;
    this.registry = ledger.registry;
    this.keys = ledger.keys;
    this.clock = ledger.clock;
    this.random = ledger.random;
    ledger.attachCommitQueue(this);
  }

  /** A key of `principal` (or any key, when absent) changed: resolve writers again. */
  keysChanged(principal?: string): void {
    if (principal === undefined) this.writers.clear();
    else this.writers.delete(principal);
  }

  private currentKid(principalId: string): Promise<string> {
    return this.ledger.currentKid(principalId);
  }

  // ---- write path --------------------------------------------------------------------------

  /**
   * Sign and commit one entry. Resolves after the entry is durable in the log and the store.
   * With `quota`, the writer's daily quota for the entry's tier is consumed in the same commit
   * transaction: over it, `QUOTA_EXCEEDED` and nothing is written.
   */
  async write(input: EntryInput, opts?: WriteOptions): Promise<Receipt> {
    const w = await this.resolveWriter(input.writer);
    if (!mayWriteTier(w.kind, input.tier)) {
      throw new MemwardenError(
        'ENTRY_INVALID',
        `a ${w.kind} principal may not write tier ${input.tier}`,
      );
    }
    const quota = opts?.quota === undefined ? undefined : this.demand(input, opts.quota);
    const sup = input.sup;
    if (sup === undefined) {
      // One validation pass: encode the body, sign it, encode the record (core/entry signEntry).
      const { entry, bytes } = signEntry(this.buildBody(input, w.kid), w.signer);
      const leafIndex = await this.commitEntry(entry, bytes, opts?.embedding, quota);
      return { entry, bytes, leafIndex };
    }
    // One new version per entry at a time in this process: a second concurrent one is refused
    // here rather than failing the shared commit batch on the superseded mark.
    if (this.superseding.has(sup)) {
      throw new MemwardenError('STORAGE_CONFLICT', 'entry already being superseded', {
        details: { sup },
      });
    }
    this.superseding.add(sup);
    try {
      await this.checkSupersedable(sup, input.writer);
      const { entry, bytes } = signEntry(this.buildBody(input, w.kid), w.signer);
      const leafIndex = await this.commitEntry(entry, bytes, opts?.embedding, quota);
      return { entry, bytes, leafIndex };
    } finally {
      this.superseding.delete(sup);
    }
  }

  /**
   * The quota demand of a write: always the writer's own row for the entry's tier. Refused at
   * once (before signing) while the same quota was found exhausted at this or a higher limit
   * within the last {@link EXHAUSTED_NS}; the commit transaction decides otherwise.
   */
  private demand(input: EntryInput, q: WriteQuota): QuotaDemand {
    if (typeof q.dayKey !== 'string' || q.dayKey.length === 0 || !Number.isSafeInteger(q.limit))
      throw new MemwardenError('INPUT_INVALID', 'malformed write quota');
    const d = { principal: input.writer, tier: input.tier, dayKey: q.dayKey, limit: q.limit };
    const hit = this.exhausted.get(exhaustedKey(d));
    if (
      (hit !== undefined && q.limit <= hit.limit && this.clock.nowNs() < hit.until) ||
      q.limit < 1
    )
      throw quotaExceeded(d);
    return d;
  }

  /** Remember a refusal (see {@link demand}); bounded. */
  private noteExhausted(d: QuotaDemand): void {
    if (this.exhausted.size >= 10_000) this.exhausted.clear();
    this.exhausted.set(exhaustedKey(d), {
      limit: d.limit,
      until: this.clock.nowNs() + EXHAUSTED_NS,
    });
  }

  /**
   * A new version may supersede only a live entry of its own writer's scope: checked before
   * the write is queued, so a refusal changes nothing and never fails a shared commit batch.
   */
  private async checkSupersedable(sup: string, writer: string): Promise<void> {
    const old = await this.storage.getEntry(sup);
    if (old === undefined || old.deleted === true || old.owner !== writer) {
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such entry to supersede', {
        details: { sup },
      });
    }
    if (old.supersededBy !== undefined) {
      throw new MemwardenError('STORAGE_CONFLICT', 'entry already superseded', {
        details: { sup, by: old.supersededBy },
      });
    }
  }

  /**
   * The writer's kind, current key and signer. A rotation or revocation made through this
   * ledger clears the cache at once. On a store that offers `registryVersion` (an exclusive
   * one: every key write passes through this process) an entry is kept until that version
   * moves — any key or principal write, by any caller — so a revocation takes effect on the
   * next write and a writer's key is not re-read while nothing changed. Elsewhere it is kept
   * {@link WRITER_CACHE_NS}: one made by another process is seen within that window (and
   * readers re-verify key validity against the log regardless).
   */
  private resolveWriter(
    writer: string,
  ): Promise<{ kind: PrincipalKind; kid: string; signer: Ed25519Signer }> {
    const now = this.clock.nowNs();
    // Read before the lookup: a key write ending after this reading makes the result stale.
    const version = this.storage.registryVersion;
    const hit = this.writers.get(writer);
    if (
      hit !== undefined &&
      (version === undefined ? now - hit.at < WRITER_CACHE_NS : hit.version === version)
    )
      return Promise.resolve(hit);
    // One lookup in flight per writer: a burst of concurrent writes shares it (not one begun
    // before a key write that has ended since).
    const inflight = this.writerLookups.get(writer);
    if (inflight !== undefined && inflight.version === version) return inflight.lookup;
    const lookup = (async () => {
      // A principal is never deleted and its kind never changes: once known, only its keys
      // (rotation, revocation) are read again — one storage call per refresh, not two.
      let kind = hit?.kind;
      if (kind === undefined) {
        const principal = await this.storage.getPrincipal(writer);
        if (principal === undefined) {
          throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown writer', { details: { writer } });
        }
        kind = principal.kind;
      }
      const kid = await this.currentKid(writer);
      const signer = kid === hit?.kid ? hit.signer : await this.keys.signer(kid);
      if (signer === undefined)
        throw new MemwardenError('KEY_UNKNOWN', 'the host does not hold the writer key');
      const resolved = { kind, kid, signer, at: now, version };
      this.writers.set(writer, resolved);
      return resolved;
    })().finally(() => {
      if (this.writerLookups.get(writer)?.lookup === lookup) this.writerLookups.delete(writer);
    });
    this.writerLookups.set(writer, { lookup, version });
    return lookup;
  }

  /**
   * Commit an entry signed elsewhere (the writer holds its own key). Decoded strictly and
   * verified against the registry before anything is written.
   */
  async submit(bytes: Uint8Array): Promise<Receipt> {
    const entry = decodeSignedEntry(bytes);
    const principal = await this.storage.getPrincipal(entry.writer);
    if (principal === undefined) throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown writer');
    if (!mayWriteTier(principal.kind, entry.tier))
      throw new MemwardenError('ENTRY_INVALID', 'tier above the writer kind');
    // The key must be valid at the position the entry will take: at least the committed
    // size, whichever process appended last (a revocation there may be another's).
    await this.log.refresh();
    const v = await this.registry.verifyFor(
      entry.writer,
      entry.kid,
      entry.ts,
      signingInput(encodeEntryBody(entry)),
      entry.sig,
      {
        leafIndex: this.log.size,
      },
    );
    if (!v.ok) throw new MemwardenError(v.code, 'entry signature does not verify');
    const canonical = encodeSignedEntry(entry);
    const leafIndex = await this.commitEntry(entry, canonical, undefined);
    return { entry, bytes: canonical, leafIndex };
  }

  /** Delete by appending a signed tombstone (MemLineage §3.4); the original leaf stays provable. */
  async tombstone(
    target: string,
    reason: string,
    by: string,
  ): Promise<{ tombstone: SignedTombstone; leafIndex: number }> {
    const stored = await this.storage.getEntry(target);
    if (stored === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such entry', { details: { target } });
    const kid = await this.currentKid(by);
    const signer = await this.keys.signer(kid);
    if (signer === undefined)
      throw new MemwardenError('KEY_UNKNOWN', 'the host does not hold the deleting key');
    const [ms, rand, nonce] = this.fresh();
    const body = {
      t: 'tombstone',
      v: 1,
      id: uuidv7(ms, rand),
      target,
      reason,
      writer: by,
      kid,
      ts: this.clock.nowNs(),
      nonce,
    } as const;
    const tombstone: SignedTombstone = {
      ...body,
      sig: signer.sign(tombstoneSigningInput(encodeTombstoneBody(body))),
    };
    const bytes = encodeSignedTombstone(tombstone);
    // The tombstone's leaf is in the log; its signed bytes go to the audit trail, and the
    // target is marked deleted, all in the commit transaction.
    const leafIndex = await this.enqueue(
      tombstone.id,
      tombstoneLeafData(tombstone),
      'tombstone',
      async (tx, at) => {
        await tx.markDeleted(target);
        await tx.appendAudit({
          id: tombstone.id,
          atNs: tombstone.ts,
          actor: by,
          action: 'entry.deleted',
          subject: target,
          details: { reason, leafIndex: at, tombstone: toBase64(bytes) },
        });
      },
    );
    return { tombstone, leafIndex };
  }

  private buildBody(input: EntryInput, kid: string): EntryBody {
    const [ms, rand, nonce] = this.fresh();
    const content = input.content;
    return {
      t: 'entry',
      v: 1,
      id: uuidv7(ms, rand),
      ns: input.ns ?? input.writer,
      writer: input.writer,
      kid,
      kind: input.kind ?? 'note',
      content,
      tier: input.tier,
      label: input.label ?? baseLabel(input.tier),
      src: input.src ?? sha256(utf8.encode(content)),
      ctx: input.ctx ?? EMPTY_CTX,
      parents: input.parents ?? [],
      weights: input.weights ?? [],
      ts: this.clock.nowNs(),
      nonce,
      ...(input.uri === undefined ? {} : { uri: input.uri }),
      ...(input.exp === undefined ? {} : { exp: input.exp }),
      ...(input.rev === undefined ? {} : { rev: input.rev }),
      ...(input.sup === undefined ? {} : { sup: input.sup }),
    };
  }

  private fresh(): [bigint, Uint8Array, Uint8Array] {
    const r = this.random.randomBytes(26);
    return [this.clock.nowNs() / 1_000_000n, r.subarray(0, 10), r.slice(10, 26)];
  }

  /**
   * Group commit: records queue while a transaction is in flight and the next transaction
   * takes them all. A write resolves only after its transaction committed (no acknowledged
   * write is ever lost); a failed transaction rejects every write in it and changes nothing.
   */
  /** Queue a signed entry with its query metadata (the signed bytes stay the source of truth). */
  private commitEntry(
    entry: SignedEntry,
    bytes: Uint8Array,
    embedding: Float32Array | undefined,
    quota?: QuotaDemand,
  ): Promise<number> {
    const { kid: macKid, tag: mac } = this.keys.macs.tag(bytes);
    const stored = (leafIndex: number): StoredEntry => ({
      id: entry.id,
      owner: entry.ns,
      tier: entry.tier,
      bytes,
      leafIndex,
      macKid,
      mac,
      writer: entry.writer,
      kind: entry.kind,
      createdAtNs: entry.ts,
      content: entry.content,
      srcHash: toHex(entry.src),
      ...(entry.exp === undefined ? {} : { expiresAtNs: entry.exp }),
      ...(entry.uri === undefined ? {} : { uri: entry.uri }),
      ...(embedding === undefined ? {} : { embedding }),
    });
    const sup = entry.sup;
    // A new version and the superseded mark on the old one commit in one transaction (the
    // system scope's), so no crash leaves both versions live (found by test/faults' audit).
    const persist =
      sup === undefined
        ? { entry: stored }
        : async (tx: StorageBackend, leafIndex: number): Promise<void> => {
            await tx.putEntry(stored(leafIndex));
            await tx.markSuperseded(sup, entry.id);
          };
    return this.enqueue(entry.id, entryLeafData(entry), 'entry', persist, quota);
  }

  /**
   * Pipelined group commit (ADR 0011). Records queue; up to {@link COMMIT_DEPTH} commit
   * transactions are open at once: one holds the log head (appending and committing its
   * batch), the next waits for the head lock in the database. A transaction takes its batch
   * only once it holds the head — everything signed while the previous one committed — so
   * leaf order is commit order, batches are as large as the load makes them, and signing the
   * next batch overlaps the database work of this one. A write resolves only after its
   * transaction committed (no acknowledged write is ever lost); a failed transaction rejects
   * every write in it and changes nothing.
   */
  private enqueue(
    id: string,
    leafData: Uint8Array,
    kind: 'entry' | 'tombstone',
    persist: Pending['persist'],
    quota?: QuotaDemand,
  ): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.pending.push({ id, leafData, kind, persist, quota, resolve, reject });
      this.pump();
    });
  }

  /** Open the next commit transaction if records wait, none is queued for the head, and the pipeline has room. */
  private pump(): void {
    if (this.waiting || this.inflight >= COMMIT_DEPTH || this.pending.length === 0) return;
    this.inflight++;
    this.waiting = true;
    const previous = this.lastCommit;
    let settle!: () => void;
    this.lastCommit = new Promise<void>((r) => (settle = r));
    void this.commitNext(previous).finally(() => {
      this.inflight--;
      settle();
      this.pump();
    });
  }

  private async commitNext(previous: Promise<void>): Promise<void> {
    let taken: Pending[] | undefined;
    let batch: Pending[] = [];
    let refused: Pending[] = [];
    let appended: LockedAppend | undefined;
    try {
      await this.storage.transaction(async (tx) => {
        const size = await this.log.lockHead(tx);
        // The head is ours, so the previous transaction has ended in the database; wait for
        // its outcome here too (the log's tip is trusted only after a commit).
        await previous;
        // A single-writer store (no head lock) gives the head without I/O, so without this turn
        // the batch would be taken before the event loop ran since the previous commit: the
        // requests that arrived during it (an HTTP server's) would each get a commit of their
        // own. One turn lets them reach the queue; with a head lock, its wait is that turn.
        if (tx.lockLogHead === undefined) await new Promise<void>((r) => setImmediate(r));
        taken = this.pending.splice(0, MAX_BATCH);
        this.waiting = false;
        this.pump(); // the next transaction queues for the head while this one commits
        if (taken.length === 0) return;
        // Quotas first, in queue order: a refused write gets no leaf, no row and no count.
        ({ admitted: batch, refused } = await admitQuotas(tx, taken));
        if (batch.length === 0) return;
        appended = await this.log.appendLocked(
          size,
          batch.map((p) => ({ data: p.leafData, entryId: p.id, kind: p.kind })),
          tx,
        );
        await persistBatch(tx, batch, appended.start);
      });
    } catch (e) {
      this.waiting = false;
      this.log.abandon();
      // Failed before taking a batch (e.g. no connection): fail what waits, do not spin. A
      // failed batch fails every write taken, refused ones too (their verdicts rolled back).
      for (const p of taken ?? this.pending.splice(0)) p.reject(e);
      return;
    }
    for (const p of refused) {
      const d = p.quota as QuotaDemand;
      this.noteExhausted(d);
      p.reject(quotaExceeded(d));
    }
    if (appended === undefined) return;
    this.log.committed(appended);
    const start = appended.start;
    batch.forEach((p, i) => p.resolve(start + i));
  }

  /** Wait until every queued write has committed or failed. */
  async drain(): Promise<void> {
    while (this.inflight > 0 || this.pending.length > 0) await this.lastCommit;
  }
}
