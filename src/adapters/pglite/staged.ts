/**
 * @module adapters/pglite/staged
 * Why this exists: PGlite is one in-process Postgres session. While a SQL transaction is open
 * on it, *every* query — including a caller's read outside the transaction — runs inside that
 * transaction and would see its uncommitted writes (or, if queued, deadlock against it). The
 * port requires a transaction to be invisible until it commits, so a PGlite transaction stages
 * its writes here: reads merge committed rows (through the same-scope base view) with staged
 * ones, and commit replays the staged writes, in call order, inside ONE SQL transaction where
 * the database re-checks every rule (log head, unique keys, RLS). Writers are serialised by the
 * backend's mutex, so validation here sees exactly the state commit will apply to.
 */
import { MemwardenError } from '../../core/errors.js';
import type {
  QuotaDemand,
  CheckpointRecord,
  KeyRecord,
  LeafKind,
  LeafRecord,
  NodeRecord,
  PrincipalRecord,
  StorageBackend,
  StoredEntry,
} from '../../ports/storage.js';
import { deniedError } from '../sql/entries.js';
import { checkEmbedding } from '../sql/rank.js';
import { type KeyPatch, assertNarrowing } from '../sql/registry.js';
import { type CommittedHint, StagedRecords, applyPatch } from './staged-ext.js';

const conflict = (what: string): MemwardenError => new MemwardenError('STORAGE_CONFLICT', what);

type Op = (b: StorageBackend) => Promise<void>;

/** A staged putEntry, kept as data so commit can batch consecutive ones into one INSERT. */
interface PutOp {
  readonly put: StoredEntry;
}

/** A staged log append (leaves, the nodes they complete, the head move from `start`). */
interface AppendOp {
  readonly append: {
    readonly start: number;
    readonly leaves: readonly LeafRecord[];
    readonly nodes: readonly NodeRecord[];
  };
}

/**
 * A staged quota consumption: at commit the database must reach the verdicts staging reached
 * (`expected`, per demand) or the commit fails (`STORAGE_CONFLICT`, nothing written).
 */
interface QuotaOp {
  readonly quotas: readonly QuotaDemand[];
  readonly expected: readonly boolean[];
}

/**
 * The staged writes a commit can send as one pipeline of statements (ADR 0028): each is data,
 * so its statements are known before the commit begins.
 */
export type DataOp = PutOp | AppendOp | QuotaOp;

/** The quota replay's conflict: the committed counts moved since staging read them. */
export const quotaMoved = (): MemwardenError =>
  conflict('quota counts moved during the transaction');

/** What commit replays onto: a view inside the one SQL transaction. */
export type CommitTarget = StorageBackend & {
  putEntries(es: readonly StoredEntry[]): Promise<void>;
};

function withPatch(k: KeyRecord, patch: KeyPatch | undefined): KeyRecord {
  if (patch === undefined) return k;
  const out: Record<string, unknown> = { ...k };
  for (const [f, v] of Object.entries(patch)) if (v !== undefined) out[f] = v;
  return out as unknown as KeyRecord;
}

/** A transaction's view: committed state (via `base`) plus this transaction's staged writes. */
export abstract class StagedCore {
  protected readonly ops: (Op | DataOp)[] = [];
  protected readonly stagedIds = new Set<string>();
  private baseSize: number | undefined;
  private readonly leaves: LeafRecord[] = [];
  private readonly nodes = new Map<string, Uint8Array>();
  private readonly checkpoints: CheckpointRecord[] = [];
  protected readonly principals: PrincipalRecord[] = [];
  private readonly keys: KeyRecord[] = [];
  private readonly patches = new Map<string, KeyPatch>();
  protected readonly entries: StoredEntry[] = [];

  protected readonly x = new StagedRecords();
  /** A principal or key record is among the staged writes (`StorageBackend.registryVersion`). */
  registryTouched = false;

