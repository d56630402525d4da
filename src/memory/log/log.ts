/**
 * @module memory/log/log
 * The application's append-only Merkle log (RFC 6962 / RFC 9162) over the LogStore port.
 *
 * Only the frontier (the perfect-subtree roots of the size decomposition, ≤ log2 n + 1 hashes)
 * lives in memory; every completed perfect subtree is stored once, together with the leaves
 * that completed it, in one atomic `appendLeaves` call. Proofs are planned in core/merkle and
 * read exactly the planned nodes in one `getNodes` call; the non-perfect right-border hashes
 * of the current size are cached, so a proof at the latest size is pure lookups.
 *
 * Appends through one MerkleLog are serialised. Another writer moving the log is detected by
 * the store (`STORAGE_CONFLICT`): the log reloads its state and rethrows, so it never forks.
 * The ledger's group commit appends under the database's sequencing instead (`lockHead` +
 * `appendLocked`, ADR 0011): the head is locked inside the commit transaction, a stale
 * frontier is re-read there, and nothing becomes visible here until the commit is reported
 * (`committed`). Full recomputation lives in ./log-audit.ts.
 */
import { bytesEqual } from '../../core/bytes.js';
import { MemwardenError, isMemwardenError } from '../../core/errors.js';
import {
  type Frontier,
  EMPTY_FRONTIER,
  appendToFrontier,
  frontierFromHashes,
  frontierRefs,
  rightBorderHashes,
} from '../../core/merkle/frontier.js';
import { HASH_SIZE, emptyRoot, leafHash } from '../../core/merkle/hash.js';
import {
  type NodeRef,
  type RangePlan,
  consistencyPlan,
  foldRight,
  inclusionPlan,
  rootPlan,
} from '../../core/merkle/plan.js';
import { signCheckpoint } from '../../core/merkle/checkpoint.js';
import type { NoteSignFn } from '../../core/merkle/note.js';
import type { Clock } from '../../ports/clock.js';
import type { CheckpointRecord, LeafKind, LeafRecord, LogStore } from '../../ports/storage.js';
import { type AuditOptions, type AuditReport, auditLog } from './log-audit.js';

/** One leaf to append: its RFC 6962 leaf input and what it commits. */
export interface LogLeafInput {
  readonly data: Uint8Array;
  readonly entryId: string;
  readonly kind: LeafKind;
}

/** Where an append landed. */
export interface AppendResult {
  /** Index of the first appended leaf. */
  readonly start: number;
  /** Log size after the append. */
  readonly size: number;
  readonly leafHashes: readonly Uint8Array[];
}

/** An append made under the head lock, not visible until its transaction commits. */
export interface LockedAppend extends AppendResult {
  /** The frontier after the append (what `committed` publishes). */
  readonly frontier: Frontier;
}

/** The key that signs checkpoints (an Ed25519 key; the sign function is injected). */
export interface CheckpointSigner {
  /** Signed-note key name; by the tlog-checkpoint spec it SHOULD equal the origin. */
  readonly keyName: string;
  readonly publicKey: Uint8Array;
  readonly sign: NoteSignFn;
}

export interface MerkleLogOptions {
  /** Checkpoint origin line (the log identity). Default `memwarden.local/log`. */
  readonly origin?: string;
  /** Clock for checkpoint timestamps. Default: wall clock. */
  readonly clock?: Clock;
}

/** Default checkpoint origin. */
export const DEFAULT_LOG_ORIGIN = 'memwarden.local/log';

const wallClock: Clock = { nowNs: () => BigInt(Date.now()) * 1_000_000n };

/** The append-only Merkle log over a LogStore. Create with `MerkleLog.open`. */
export class MerkleLog {
  readonly origin: string;
  private readonly clock: Clock;
  private frontier: Frontier = EMPTY_FRONTIER;
  /** Right-border hashes at `frontier.size`, keyed by range start; built lazily. */
  private border: Map<number, Uint8Array> | undefined;
  /** Tail of the append queue: appends through one instance run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The frontier after the newest `appendLocked` (committed or still in flight), or undefined
   * when unknown (a transaction failed): the next locked append then re-reads the frontier.
   */
  private tip: Frontier | undefined;

  private constructor(
    private readonly store: LogStore,
    opts: MerkleLogOptions,
  ) {
    this.origin = opts.origin ?? DEFAULT_LOG_ORIGIN;
    this.clock = opts.clock ?? wallClock;
  }

