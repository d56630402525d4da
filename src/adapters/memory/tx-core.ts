/**
 * @module adapters/memory/tx-core
 * The in-memory backend's transaction view, part 1: the log, the registry and entry storage,
 * scoped like the Postgres backends' row-level security (article Pattern 4) but enforced in
 * code: a principal view sees its own rows plus global OPERATOR rows and its own log leaves,
 * writes only its own non-OPERATOR entries, and may not write the registry or checkpoints.
 * Refusals have the database's shape: `STORAGE_FAILED` with `details.reason = 'denied'`.
 */
import { MemwardenError } from '../../core/errors.js';
import type {
  CheckpointRecord,
  KeyRecord,
  LeafKind,
  LeafRecord,
  NodeRecord,
  PrincipalRecord,
  StoredEntry,
} from '../../ports/storage.js';
import { checkEmbedding, checkScan } from '../sql/rank.js';
import {
  type CommittedState,
  type KeyPatch,
  type OwnedLeaf,
  type StagedWrites,
  patchKey,
} from './state.js';

export const conflict = (what: string): MemwardenError =>
  new MemwardenError('STORAGE_CONFLICT', what);

/** The shape of a row-level-security refusal (SQLSTATE 42501 in the Postgres backends). */
export const denied = (what: string): MemwardenError =>
  new MemwardenError('STORAGE_FAILED', `denied: ${what}`, { details: { reason: 'denied' } });

export const byLog = (a: StoredEntry, b: StoredEntry): number =>
  a.leafIndex - b.leafIndex || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A copy the caller may not use to reach stored state. */
export function copyEntry(e: StoredEntry): StoredEntry {
  const c: Record<string, unknown> = { ...e, bytes: e.bytes.slice(), mac: e.mac.slice() };
  if (e.embedding !== undefined) c.embedding = e.embedding.slice();
  return c as unknown as StoredEntry;
}

/** A view of committed state plus one transaction's staged writes. */
export abstract class MemoryTxCore {
  constructor(
    protected readonly s: CommittedState,
    readonly w: StagedWrites,
    /** The scope's principal; undefined = the system scope (deployment tooling). */
    readonly principal: string | undefined,
  ) {}

  /** Writes the system scope alone may make (registry, checkpoints, API keys, decisions). */
  protected systemOnly(what: string): void {
    if (this.principal !== undefined) throw denied(`${what} is for the system scope`);
  }

  /** RLS `entries_app_read`: own rows plus global OPERATOR rows. */
  protected sees(e: StoredEntry): boolean {
    return this.principal === undefined || e.owner === this.principal || e.tier === 'OPERATOR';
  }

  private seesLeaf(l: OwnedLeaf | undefined): LeafRecord | undefined {
    if (l === undefined || (this.principal !== undefined && l.owner !== this.principal))
      return undefined;
    return { index: l.index, data: l.data, hash: l.hash, entryId: l.entryId, kind: l.kind };
  }

  // ---- log -------------------------------------------------------------------------------
  async logSize(): Promise<number> {
    return this.s.leaves.length + this.w.leaves.length;
  }

