/**
 * @module memory/log/commit
 * The commit capability of the ledger, split out of `Ledger` (ADR 0029): signing a new entry
 * (`write`), committing an entry its writer signed (`submit`) and appending a signed tombstone
 * (`tombstone`). The records go to the ledger's pipelined group commit (ADR 0011, 0021, 0028),
 * which sequences them with registry statements and checks each against the registry at the
 * position it commits at, re-signing a record whose writer's key changed first (ADR 0033);
 * it is reached through `./commit-port.ts`, not through a method of the `Ledger`.
 *
 * Only `src/memory/write/` — the one write path every channel goes through — may import this
 * module (dependency-cruiser rule `commit-only-from-the-write-path`; the evaluation harnesses'
 * exemption is named there). Everything else holds a `Ledger`, which verifies, proves and
 * checkpoints but cannot write.
 */
import { sha256 } from '../../core/crypto/sha256.js';
import { keyIdFor } from '../../core/crypto/ids.js';
import type { Ed25519Signer } from '../../core/crypto/ed25519.js';
import { toBase64, toHex, utf8 } from '../../core/bytes.js';
import {
  type EntryBody,
  type SignedEntry,
  type SignedTombstone,
  decodeSignedEntry,
  entrySigningInput,
  encodeSignedEntry,
  encodeSignedTombstone,
  signEntry,
  encodeTombstoneBody,
  entryLeafData,
  safeDecodeSignedEntry,
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
import type { JsonObject } from '../../core/entry/meta.js';
import type { HostKeys } from '../identity/keys.js';
import type { Ledger } from './ledger.js';
import type { MerkleLog } from './log.js';
import { type CommitRecord, type Sequencer, quotaExceeded, sequencerOf } from './commit-port.js';

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
  /** Event time, ns (entry v2, ADR 0048). */
  readonly evt?: bigint;
  /** Caller metadata, a non-empty JSON object (entry v2). */
  readonly meta?: JsonObject;
  /** Run / session scope within the principal (entry v2). */
  readonly run?: string;
  /** Agent scope within the principal (entry v2). */
  readonly agent?: string;
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
  /**
   * A step that commits in the entry's own transaction, after the entry row is stored (e.g. a
   * review's decision, issue 17 finding 3): if it fails, the entry is not written either.
   */
  readonly inCommit?: (tx: StorageBackend, leafIndex: number, entry: SignedEntry) => Promise<void>;
}

/** A committed entry: the record, its exact bytes and where it sits in the log. */
export interface Receipt {
  readonly entry: SignedEntry;
  readonly bytes: Uint8Array;
  readonly leafIndex: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A writer's kind, current key and signer, as resolved from registry view `version`. */
interface ResolvedWriter {
  readonly kind: PrincipalKind;
  readonly kid: string;
  readonly signer: Ed25519Signer;
  readonly version: number;
}

const EMPTY_CTX = sha256(new Uint8Array(0));
const exhaustedKey = (d: QuotaDemand): string => `${d.principal}\u0000${d.tier}\u0000${d.dayKey}`;
/** How long a quota found exhausted refuses writes before they are signed (1 s). */
const EXHAUSTED_NS = 1_000_000_000n;

/** The key id of each host signer's public key (computed once per signer). */
const signerKids = new WeakMap<Ed25519Signer, string>();

/** Is `kid` the key id of `signer`'s own public key (not merely the key the host filed under it)? */
function signs(signer: Ed25519Signer, kid: string): boolean {
  let k = signerKids.get(signer);
  if (k === undefined) {
    k = keyIdFor(signer.publicKey.raw);
    signerKids.set(signer, k);
  }
  return k === kid;
}

/** One committer per ledger. */
const committers = new WeakMap<Ledger, Committer>();

/**
 * The commit capability of `ledger`: signs entries and tombstones with the host-held keys of
 * their writers and queues them, with their rows, on the ledger's group commit, which checks
 * each against the registry at the position it commits at (ADR 0033).
 */
export function committerOf(ledger: Ledger): Committer {
  return Committer.of(ledger);
}

export class Committer {
  /** See {@link committerOf}. */
  static of(ledger: Ledger): Committer {
    let c = committers.get(ledger);
    if (c === undefined) {
      c = new Committer(ledger);
      committers.set(ledger, c);
    }
    return c;
  }

  /** Entries a queued new version supersedes (see `write`). */
  private readonly superseding = new Set<string>();
  /**
   * Quotas found exhausted recently (writer, tier, day → the limit then and until when): a
   * write over a quota is refused before it is signed instead of in the commit. Only a hint
   * that something was refused at that limit; kept {@link EXHAUSTED_NS}, so a quota reset by an
   * operator is seen within that window.
   */
  private readonly exhausted = new Map<string, { limit: number; until: bigint }>();
  /** Resolved writers (kind, current key, signer), see `resolveWriter`. */
  private readonly writers = new Map<string, ResolvedWriter>();
  private readonly seq: Sequencer;
  private readonly storage: StorageBackend;
  private readonly log: MerkleLog;
  private readonly keys: HostKeys;
  private readonly clock: Clock;
  private readonly random: RandomSource;