  /** Open the log stored in `store`: read its size and frontier (one `getNodes` call). */
  static async open(store: LogStore, opts: MerkleLogOptions = {}): Promise<MerkleLog> {
    const log = new MerkleLog(store, opts);
    await log.reload();
    return log;
  }

  /** Re-read size and frontier from the store (after a conflict or a rolled-back transaction). */
  async reload(): Promise<void> {
    const size = await this.store.logSize();
    const refs = frontierRefs(size);
    const hashes = refs.length === 0 ? [] : await this.store.getNodes(refs);
    this.frontier = frontierFromHashes(size, hashes);
    this.border = undefined;
  }

  /**
   * Catch up with leaves other processes appended (several processes sharing one database):
   * re-read the committed size and, if it grew, the frontier. Never moves backwards.
   */
  async refresh(): Promise<void> {
    const size = await this.store.logSize();
    if (size <= this.frontier.size) return;
    const f = await this.frontierAt(this.store, size);
    if (f.size > this.frontier.size) {
      this.frontier = f;
      this.border = undefined;
    }
  }

  private async frontierAt(store: LogStore, size: number): Promise<Frontier> {
    const refs = frontierRefs(size);
    return frontierFromHashes(size, refs.length === 0 ? [] : await store.getNodes(refs));
  }

  /**
   * Inside a storage transaction `tx`: lock the log head for the rest of it (the database's
   * sequence point, `LogStore.lockLogHead`; a single-writer store without one reads its size)
   * and return the committed size. Waits while another transaction — of this process or
   * another — holds the head.
   */
  lockHead(tx: LogStore): Promise<number> {
    return tx.lockLogHead !== undefined ? tx.lockLogHead() : tx.logSize();
  }

  /**
   * Append at `size`, the size `lockHead(tx)` returned, inside the same transaction. The
   * frontier to extend is this instance's tip when it stands at `size` (our previous append
   * committed and nobody appended since), else the committed frontier read through `tx`. The
   * caller must not call this before the outcome of its previous locked append is known
   * (`committed` or `abandon`), and reports this one's outcome the same way.
   */
  async appendLocked(
    size: number,
    leaves: readonly LogLeafInput[],
    tx: LogStore,
  ): Promise<LockedAppend> {
    let base = this.tip;
    if (base?.size !== size)
      base = size === this.frontier.size ? this.frontier : await this.frontierAt(tx, size);
    const { hashes, records } = leafRecords(size, leaves);
    const next = appendToFrontier(base, hashes);
    await tx.appendLeaves(size, records, next.completed);
    this.tip = next.frontier;
    return { start: size, size: next.frontier.size, leafHashes: hashes, frontier: next.frontier };
  }

  /** Publish a locked append whose transaction committed (sizes only grow). */
  committed(r: LockedAppend): void {
    if (r.frontier.size > this.frontier.size) {
      this.frontier = r.frontier;
      this.border = undefined;
    }
  }

  /** A locked append's transaction failed: forget the tip (the next append re-reads). */
  abandon(): void {
    this.tip = undefined;
  }

  /** Number of leaves. */
  get size(): number {
    return this.frontier.size;
  }