  /**
   * `principal`: the scope's principal (undefined = system), for early permission checks.
   * `hint`: committed state known to this process (`./staged-ext.js`), or none.
   */
  constructor(
    protected readonly base: StorageBackend,
    protected readonly principal: string | undefined,
    protected readonly hint?: CommittedHint,
  ) {}

  /** After this transaction committed: what the committed state now is. */
  publish(): void {
    const h = this.hint;
    if (h === undefined) return;
    if (this.baseSize !== undefined) h.logSize = this.baseSize + this.leaves.length;
    for (const [k, n] of this.x.quotas) h.quotas.set(k, n);
  }

  protected systemOnly(what: string): void {
    if (this.principal !== undefined) throw deniedError(`${what} is for the system scope`);
  }

  /** Replay the staged writes on `tx` (a view inside one SQL transaction). */
  async commit(tx: CommitTarget): Promise<void> {
    let puts: StoredEntry[] = [];
    const flush = async (): Promise<void> => {
      if (puts.length > 0) await tx.putEntries(puts);
      puts = [];
    };
    for (const op of this.ops) {
      if ('put' in op) {
        puts.push(op.put);
        continue;
      }
      await flush();
      if (typeof op === 'function') await op(tx);
      else if ('append' in op)
        await tx.appendLeaves(op.append.start, op.append.leaves, op.append.nodes);
      else {
        const got = tx.consumeQuotas === undefined ? undefined : await tx.consumeQuotas(op.quotas);
        if (got === undefined || got.some((ok, i) => ok !== op.expected[i])) throw quotaMoved();
      }
    }
    await flush();
  }

  /** The staged writes, in order, if every one is data (`DataOp`); else undefined. */
  dataOps(): readonly DataOp[] | undefined {
    return this.ops.every((op) => typeof op !== 'function') ? (this.ops as DataOp[]) : undefined;
  }

  /** Staged entries that carry an embedding (for the backend's index bookkeeping). */
  get embeddedCount(): number {
    return this.entries.filter((e) => e.embedding !== undefined).length;
  }

  get isEmpty(): boolean {
    return this.ops.length === 0;
  }

  private async committedSize(): Promise<number> {
    this.baseSize ??= this.hint?.logSize ?? (await this.base.logSize());
    return this.baseSize;
  }

  // ---- log -------------------------------------------------------------------------------
  async logSize(): Promise<number> {
    return (await this.committedSize()) + this.leaves.length;
  }

