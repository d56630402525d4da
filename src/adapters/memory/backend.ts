/**
 * @module adapters/memory/backend
 * The in-memory storage backend: fast, dependency-free, for unit tests of the layers above
 * and (with a journal file) for the foundation CLI. It keeps every rule of the storage port
 * (src/ports/storage.ts) and passes the shared conformance suite.
 */
import { MemwardenError } from '../../core/errors.js';
import type {
  CheckpointRecord,
  KeyRecord,
  LeafRecord,
  NodeRecord,
  PrincipalRecord,
  StorageBackend,
  StoredEntry,
} from '../../ports/storage.js';
import { type Journal, openJournal } from './journal.js';
import { CommittedState, type KeyPatch, StagedWrites, applyStaged, patchKey } from './state.js';

const conflict = (what: string): MemwardenError => new MemwardenError('STORAGE_CONFLICT', what);

/** A view of committed state plus one transaction's staged writes. */
class MemoryTx implements StorageBackend {
  constructor(
    private readonly s: CommittedState,
    readonly w: StagedWrites,
  ) {}

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
    for (const l of leaves) this.w.leaves.push(copyLeaf(l));
    for (const n of nodes) {
      const rec = { level: n.level, index: n.index, hash: n.hash.slice() };
      this.w.nodes.push(rec);
      this.w.nodeIndex.set(`${n.level}:${n.index}`, rec.hash);
    }
  }

  async getLeaf(index: number): Promise<LeafRecord | undefined> {
    const c = this.s.leaves.length;
    return index < c ? this.s.leaves[index] : this.w.leaves[index - c];
  }

  async getLeaves(start: number, end: number): Promise<LeafRecord[]> {
    const out: LeafRecord[] = [];
    for (let i = Math.max(0, start); i < end; i++) {
      const l = await this.getLeaf(i);
      if (l === undefined) break;
      out.push(l);
    }
    return out;
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
    if (c !== undefined) return c;
    return this.w.leaves.find((l) => l.kind === 'entry' && l.entryId === entryId)?.index;
  }

  async putCheckpoint(cp: CheckpointRecord): Promise<void> {
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

  // ---- registry --------------------------------------------------------------------------
  async insertPrincipal(p: PrincipalRecord, firstKey: KeyRecord): Promise<void> {
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
    if ((await this.getKey(k.kid)) !== undefined) throw conflict(`key ${k.kid} exists`);
    this.w.keys.push({ ...k, publicKey: k.publicKey.slice() });
  }

  async closeKey(kid: string, patch: KeyPatch): Promise<void> {
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
    if (this.s.entries.has(e.id) || this.w.entryIds.has(e.id))
      throw conflict(`entry ${e.id} exists`);
    this.w.entries.push({ ...e, bytes: e.bytes.slice(), mac: e.mac.slice() });
    this.w.entryIds.add(e.id);
  }

  async getEntry(id: string): Promise<StoredEntry | undefined> {
    return this.s.entries.get(id) ?? this.w.entries.find((e) => e.id === id);
  }

  async listEntries(opts?: { afterLeafIndex?: number; limit?: number }): Promise<StoredEntry[]> {
    const after = opts?.afterLeafIndex ?? -1;
    const limit = opts?.limit ?? Number.POSITIVE_INFINITY;
    const all = [...this.s.entryOrder.map((id) => this.s.entries.get(id)!), ...this.w.entries];
    return all
      .filter((e) => e.leafIndex > after)
      .sort((a, b) => a.leafIndex - b.leafIndex)
      .slice(0, limit);
  }

  async transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    return fn(this); // nested: joins the enclosing transaction
  }

  async close(): Promise<void> {}
}

export interface MemoryBackendOptions {
  /** Persist every committed transaction to this JSONL journal and replay it on open. */
  journalPath?: string;
}

/** In-memory StorageBackend; transactions are serialised and all-or-nothing. */
export class MemoryBackend implements StorageBackend {
  private readonly s = new CommittedState();
  private readonly reader: MemoryTx;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(private readonly journal: Journal | undefined) {
    this.reader = new MemoryTx(this.s, new StagedWrites());
  }

  static async open(opts: MemoryBackendOptions = {}): Promise<MemoryBackend> {
    const journal =
      opts.journalPath === undefined ? undefined : await openJournal(opts.journalPath);
    const b = new MemoryBackend(journal);
    if (journal !== undefined) for (const w of journal.replayed) applyStaged(b.s, w);
    return b;
  }

  async transaction<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    this.assertOpen();
    const run = async (): Promise<T> => {
      const staged = new StagedWrites();
      const result = await fn(new MemoryTx(this.s, staged));
      if (!staged.isEmpty()) {
        this.journal?.append(staged); // durable before visible
        applyStaged(this.s, staged);
      }
      return result;
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => undefined);
    return p;
  }

  private write<T>(fn: (tx: StorageBackend) => Promise<T>): Promise<T> {
    return this.transaction(fn);
  }

  private assertOpen(): void {
    if (this.closed) throw new MemwardenError('STORAGE_FAILED', 'backend is closed');
  }

  logSize = (): Promise<number> => this.reader.logSize();
  appendLeaves = (
    start: number,
    leaves: readonly LeafRecord[],
    nodes: readonly NodeRecord[],
  ): Promise<void> => this.write((tx) => tx.appendLeaves(start, leaves, nodes));
  getLeaf = (i: number): Promise<LeafRecord | undefined> => this.reader.getLeaf(i);
  getLeaves = (a: number, b: number): Promise<LeafRecord[]> => this.reader.getLeaves(a, b);
  getNodes = (
    refs: readonly { level: number; index: number }[],
  ): Promise<(Uint8Array | undefined)[]> => this.reader.getNodes(refs);
  findLeafIndex = (id: string): Promise<number | undefined> => this.reader.findLeafIndex(id);
  putCheckpoint = (cp: CheckpointRecord): Promise<void> => this.write((tx) => tx.putCheckpoint(cp));
  latestCheckpoint = (): Promise<CheckpointRecord | undefined> => this.reader.latestCheckpoint();
  getCheckpoint = (n: number): Promise<CheckpointRecord | undefined> =>
    this.reader.getCheckpoint(n);
  insertPrincipal = (p: PrincipalRecord, k: KeyRecord): Promise<void> =>
    this.write((tx) => tx.insertPrincipal(p, k));
  getPrincipal = (id: string): Promise<PrincipalRecord | undefined> => this.reader.getPrincipal(id);
  listPrincipals = (): Promise<PrincipalRecord[]> => this.reader.listPrincipals();
  insertKey = (k: KeyRecord): Promise<void> => this.write((tx) => tx.insertKey(k));
  closeKey = (kid: string, patch: KeyPatch): Promise<void> =>
    this.write((tx) => tx.closeKey(kid, patch));
  getKey = (kid: string): Promise<KeyRecord | undefined> => this.reader.getKey(kid);
  keysOf = (id: string): Promise<KeyRecord[]> => this.reader.keysOf(id);
  putEntry = (e: StoredEntry): Promise<void> => this.write((tx) => tx.putEntry(e));
  getEntry = (id: string): Promise<StoredEntry | undefined> => this.reader.getEntry(id);
  listEntries = (o?: { afterLeafIndex?: number; limit?: number }): Promise<StoredEntry[]> =>
    this.reader.listEntries(o);

  async close(): Promise<void> {
    await this.chain;
    this.closed = true;
    this.journal?.close();
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