  /**
   * Append leaves atomically: leaf hashes (RFC 6962 §2.1) and every perfect subtree they
   * complete go to the store in one `appendLeaves` call. On STORAGE_CONFLICT (another writer
   * moved the log) the state is reloaded and the coded error rethrown. `via` appends through
   * a transaction view of the same store; if that transaction later rolls back, the caller
   * must `reload()`.
   */
  append(leaves: readonly LogLeafInput[], via?: LogStore): Promise<AppendResult> {
    const run = this.queue.then(() => this.appendNow(leaves, via ?? this.store));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async appendNow(leaves: readonly LogLeafInput[], store: LogStore): Promise<AppendResult> {
    const start = this.frontier.size;
    if (leaves.length === 0) return { start, size: start, leafHashes: [] };
    this.tip = undefined;
    const { hashes, records } = leafRecords(start, leaves);
    const next = appendToFrontier(this.frontier, hashes);
    try {
      await store.appendLeaves(start, records, next.completed);
    } catch (e) {
      if (isMemwardenError(e, 'STORAGE_CONFLICT')) await this.reload();
      throw e;
    }
    this.frontier = next.frontier;
    this.border = undefined;
    return { start, size: next.frontier.size, leafHashes: hashes };
  }

  /** MTH of the first `size` leaves (default: all). Current size: no store reads. */
  async root(size: number = this.size): Promise<Uint8Array> {
    await this.reach(size);
    this.checkSize(size, 0);
    if (size === 0) return emptyRoot();
    if (size === this.size) return this.borderHashes().get(0) as Uint8Array;
    const plan = rootPlan(size);
    const hashes = await this.store.getNodes(plan.nodes);
    for (const h of hashes) checkStored(h, plan);
    return foldRight(hashes as Uint8Array[]);
  }

  /** Audit path for leaf `leafIndex` in the tree of `treeSize` leaves (RFC 9162 §2.1.3.1). */
  async inclusionProof(leafIndex: number, treeSize: number = this.size): Promise<Uint8Array[]> {
    await this.reach(treeSize);
    this.checkSize(treeSize, 1);
    return this.prove(inclusionPlan(leafIndex, treeSize), treeSize);
  }

  /**
   * Audit paths of several leaves in the tree of `treeSize` leaves, every node they need read
   * in one `getNodes` call (nodes shared by several paths read once). A path whose stored nodes
   * are missing or malformed comes back `undefined` — only that leaf cannot be proven; the
   * others are unaffected.
   */
  async inclusionProofs(
    leafIndices: readonly number[],
    treeSize: number = this.size,
  ): Promise<(Uint8Array[] | undefined)[]> {
    this.checkSize(treeSize, 1);
    const plans = leafIndices.map((i) => inclusionPlan(i, treeSize));
    const border = treeSize === this.size ? this.borderHashes() : undefined;
    const slot = new Map<string, number>();
    const refs: NodeRef[] = [];
    const slotOf = (r: NodeRef): number => {
      const k = `${r.level}:${r.index}`;
      let at = slot.get(k);
      if (at === undefined) {
        at = refs.length;
        slot.set(k, at);
        refs.push(r);
      }
      return at;
    };
    // Per plan element: a border hash, or the slots of its nodes.
    const wiring = plans.map((plan) =>
      plan.map((el) => {
        const cached =
          el.nodes.length > 1 && el.end === treeSize ? border?.get(el.start) : undefined;
        return cached ?? el.nodes.map(slotOf);
      }),
    );
    const hashes = refs.length === 0 ? [] : await this.store.getNodes(refs);
    return wiring.map((els) => {
      const out: Uint8Array[] = [];
      for (const el of els) {
        if (el instanceof Uint8Array) {
          out.push(el);
          continue;
        }
        const hs: Uint8Array[] = [];
        for (const at of el) {
          const h = hashes[at];
          if (h === undefined || h.length !== HASH_SIZE) return undefined;
          hs.push(h);
        }
        out.push(hs.length === 1 ? (hs[0] as Uint8Array) : foldRight(hs));
      }
      return out;
    });
  }

  /** Consistency proof between sizes `size1` < `size2` (RFC 9162 §2.1.4.1); [] if equal. */
  async consistencyProof(size1: number, size2: number = this.size): Promise<Uint8Array[]> {
    await this.reach(size2);
    this.checkSize(size2, 1);
    return this.prove(consistencyPlan(size1, size2), size2);
  }

  /**
   * Sign a checkpoint of the current size and store it. Idempotent per size: if one is stored
   * for this size with the same root it is returned; a different root is LOG_CORRUPT.
   */
  async checkpoint(signer: CheckpointSigner): Promise<CheckpointRecord> {
    const size = this.size;
    const root = await this.root(size);
    const existing = await this.store.getCheckpoint(size);
    if (existing !== undefined) {
      if (!bytesEqual(existing.root, root))
        throw new MemwardenError('LOG_CORRUPT', 'stored checkpoint root differs', {
          details: { size },
        });
      return existing;
    }
    const note = signCheckpoint(
      { origin: this.origin, size, root, extensions: [] },
      signer.keyName,
      signer.sign,
      signer.publicKey,
    );
    const record: CheckpointRecord = { size, root, note, createdAtNs: this.clock.nowNs() };
    try {
      await this.store.putCheckpoint(record);
    } catch (e) {
      // Another process sharing the store published this size first: theirs stands, and it
      // must commit to the same root (one log).
      if (!isMemwardenError(e, 'STORAGE_CONFLICT')) throw e;
      const theirs = await this.store.getCheckpoint(size);
      if (theirs === undefined) throw e;
      if (!bytesEqual(theirs.root, root))
        throw new MemwardenError('LOG_CORRUPT', 'stored checkpoint root differs', {
          details: { size },
        });
      return theirs;
    }
    return record;
  }

  /** Recompute the whole tree from the stored leaves and compare (see ./log-audit.ts). */
  async audit(opts: AuditOptions = {}): Promise<AuditReport> {
    await this.refresh(); // audit the whole stored log, whoever appended last
    return auditLog(this.store, this.origin, this.frontier, opts);
  }

  /** A size beyond what this process has seen may have been appended by another: catch up. */
  private async reach(size: number): Promise<void> {
    if (Number.isSafeInteger(size) && size > this.frontier.size) await this.refresh();
  }

  private checkSize(size: number, min: number): void {
    if (!Number.isSafeInteger(size) || size < min || size > this.size) {
      throw new MemwardenError('LOG_SIZE_INVALID', 'size outside the log', {
        details: { size, logSize: this.size },
      });
    }
  }

  private borderHashes(): Map<number, Uint8Array> {
    if (this.border === undefined) this.border = rightBorderHashes(this.frontier);
    return this.border;
  }

  /**
   * Resolve a plan: perfect ranges are one stored node; non-perfect ranges at the current
   * size come from the border cache; older non-perfect ranges fold their decomposition.
   * Exactly the needed nodes are read, in one `getNodes` call.
   */
  private async prove(plan: readonly RangePlan[], treeSize: number): Promise<Uint8Array[]> {
    const border = treeSize === this.size ? this.borderHashes() : undefined;
    const out = new Array<Uint8Array>(plan.length);
    // Per element: -1 when resolved from the border cache, else its first ref's offset.
    const first = new Array<number>(plan.length);
    const refs: NodeRef[] = [];
    for (let i = 0; i < plan.length; i++) {
      const el = plan[i] as RangePlan;
      const cached = el.nodes.length > 1 && el.end === treeSize ? border?.get(el.start) : undefined;
      if (cached !== undefined) {
        out[i] = cached;
        first[i] = -1;
        continue;
      }
      first[i] = refs.length;
      for (const r of el.nodes) refs.push(r);
    }
    if (refs.length === 0) return out;
    const hashes = await this.store.getNodes(refs);
    for (let i = 0; i < plan.length; i++) {
      const o = first[i] as number;
      if (o < 0) continue;
      const el = plan[i] as RangePlan;
      const n = el.nodes.length;
      for (let j = o; j < o + n; j++) checkStored(hashes[j], el);
      out[i] = n === 1 ? (hashes[o] as Uint8Array) : foldRight(hashes as Uint8Array[], o, o + n);
    }
    return out;
  }
}

/** Validate leaf inputs and hash them into records at `start`, `start + 1`, … */
function leafRecords(
  start: number,
  leaves: readonly LogLeafInput[],
): { hashes: Uint8Array[]; records: LeafRecord[] } {
  const hashes = new Array<Uint8Array>(leaves.length);
  const records = new Array<LeafRecord>(leaves.length);
  for (let i = 0; i < leaves.length; i++) {
    const l = leaves[i] as LogLeafInput;
    if (
      !(l.data instanceof Uint8Array) ||
      typeof l.entryId !== 'string' ||
      (l.kind !== 'entry' && l.kind !== 'tombstone' && l.kind !== 'registry')
    ) {
      throw new MemwardenError('INPUT_INVALID', 'malformed log leaf', {
        details: { position: i },
      });
    }
    const h = leafHash(l.data);
    hashes[i] = h;
    records[i] = { index: start + i, data: l.data, hash: h, entryId: l.entryId, kind: l.kind };
  }
  return { hashes, records };
}

/** LOG_CORRUPT if the store lacks a node the tree must have (or holds a malformed one). */
function checkStored(h: Uint8Array | undefined, plan: RangePlan): void {
  if (h === undefined || h.length !== HASH_SIZE) {
    throw new MemwardenError('LOG_CORRUPT', 'a planned node is missing from the store', {
      details: { start: plan.start, end: plan.end },
    });
  }
}
