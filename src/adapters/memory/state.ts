/**
 * @module adapters/memory/state
 * The committed state of the in-memory backend and the staged overlay a transaction writes
 * into. A transaction sees committed state plus its own staged writes; nothing it does is
 * visible to anyone else until it commits, and a failed transaction leaves no trace.
 */
import { MemwardenError } from '../../core/errors.js';
import type {
  AuditEvent,
  CheckpointRecord,
  KeyRecord,
  LeafRecord,
  PrincipalRecord,
  ReviewRecord,
  StoredEntry,
} from '../../ports/storage.js';

/** A log leaf with the principal whose write appended it (null: the system scope). */
export type OwnedLeaf = LeafRecord & { readonly owner: string | null };

/** A change of an entry's mutable state. */
export interface EntryPatch {
  deleted?: true;
  supersededBy?: string;
  expiresAtNs?: bigint;
}

/** An audit event with the scope that appended it (null: the system scope). */
export interface OwnedAudit {
  readonly owner: string | null;
  readonly event: AuditEvent;
}

/** A stored API key (`hash` in hex). */
export interface ApiKeyRow {
  readonly hash: string;
  readonly principal: string;
  readonly createdAtNs: bigint;
}

export type KeyPatch = {
  validUntilNs?: bigint;
  revokedAtNs?: bigint;
  revokedAtLogSize?: number;
  revocationReason?: string;
};

/** Everything the backend holds. Node hashes are kept per level in dense arrays. */
export class CommittedState {
  leaves: OwnedLeaf[] = [];
  nodes: Uint8Array[][] = [];
  checkpoints = new Map<number, CheckpointRecord>();
  latestCheckpointSize = -1;
  principals = new Map<string, PrincipalRecord>();
  keys = new Map<string, KeyRecord>();
  keysByPrincipal = new Map<string, string[]>();
  entries = new Map<string, StoredEntry>();
  entryOrder: string[] = [];
  leafIndexByEntry = new Map<string, number>();
  quotas = new Map<string, number>();
  reviews = new Map<string, ReviewRecord>();
  audit: OwnedAudit[] = [];
  auditIds = new Set<string>();
  apiKeys = new Map<string, ApiKeyRow & { revoked: boolean }>();

  getNode(level: number, index: number): Uint8Array | undefined {
    return this.nodes[level]?.[index];
  }
}

/** Writes staged by one transaction, validated against committed + staged state. */
export class StagedWrites {
  leaves: OwnedLeaf[] = [];
  nodes: { level: number; index: number; hash: Uint8Array }[] = [];
  nodeIndex = new Map<string, Uint8Array>();
  checkpoints: CheckpointRecord[] = [];
  principals: PrincipalRecord[] = [];
  keys: KeyRecord[] = [];
  keyPatches = new Map<string, KeyPatch>();
  entries: StoredEntry[] = [];
  entryIds = new Set<string>();
  entryPatches = new Map<string, EntryPatch>();
  /** Absolute counts after this transaction's consumes. */
  quotas = new Map<string, number>();
  reviews: ReviewRecord[] = [];
  reviewDecisions = new Map<string, Partial<ReviewRecord>>();
  audit: OwnedAudit[] = [];
  apiKeys: ApiKeyRow[] = [];
  revokedKeys = new Set<string>();

  isEmpty(): boolean {
    return (
      this.leaves.length === 0 &&
      this.nodes.length === 0 &&
      this.checkpoints.length === 0 &&
      this.principals.length === 0 &&
      this.keys.length === 0 &&
      this.keyPatches.size === 0 &&
      this.entries.length === 0 &&
      this.entryPatches.size === 0 &&
      this.quotas.size === 0 &&
      this.reviews.length === 0 &&
      this.reviewDecisions.size === 0 &&
      this.audit.length === 0 &&
      this.apiKeys.length === 0 &&
      this.revokedKeys.size === 0
    );
  }
}

/** Apply a key patch, refusing to change a field once set (validity only ever narrows). */
export function patchKey(k: KeyRecord, patch: KeyPatch): KeyRecord {
  const out: Record<string, unknown> = { ...k };
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (out[field] !== undefined) {
      throw new MemwardenError('STORAGE_CONFLICT', `key ${k.kid}: ${field} is already set`);
    }
    out[field] = value;
  }
  return out as unknown as KeyRecord;
}

/** Fold staged writes into committed state. Validation already happened when staging. */
export function applyStaged(s: CommittedState, w: StagedWrites): void {
  for (const l of w.leaves) {
    s.leaves.push(l);
    if (l.kind === 'entry' && !s.leafIndexByEntry.has(l.entryId))
      s.leafIndexByEntry.set(l.entryId, l.index);
  }
  for (const n of w.nodes) {
    let level = s.nodes[n.level];
    if (level === undefined) {
      level = [];
      s.nodes[n.level] = level;
    }
    level[n.index] = n.hash;
  }
  for (const c of w.checkpoints) {
    s.checkpoints.set(c.size, c);
    if (c.size > s.latestCheckpointSize) s.latestCheckpointSize = c.size;
  }
  for (const p of w.principals) s.principals.set(p.id, p);
  for (const k of w.keys) {
    s.keys.set(k.kid, k);
    const list = s.keysByPrincipal.get(k.principalId) ?? [];
    list.push(k.kid);
    s.keysByPrincipal.set(k.principalId, list);
  }
  for (const [kid, patch] of w.keyPatches) {
    const k = s.keys.get(kid);
    if (k !== undefined) s.keys.set(kid, patchKey(k, patch));
  }
  for (const e of w.entries) {
    s.entries.set(e.id, e);
    s.entryOrder.push(e.id);
  }
  for (const [id, p] of w.entryPatches) {
    const e = s.entries.get(id);
    if (e !== undefined) s.entries.set(id, { ...e, ...p });
  }
  for (const [k, n] of w.quotas) s.quotas.set(k, n);
  for (const r of w.reviews) s.reviews.set(r.id, r);
  for (const [id, d] of w.reviewDecisions) {
    const r = s.reviews.get(id);
    if (r !== undefined) s.reviews.set(id, { ...r, ...d } as ReviewRecord);
  }
  for (const a of w.audit) {
    s.audit.push(a);
    s.auditIds.add(a.event.id);
  }
  for (const k of w.apiKeys) s.apiKeys.set(k.hash, { ...k, revoked: false });
  for (const h of w.revokedKeys) {
    const k = s.apiKeys.get(h);
    if (k !== undefined) k.revoked = true;
  }
}

export const quotaKey = (principal: string, tier: string, day: string): string =>
  JSON.stringify([principal, tier, day]);