  async appendLeaves(
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void> {
    const size = this.s.leaves.length + this.w.leaves.length;
    if (start !== size) throw conflict(`log append at ${start} but the log has ${size} leaves`);
    leaves.forEach((l, i) => {
      if (l.index !== start + i)
        throw new MemwardenError('STORAGE_FAILED', 'leaf indices must be consecutive');
    });
    for (const n of nodes) {
      const key = `${n.level}:${n.index}`;
      if (this.s.getNode(n.level, n.index) !== undefined || this.w.nodeIndex.has(key)) {
        throw conflict(`node ${key} already stored`);
      }
    }
    for (const l of leaves) this.w.leaves.push({ ...copyLeaf(l), owner: this.principal ?? null });
    for (const n of nodes) {
      const rec = { level: n.level, index: n.index, hash: n.hash.slice() };
      this.w.nodes.push(rec);
      this.w.nodeIndex.set(`${n.level}:${n.index}`, rec.hash);
    }
  }

  async getLeaf(index: number): Promise<LeafRecord | undefined> {
    const c = this.s.leaves.length;
    return this.seesLeaf(index < c ? this.s.leaves[index] : this.w.leaves[index - c]);
  }

  async getLeaves(start: number, end: number): Promise<LeafRecord[]> {
    const out: LeafRecord[] = [];
    const size = await this.logSize();
    for (let i = Math.max(0, start); i < Math.min(end, size); i++) {
      const l = await this.getLeaf(i);
      if (l !== undefined) out.push(l);
    }
    return out;
  }

  async getLeavesOfKind(kind: LeafKind, start: number, end: number): Promise<LeafRecord[]> {
    const out: LeafRecord[] = [];
    const size = await this.logSize();
    const c = this.s.leaves.length;
    for (let i = Math.max(0, start); i < Math.min(end, size); i++) {
      const raw = i < c ? this.s.leaves[i] : this.w.leaves[i - c];
      if (raw?.kind !== kind) continue;
      const l = await this.getLeaf(i);
      if (l !== undefined) out.push(l);
    }
    return out;
  }

  async getLeafHashes(start: number, end: number): Promise<Uint8Array> {
    const size = await this.logSize();
    const lo = Math.max(0, start);
    const hi = Math.min(end, size);
    const out = new Uint8Array(32 * Math.max(0, hi - lo));
    let o = 0;
    for (let i = lo; i < hi; i++) {
      const l = await this.getLeaf(i);
      if (l === undefined || l.hash.length !== 32) continue;
      out.set(l.hash, o);
      o += 32;
    }
    return o === out.length ? out : out.slice(0, o);
  }

  async getNodes(
    refs: readonly { level: number; index: number }[],
  ): Promise<(Uint8Array | undefined)[]> {
    const staged = this.w.nodeIndex.size > 0;
    return refs.map(
      (r) =>
        this.s.getNode(r.level, r.index) ??
        (staged ? this.w.nodeIndex.get(`${r.level}:${r.index}`) : undefined),
    );
  }

  async findLeafIndex(entryId: string): Promise<number | undefined> {
    const c = this.s.leafIndexByEntry.get(entryId);
    const i = c ?? this.w.leaves.find((l) => l.kind === 'entry' && l.entryId === entryId)?.index;
    return i === undefined || (await this.getLeaf(i)) === undefined ? undefined : i;
  }

  async putCheckpoint(cp: CheckpointRecord): Promise<void> {
    this.systemOnly('checkpoints');
    if (this.s.checkpoints.has(cp.size) || this.w.checkpoints.some((c) => c.size === cp.size)) {
      throw conflict(`checkpoint for size ${cp.size} already stored`);
    }
    const size = await this.logSize();
    if (cp.size > size) throw new MemwardenError('LOG_SIZE_INVALID', 'checkpoint beyond the log');
    this.w.checkpoints.push({ ...cp, root: cp.root.slice() });
  }

  async latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    let best = this.s.checkpoints.get(this.s.latestCheckpointSize);
    for (const c of this.w.checkpoints) if (best === undefined || c.size > best.size) best = c;
    return best;
  }

  async getCheckpoint(size: number): Promise<CheckpointRecord | undefined> {
    return this.s.checkpoints.get(size) ?? this.w.checkpoints.find((c) => c.size === size);
  }

  async listCheckpoints(): Promise<CheckpointRecord[]> {
    return [...this.s.checkpoints.values(), ...this.w.checkpoints].sort((a, b) => a.size - b.size);
  }

  // ---- registry --------------------------------------------------------------------------
  async insertPrincipal(p: PrincipalRecord, firstKey: KeyRecord): Promise<void> {
    this.systemOnly('the registry');
    if ((await this.getPrincipal(p.id)) !== undefined) throw conflict(`principal ${p.id} exists`);
    if (firstKey.principalId !== p.id)
      throw new MemwardenError('STORAGE_FAILED', 'first key names another principal');
    await this.insertKey(firstKey);
    this.w.principals.push({ ...p });
  }

  async getPrincipal(id: string): Promise<PrincipalRecord | undefined> {
    return this.s.principals.get(id) ?? this.w.principals.find((p) => p.id === id);
  }

  async listPrincipals(): Promise<PrincipalRecord[]> {
    return [...this.s.principals.values(), ...this.w.principals];
  }

  async insertKey(k: KeyRecord): Promise<void> {
    this.systemOnly('the registry');
    if ((await this.getKey(k.kid)) !== undefined) throw conflict(`key ${k.kid} exists`);
    this.w.keys.push({ ...k, publicKey: k.publicKey.slice() });
  }