  async appendLeaves(
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void> {
    const size = await this.logSize();
    if (start !== size) throw conflict(`log append at ${start} but the log has ${size} leaves`);
    leaves.forEach((l, i) => {
      if (l.index !== start + i)
        throw new MemwardenError('STORAGE_FAILED', 'leaf indices must be consecutive');
    });
    // A node these leaves complete ends at or past `start`, so on a log of `start` leaves it can
    // exist only staged here; a committed one (a corrupt store) is the database's unique
    // violation at commit — checking it here would cost a read per group commit.
    nodes.forEach((n) => {
      if (this.nodes.has(`${n.level}:${n.index}`))
        throw conflict(`node ${n.level}:${n.index} already stored`);
    });
    const ls = leaves.map((l) => ({ ...l, data: l.data.slice(), hash: l.hash.slice() }));
    const ns = nodes.map((n) => ({ ...n, hash: n.hash.slice() }));
    this.leaves.push(...ls);
    for (const n of ns) this.nodes.set(`${n.level}:${n.index}`, n.hash);
    this.ops.push({ append: { start, leaves: ls, nodes: ns } });
  }

  async getLeaf(index: number): Promise<LeafRecord | undefined> {
    const c = await this.committedSize();
    return index < c ? this.base.getLeaf(index) : this.leaves[index - c];
  }

  async getLeaves(start: number, end: number): Promise<LeafRecord[]> {
    const c = await this.committedSize();
    const committed = start < c ? await this.base.getLeaves(start, Math.min(end, c)) : [];
    return [...committed, ...this.leaves.filter((l) => l.index >= start && l.index < end)];
  }

  async getLeavesOfKind(kind: LeafKind, start: number, end: number): Promise<LeafRecord[]> {
    const c = await this.committedSize();
    const base = this.base.getLeavesOfKind;
    const committed =
      start >= c
        ? []
        : base !== undefined
          ? await base.call(this.base, kind, start, Math.min(end, c))
          : (await this.base.getLeaves(start, Math.min(end, c))).filter((l) => l.kind === kind);
    return [
      ...committed,
      ...this.leaves.filter((l) => l.kind === kind && l.index >= start && l.index < end),
    ];
  }

  async getLeafHashes(start: number, end: number): Promise<Uint8Array> {
    const c = await this.committedSize();
    const base = this.base.getLeafHashes;
    const committed =
      start >= c
        ? new Uint8Array(0)
        : base !== undefined
          ? await base.call(this.base, start, Math.min(end, c))
          : concatHashes(await this.base.getLeaves(start, Math.min(end, c)));
    return concatHashes(
      this.leaves.filter((l) => l.index >= start && l.index < end),
      committed,
    );
  }

  async getNodes(
    refs: readonly { level: number; index: number }[],
  ): Promise<(Uint8Array | undefined)[]> {
    const committed = await this.base.getNodes(refs);
    return refs.map((r, i) => committed[i] ?? this.nodes.get(`${r.level}:${r.index}`));
  }

  async findLeafIndex(entryId: string): Promise<number | undefined> {
    return (
      (await this.base.findLeafIndex(entryId)) ??
      this.leaves.find((l) => l.kind === 'entry' && l.entryId === entryId)?.index
    );
  }

  async putCheckpoint(cp: CheckpointRecord): Promise<void> {
    if ((await this.getCheckpoint(cp.size)) !== undefined)
      throw conflict(`checkpoint for size ${cp.size} already stored`);
    if (cp.size > (await this.logSize()))
      throw new MemwardenError('LOG_SIZE_INVALID', 'checkpoint beyond the log');
    const c = { ...cp, root: cp.root.slice() };
    this.checkpoints.push(c);
    this.ops.push((b) => b.putCheckpoint(c));
  }

  async latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    let best = await this.base.latestCheckpoint();
    for (const c of this.checkpoints) if (best === undefined || c.size > best.size) best = c;
    return best;
  }

  async getCheckpoint(size: number): Promise<CheckpointRecord | undefined> {
    return (await this.base.getCheckpoint(size)) ?? this.checkpoints.find((c) => c.size === size);
  }

  // ---- registry --------------------------------------------------------------------------
  async insertPrincipal(p: PrincipalRecord, firstKey: KeyRecord): Promise<void> {
    if ((await this.getPrincipal(p.id)) !== undefined) throw conflict(`principal ${p.id} exists`);
    if (firstKey.principalId !== p.id)
      throw new MemwardenError('STORAGE_FAILED', 'first key names another principal');
    if ((await this.getKey(firstKey.kid)) !== undefined)
      throw conflict(`key ${firstKey.kid} exists`);
    const pc = { ...p };
    const kc = { ...firstKey, publicKey: firstKey.publicKey.slice() };
    this.principals.push(pc);
    this.keys.push(kc);
    this.registryTouched = true;
    this.ops.push((b) => b.insertPrincipal(pc, kc));
  }

  async getPrincipal(id: string): Promise<PrincipalRecord | undefined> {
    return (await this.base.getPrincipal(id)) ?? this.principals.find((p) => p.id === id);
  }

  async listPrincipals(): Promise<PrincipalRecord[]> {
    return [...(await this.base.listPrincipals()), ...this.principals];
  }

