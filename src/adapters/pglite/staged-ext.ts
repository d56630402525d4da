/**
 * @module adapters/pglite/staged-ext
 * The staged (in-transaction) state of the Memory API's tables for {@link StagedView}: entry
 * state patches, quota counts, review items and decisions, audit events and API keys. Kept
 * apart from the log/registry staging so each file holds one responsibility.
 *
 * Reads inside a PGlite transaction merge committed rows with this state, with one documented
 * limit: `searchEntries` ranks committed rows only (this transaction's state changes are applied
 * to them, but entries it inserted are not ranked until it commits).
 */
import type { AuditEvent, ReviewRecord, StoredEntry } from '../../ports/storage.js';

/** A staged change of an entry's mutable state. */
export interface EntryPatch {
  deleted?: true;
  supersededBy?: string;
  expiresAtNs?: bigint;
}

export function applyPatch(e: StoredEntry, p: EntryPatch | undefined): StoredEntry {
  if (p === undefined) return e;
  return { ...e, ...p } as StoredEntry;
}

/** Live at `nowNs`: not deleted, not superseded, unexpired. */
export function isLive(
  e: StoredEntry,
  opts: { includeDeleted?: boolean; includeSuperseded?: boolean; nowNs?: bigint },
): boolean {
  if (e.deleted === true && opts.includeDeleted !== true) return false;
  if (e.supersededBy !== undefined && opts.includeSuperseded !== true) return false;
  if (opts.nowNs !== undefined && e.expiresAtNs !== undefined && e.expiresAtNs <= opts.nowNs)
    return false;
  return true;
}

export class StagedRecords {
  readonly patches = new Map<string, EntryPatch>();
  readonly quotas = new Map<string, number>();
  readonly reviews: ReviewRecord[] = [];
  readonly decisions = new Map<string, Partial<ReviewRecord>>();
  readonly audit: AuditEvent[] = [];
  readonly apiKeys = new Map<string, string>();
  readonly revoked = new Set<string>();

  patch(id: string, p: EntryPatch): void {
    this.patches.set(id, { ...(this.patches.get(id) ?? {}), ...p });
  }

  review(r: ReviewRecord | undefined): ReviewRecord | undefined {
    if (r === undefined) return undefined;
    const d = this.decisions.get(r.id);
    return d === undefined ? r : ({ ...r, ...d } as ReviewRecord);
  }
}

export const quotaKey = (principal: string, tier: string, day: string): string =>
  JSON.stringify([principal, tier, day]);

/**
 * What this process knows of two pieces of committed state that every group commit reads —
 * the log size and the quota counts of the batch's writers — so a commit need not read them
 * back (each read is a PGlite transaction of its own, ≥ 0.35 ms). Read and written only under
 * the backend's writer mutex: a staged transaction takes values from it, publishes what it
 * committed, and a failed commit clears it; a direct write of either table forgets it. It is a
 * hint, never the decider: the commit replays the same checks in the database (the log head's
 * `WHERE size = start`, the quota statement's verdicts), so a stale value (e.g. a second
 * backend on a shared PGlite instance) fails one commit with `STORAGE_CONFLICT`, clears the
 * hint, and the next commit reads afresh.
 */
export class CommittedHint {
  logSize: number | undefined;
  /** `quotaKey` → committed count. */
  readonly quotas = new Map<string, number>();

  clear(): void {
    this.logSize = undefined;
    this.quotas.clear();
  }
}

export const hexKey = (h: Uint8Array): string => Buffer.from(h).toString('hex');