  async closeKey(kid: string, patch: KeyPatch): Promise<void> {
    this.systemOnly('the registry');
    const current = await this.getKey(kid);
    if (current === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', `key ${kid} not found`);
    patchKey(current, patch); // validates: throws STORAGE_CONFLICT on a set field
    const merged = { ...(this.w.keyPatches.get(kid) ?? {}), ...stripUndefined(patch) };
    this.w.keyPatches.set(kid, merged);
  }

  async getKey(kid: string): Promise<KeyRecord | undefined> {
    const base = this.s.keys.get(kid) ?? this.w.keys.find((k) => k.kid === kid);
    if (base === undefined) return undefined;
    const patch = this.w.keyPatches.get(kid);
    return patch === undefined ? base : patchKey(base, patch);
  }

  async keysOf(principalId: string): Promise<KeyRecord[]> {
    const kids = [
      ...(this.s.keysByPrincipal.get(principalId) ?? []),
      ...this.w.keys.filter((k) => k.principalId === principalId).map((k) => k.kid),
    ];
    const out: KeyRecord[] = [];
    for (const kid of kids) {
      const k = await this.getKey(kid);
      if (k !== undefined) out.push(k);
    }
    return out;
  }

  // ---- entries ---------------------------------------------------------------------------
  async putEntry(e: StoredEntry): Promise<void> {
    if (this.principal !== undefined && (e.owner !== this.principal || e.tier === 'OPERATOR'))
      throw denied('an agent scope writes only its own, non-OPERATOR entries');
    if (this.s.entries.has(e.id) || this.w.entryIds.has(e.id))
      throw conflict(`entry ${e.id} exists`);
    if (e.embedding !== undefined) checkEmbedding(e.embedding);
    const copy: Record<string, unknown> = {
      ...e,
      bytes: e.bytes.slice(),
      mac: e.mac.slice(),
      deleted: false,
    };
    delete copy.supersededBy;
    if (e.embedding !== undefined) copy.embedding = e.embedding.slice();
    for (const [k, v] of Object.entries(copy)) if (v === undefined) delete copy[k];
    this.w.entries.push(copy as unknown as StoredEntry);
    this.w.entryIds.add(e.id);
  }

  /** All or nothing: a refused entry unstages the ones before it. */
  async putEntries(es: readonly StoredEntry[]): Promise<void> {
    const mark = this.w.entries.length;
    try {
      for (const e of es) await this.putEntry(e);
    } catch (err) {
      for (const e of this.w.entries.splice(mark)) this.w.entryIds.delete(e.id);
      throw err;
    }
  }

  /** Every entry (committed then staged) with staged state patches applied, unscoped. */
  protected allEntries(): StoredEntry[] {
    const all = [...this.s.entryOrder.map((id) => this.s.entries.get(id)!), ...this.w.entries];
    return this.w.entryPatches.size === 0 ? all : all.map((e) => this.patched(e));
  }

  protected patched(e: StoredEntry): StoredEntry {
    const p = this.w.entryPatches.get(e.id);
    return p === undefined ? e : { ...e, ...p };
  }

  async getEntry(id: string): Promise<StoredEntry | undefined> {
    const e = this.s.entries.get(id) ?? this.w.entries.find((x) => x.id === id);
    return e === undefined || !this.sees(e) ? undefined : copyEntry(this.patched(e));
  }

  async listEntries(opts?: { afterLeafIndex?: number; limit?: number }): Promise<StoredEntry[]> {
    const after = opts?.afterLeafIndex ?? -1;
    const limit = opts?.limit ?? Number.POSITIVE_INFINITY;
    return this.allEntries()
      .filter((e) => e.leafIndex > after && this.sees(e))
      .sort(byLog)
      .slice(0, limit)
      .map(copyEntry);
  }

  async scanEntries(opts: { afterLeafIndex?: number; limit: number }): Promise<StoredEntry[]> {
    const after = checkScan(opts);
    return this.allEntries()
      .filter(
        (e) =>
          e.leafIndex > after &&
          this.sees(e) &&
          e.deleted !== true &&
          e.supersededBy === undefined &&
          e.embedding !== undefined,
      )
      .sort(byLog)
      .slice(0, opts.limit)
      .map(copyEntry);
  }
}

function copyLeaf(l: LeafRecord): LeafRecord {
  return {
    index: l.index,
    data: l.data.slice(),
    hash: l.hash.slice(),
    entryId: l.entryId,
    kind: l.kind,
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