  async insertKey(k: KeyRecord): Promise<void> {
    if ((await this.getKey(k.kid)) !== undefined) throw conflict(`key ${k.kid} exists`);
    const kc = { ...k, publicKey: k.publicKey.slice() };
    this.keys.push(kc);
    this.registryTouched = true;
    this.ops.push((b) => b.insertKey(kc));
  }

  async closeKey(kid: string, patch: KeyPatch): Promise<void> {
    const current = await this.getKey(kid);
    if (current === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', `key ${kid} not found`);
    assertNarrowing(current, patch);
    const p = { ...patch };
    this.patches.set(kid, { ...(this.patches.get(kid) ?? {}), ...p });
    this.registryTouched = true;
    this.ops.push((b) => b.closeKey(kid, p));
  }

  async getKey(kid: string): Promise<KeyRecord | undefined> {
    const k = (await this.base.getKey(kid)) ?? this.keys.find((x) => x.kid === kid);
    return k === undefined ? undefined : withPatch(k, this.patches.get(kid));
  }

  async keysOf(principalId: string): Promise<KeyRecord[]> {
    const all = [
      ...(await this.base.keysOf(principalId)),
      ...this.keys.filter((k) => k.principalId === principalId),
    ];
    return all.map((k) => withPatch(k, this.patches.get(k.kid)));
  }

  // ---- entries ---------------------------------------------------------------------------
  /**
   * A duplicate of an entry staged in this transaction is refused at once; a duplicate of a
   * committed entry is refused by the database at commit (STORAGE_CONFLICT, nothing written) —
   * checking each id against the base would cost one more query per entry on the write path.
   */
  async putEntry(e: StoredEntry): Promise<void> {
    if (this.stagedIds.has(e.id)) throw conflict(`entry ${e.id} exists`);
    if (e.embedding !== undefined) checkEmbedding(e.embedding);
    const { supersededBy: _ignored, ...rest } = e;
    const ec: StoredEntry = { ...rest, bytes: e.bytes.slice(), mac: e.mac.slice(), deleted: false };
    this.entries.push(ec);
    this.stagedIds.add(e.id);
    this.ops.push({ put: ec });
  }

  /** All or nothing: validated as a whole before any is staged. */
  async putEntries(es: readonly StoredEntry[]): Promise<void> {
    const seen = new Set<string>();
    for (const e of es) {
      if (this.stagedIds.has(e.id) || seen.has(e.id)) throw conflict(`entry ${e.id} exists`);
      if (e.embedding !== undefined) checkEmbedding(e.embedding);
      seen.add(e.id);
    }
    for (const e of es) await this.putEntry(e);
  }

  async getEntry(id: string): Promise<StoredEntry | undefined> {
    const e = (await this.base.getEntry(id)) ?? this.entries.find((x) => x.id === id);
    return e === undefined ? undefined : applyPatch(e, this.x.patches.get(id));
  }

  async listEntries(opts?: { afterLeafIndex?: number; limit?: number }): Promise<StoredEntry[]> {
    const after = opts?.afterLeafIndex ?? -1;
    const limit = opts?.limit ?? Number.POSITIVE_INFINITY;
    // The first `limit` of the merge lies within the first `limit` of each side.
    const merged = [
      ...(await this.base.listEntries(opts)),
      ...this.entries.filter((e) => e.leafIndex > after),
    ];
    return merged
      .sort((a, b) => a.leafIndex - b.leafIndex || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, limit);
  }
}

/** `prefix` followed by the 32-byte hashes of `leaves`. */
function concatHashes(leaves: readonly LeafRecord[], prefix?: Uint8Array): Uint8Array {
  const p = prefix?.length ?? 0;
  const out = new Uint8Array(p + 32 * leaves.length);
  if (prefix !== undefined) out.set(prefix, 0);
  let o = p;
  for (const l of leaves) {
    if (l.hash.length !== 32) continue;
    out.set(l.hash, o);
    o += 32;
  }
  return o === out.length ? out : out.slice(0, o);
}