  private constructor(private readonly ledger: Ledger) {
    this.seq = sequencerOf(ledger);
    this.storage = ledger.storage;
    this.log = ledger.log;
    this.keys = ledger.keys;
    this.clock = ledger.clock;
    this.random = ledger.random;
  }

  /**
   * Sign and commit one entry. Resolves after the entry is durable in the log and the store.
   * With `quota`, the writer's daily quota for the entry's tier is consumed in the same commit
   * transaction: over it, `QUOTA_EXCEEDED` and nothing is written. The receipt is the record
   * as committed: if the writer's key changed before the commit, it was re-signed there.
   */
  write(input: EntryInput, opts?: WriteOptions): Promise<Receipt> {
    // A writer resolved at the current registry view is used without a promise (ADR 0088).
    const hit = this.writers.get(input.writer);
    if (hit !== undefined && hit.version === this.seq.view.version)
      return this.writeAs(hit, input, opts);
    return this.resolveWriter(input.writer).then((w) => this.writeAs(w, input, opts));
  }

  private async writeAs(
    w: ResolvedWriter,
    input: EntryInput,
    opts: WriteOptions | undefined,
  ): Promise<Receipt> {
    if (!mayWriteTier(w.kind, input.tier)) {
      throw new MemwardenError(
        'ENTRY_INVALID',
        `a ${w.kind} principal may not write tier ${input.tier}`,
      );
    }
    const quota = opts?.quota === undefined ? undefined : this.demand(input, opts.quota);
    // One validation pass: encode the body, sign it, encode the record (core/entry signEntry).
    const signAndCommit = (lid?: string): Promise<Receipt> => {
      const { entry, bytes } = signEntry(this.buildBody(input, w.kid, lid), w.signer);
      const here = signs(w.signer, w.kid);
      return this.commitEntry(entry, bytes, opts?.embedding, quota, here, opts?.inCommit);
    };
    const sup = input.sup;
    if (sup === undefined) return signAndCommit();
    // One new version per entry at a time in this process: a second concurrent one is refused
    // here rather than failing the shared commit batch on the superseded mark.
    if (this.superseding.has(sup)) {
      throw new MemwardenError('STORAGE_CONFLICT', 'entry already being superseded', {
        details: { sup },
      });
    }
    this.superseding.add(sup);
    try {
      return await signAndCommit(await this.checkSupersedable(sup, input.writer));
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
  private async checkSupersedable(sup: string, writer: string): Promise<string> {
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
    return logicalIdOf(old);
  }

  /**
   * The writer's kind (from its signed registration), current key and signer, kept while the
   * registry view does not change. On a shared store the view may lag another process's
   * rotation or revocation; the commit re-checks every record against the registry at its
   * position (and re-signs or refuses it), so a stale key here costs a re-signature, never an
   * invalid acknowledged write.
   */
  private async resolveWriter(writer: string): Promise<ResolvedWriter> {
    const version = this.seq.view.version;
    const hit = this.writers.get(writer);
    if (hit !== undefined && hit.version === version) return hit;
    const kind = this.seq.view.kindOf(writer);
    if (kind === undefined) {
      // Registered by another ledger on the store, perhaps: read the log's statements now.
      await this.seq.refreshRegistry(true);
      if (this.seq.view.kindOf(writer) === undefined)
        throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown writer', { details: { writer } });
      return this.resolveWriter(writer);
    }
    const kid = this.seq.currentKey(writer).kid;
    const signer = kid === hit?.kid ? hit.signer : await this.keys.signer(kid);
    if (signer === undefined)
      throw new MemwardenError('KEY_UNKNOWN', 'the host does not hold the writer key');
    const resolved = { kind, kid, signer, version };
    if (this.writers.size >= 100_000) this.writers.clear();
    this.writers.set(writer, resolved);
    return resolved;
  }

  /**
   * Commit an entry signed elsewhere (the writer holds its own key). Decoded strictly and
   * verified against the signed registry before anything is written; checked again at its
   * position in the commit (refused, never re-signed, if its key changed meanwhile).
   */
  async submit(bytes: Uint8Array): Promise<Receipt> {
    const entry = decodeSignedEntry(bytes);
    await this.seq.refreshRegistry(true);
    const kind = this.seq.view.kindOf(entry.writer);
    if (kind === undefined) throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown writer');
    if (!mayWriteTier(kind, entry.tier))
      throw new MemwardenError('ENTRY_INVALID', 'tier above the writer kind');
    // The key must be valid at the position the entry will take: at least the committed
    // size, whichever process appended last (a revocation there may be another's).
    await this.log.refresh();
    const v = this.seq.view.verify(
      entry.writer,
      entry.kid,
      entry.ts,
      this.log.size,
      entrySigningInput(entry),
      entry.sig,
    );
    if (!v.ok) throw new MemwardenError(v.code, 'entry signature does not verify');
    if (entry.sup !== undefined && entry.lid !== undefined) {
      // A signed logical id must be the superseded memory's: no version joins another memory.
      const old = await this.storage.getEntry(entry.sup);
      if (old === undefined || logicalIdOf(old) !== entry.lid)
        throw new MemwardenError('ENTRY_INVALID', 'logical id differs from the superseded memory');
    }
    const canonical = encodeSignedEntry(entry);
    return this.commitEntry(entry, canonical, undefined, undefined, undefined);
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
    const w = await this.resolveWriter(by);
    const [ms, rand, nonce] = this.fresh();
    const body = {
      t: 'tombstone',
      v: 1,
      id: uuidv7(ms, rand),
      target,
      reason,
      writer: by,
      kid: w.kid,
      ts: this.clock.nowNs(),
      nonce,
    } as const;
    const state: { tombstone: SignedTombstone; bytes: Uint8Array } = {
      tombstone: { ...body, sig: w.signer.sign(tombstoneSigningInput(encodeTombstoneBody(body))) },
      bytes: new Uint8Array(0),
    };
    state.bytes = encodeSignedTombstone(state.tombstone);
    // The tombstone's leaf is in the log; its signed bytes go to the audit trail, and the
    // target is marked deleted, all in the commit transaction.
    const p: CommitRecord = {
      id: state.tombstone.id,
      leafData: tombstoneLeafData(state.tombstone),
      kind: 'tombstone',
      persist: async (tx, at) => {
        await tx.markDeleted(target);
        await tx.appendAudit({
          id: state.tombstone.id,
          atNs: state.tombstone.ts,
          actor: by,
          action: 'entry.deleted',
          subject: target,
          details: { reason, leafIndex: at, tombstone: toBase64(state.bytes) },
        });
      },
      quota: undefined,
      signed: {
        writer: by,
        kid: w.kid,
        ts: body.ts,
        resign: (kid, signer, ts) => {
          const { sig: _s, ...b } = state.tombstone;
          const nb = { ...b, kid, ts };
          state.tombstone = {
            ...nb,
            sig: signer.sign(tombstoneSigningInput(encodeTombstoneBody(nb))),
          };
          state.bytes = encodeSignedTombstone(state.tombstone);
          p.leafData = tombstoneLeafData(state.tombstone);
        },
      },
    };
    const leafIndex = await this.seq.enqueue(p);
    return { tombstone: state.tombstone, leafIndex };
  }

  private buildBody(input: EntryInput, kid: string, lid?: string): EntryBody {
    const [ms, rand, nonce] = this.fresh();
    const content = input.content;
    // Version 2 only when a v2 field is set (ADR 0048): a superseding version names its
    // memory's logical id, so an update keeps the id callers hold.
    const v2 =
      lid !== undefined ||
      input.evt !== undefined ||
      input.meta !== undefined ||
      input.run !== undefined ||
      input.agent !== undefined;
    const body: Mutable<EntryBody> = {
      t: 'entry',
      v: v2 ? 2 : 1,
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
    };
    // Optional fields set one by one, in the same order (absent, not undefined): a conditional
    // spread allocated an object per field on every write (ADR 0088).
    if (input.uri !== undefined) body.uri = input.uri;
    if (input.exp !== undefined) body.exp = input.exp;
    if (input.rev !== undefined) body.rev = input.rev;
    if (input.sup !== undefined) body.sup = input.sup;
    if (lid !== undefined) body.lid = lid;
    if (input.evt !== undefined) body.evt = input.evt;
    if (input.meta !== undefined) body.meta = input.meta;
    if (input.run !== undefined) body.run = input.run;
    if (input.agent !== undefined) body.agent = input.agent;
    return body;
  }

  private fresh(): [bigint, Uint8Array, Uint8Array] {
    const r = this.random.randomBytes(26);
    return [this.clock.nowNs() / 1_000_000n, r.subarray(0, 10), r.slice(10, 26)];
  }

  /**
   * Queue a signed entry with its query metadata (the signed bytes stay the source of truth)
   * for the group commit; the receipt of the record as committed.
   */
  private async commitEntry(
    entry0: SignedEntry,
    bytes0: Uint8Array,
    embedding: Float32Array | undefined,
    quota: QuotaDemand | undefined,
    /**
     * Host-held (the commit may re-sign it): whether the signer's key is the one the entry's kid
     * names; undefined for an entry signed elsewhere (`submit`).
     */
    hostHeld: boolean | undefined,
    inCommit?: (tx: StorageBackend, leafIndex: number, entry: SignedEntry) => Promise<void>,
  ): Promise<Receipt> {
    const mac = this.keys.macs.tag(bytes0);
    const state = {
      entry: entry0,
      bytes: bytes0,
      kid: mac.kid,
      tag: mac.tag,
      signedHere: hostHeld === true,
    };
    const stored = (leafIndex: number): StoredEntry => {
      const { entry, bytes } = state;
      // Optional fields set one by one (absent, not undefined): a conditional spread per field
      // allocated an object each, on every write.
      const row: Mutable<StoredEntry> = {
        id: entry.id,
        owner: entry.ns,
        tier: entry.tier,
        bytes,
        leafIndex,
        macKid: state.kid,
        mac: state.tag,
        writer: entry.writer,
        kind: entry.kind,
        createdAtNs: entry.ts,
        content: entry.content,
        srcHash: toHex(entry.src),
        memoryId: entry.lid ?? entry.id,
      };
      if (entry.exp !== undefined) row.expiresAtNs = entry.exp;
      if (entry.uri !== undefined) row.uri = entry.uri;
      if (embedding !== undefined) row.embedding = embedding;
      if (entry.evt !== undefined) row.eventAtNs = entry.evt;
      if (entry.meta !== undefined) row.metadata = entry.meta;
      if (entry.run !== undefined) row.runId = entry.run;
      if (entry.agent !== undefined) row.agentId = entry.agent;
      return row;
    };
    const sup = entry0.sup;
    // A new version and the superseded mark on the old one commit in one transaction (the
    // system scope's), so no crash leaves both versions live (found by test/faults' audit).
    // An `inCommit` step (a review's decision) commits with the entry the same way.
    const persist =
      sup === undefined && inCommit === undefined
        ? { entry: stored }
        : async (tx: StorageBackend, leafIndex: number): Promise<void> => {
            await tx.putEntry(stored(leafIndex));
            if (sup !== undefined) {
              await tx.markSuperseded(sup, state.entry.id);
              // The claim the read path checks against the new version's signed `sup`.
              await tx.appendAudit({
                id: `sup-${state.entry.id}`,
                atNs: state.entry.ts,
                actor: state.entry.writer,
                action: 'entry.superseded',
                subject: sup,
                details: { by: state.entry.id, leafIndex },
              });
            }
            if (inCommit !== undefined) await inCommit(tx, leafIndex, state.entry);
          };
    // Optional fields set one by one, as in `buildBody` (ADR 0088).
    const signed: Mutable<CommitRecord['signed']> = {
      writer: entry0.writer,
      kid: entry0.kid,
      ts: entry0.ts,
      tier: entry0.tier,
    };
    const p: Mutable<CommitRecord> = {
      id: entry0.id,
      leafData: entryLeafData(entry0),
      kind: 'entry',
      persist,
      quota,
      signed,
    };
    if (sup !== undefined) p.supersedes = sup;
    if (hostHeld !== undefined) {
      signed.resign = (kid: string, signer: Ed25519Signer, ts: bigint): void => {
        const { sig: _s, ...b } = state.entry;
        const r = signEntry({ ...b, kid, ts }, signer);
        Object.assign(
          state,
          { entry: r.entry, bytes: r.bytes, signedHere: signs(signer, kid) },
          this.keys.macs.tag(r.bytes),
        );
        p.leafData = entryLeafData(r.entry);
      };
      signed.verifiedHere = () =>
        state.signedHere ? { mac: state.tag, bytes: state.bytes, entry: state.entry } : undefined;
    }
    let leafIndex: number;
    try {
      leafIndex = await this.seq.enqueue(p);
    } catch (e) {
      if (quota !== undefined && (e as { code?: unknown }).code === 'QUOTA_EXCEEDED')
        this.noteExhausted(quota);
      throw e;
    }
    return { entry: state.entry, bytes: state.bytes, leafIndex };
  }

  /** Wait until every queued write has committed or failed. */
  drain(): Promise<void> {
    return this.ledger.drain();
  }
}

/**
 * The logical memory id of a stored entry, from its signed bytes (`lid`, else its own id;
 * ADR 0049): never from the denormalised column, which the signed record outranks.
 */
export function logicalIdOf(e: StoredEntry): string {
  const d = safeDecodeSignedEntry(e.bytes);
  return d.ok ? (d.value.lid ?? d.value.id) : e.id;
}
