/**
 * @module memory/read/follower
 * Keeps a read model (ADR 0018) current with the commits of OTHER processes sharing the store
 * (ADR 0037): the store's feed (PostgreSQL LISTEN/NOTIFY) is the wake-up, the log the truth.
 *
 * - `sync` (listening, the log had `size` leaves): the model forgets everything it held — a
 *   process (re)starting or reconnecting cannot tell what it missed — and reloads each
 *   partition from the store on its next use; leaves below `size` are in those loads.
 * - `log` (the log grew): the follower integrates leaf indices by number. Leaves this process
 *   committed reach the model through its own observed writes (`observed-storage.ts`); after
 *   waiting for this process's open transactions to end, the others — runs of leaf indices it
 *   did not commit — are read with `scanEntries` (live, embedded rows with leaf_index in the
 *   run, embeddings in binary) in the system scope and applied like local writes: each row
 *   goes to its owner's partition if that one is held (OPERATOR rows to the shared one).
 *   Indices are dense and commit-ordered (ADR 0011), so nothing committed is skipped.
 * - `entry` (deleted, superseded, expiry, by any process): applied, and remembered a while so a
 *   row read before the change but applied after it takes the change too.
 * - `lost`, or a catch-up that fails: the model stops answering (the database answers every
 *   query meanwhile) until the next `sync` or a re-read of the log size succeeds.
 *
 * Visibility: a write committed by process A is searchable on process B once B's follower has
 * read its run — one note and one query after the commit (`bench load-pg` measures the
 * delay end to end: `pg_visibility_p99_ms`).
 */
import type { RootStorage, StoreEvent, StoreFeed, StoredEntry } from '../../ports/storage.js';
import type { EntryChange, LocalCommits } from './observed-storage.js';

/** What the follower drives of the read model (`read-model.ts`). */
export interface FollowedModel {
  apply(changes: readonly EntryChange[]): void;
  applyRemote(c: Exclude<EntryChange, { op: 'put' }>): void;
  setServing(on: boolean): void;
  reset(): void;
}

/** Rows per catch-up page. */
const PAGE = 1_000;
/** After a failed catch-up: how long until the follower re-reads the log size. */
const RESYNC_MS = 500;

/** What a follower has done (for `/healthz` and tests). */
export interface FollowerStatus {
  /** Listening and caught up: the model answers. */
  readonly synced: boolean;
  /** Leaves integrated. */
  readonly seen: number;
  /** Entries of other processes applied. */
  readonly applied: number;
  /** Times the model was reset (a sync after the first, or a failed catch-up). */
  readonly resets: number;
}

export class LogFollower {
  private synced = false;
  private everSynced = false;
  /** The feed is listening (as of the last event received, not processed). */
  private listening = false;
  private seen = 0;
  /** The largest log size announced so far. */
  private notified = 0;
  private readonly queue: StoreEvent[] = [];
  private running = false;
  /** Leaf indices ≥ `seen` of entries this process committed (reported by its own writes). */
  private readonly local = new Set<number>();
  private applied = 0;
  private resets = 0;
  private retry: NodeJS.Timeout | undefined;
  private stopFeed: (() => void) | undefined;
  private firstSync!: () => void;
  /** Settles at the first `sync`. */
  readonly ready: Promise<void> = new Promise<void>((r) => (this.firstSync = r));

  constructor(
    private readonly storage: RootStorage,
    private readonly feed: StoreFeed,
    private readonly model: FollowedModel,
    private readonly localCommits: LocalCommits,
  ) {
    model.setServing(false);
  }

  start(): void {
    this.stopFeed ??= this.feed.follow((e) => this.onEvent(e));
  }

  stop(): void {
    this.stopFeed?.();
    clearTimeout(this.retry);
    this.model.setServing(false);
  }

  get status(): FollowerStatus {
    return { synced: this.synced, seen: this.seen, applied: this.applied, resets: this.resets };
  }

  /** This process's committed changes (the observed-storage sink, beside the model's). */
  noteLocal(changes: readonly EntryChange[]): void {
    for (const c of changes) {
      if (c.op === 'put' && c.entry.leafIndex >= this.seen) this.local.add(c.entry.leafIndex);
    }
  }

  private onEvent(e: StoreEvent): void {
    if (e.kind === 'sync') this.listening = true;
    if (e.kind === 'lost') {
      this.listening = false;
      clearTimeout(this.retry);
    }
    if (e.kind === 'log' || e.kind === 'sync') this.notified = Math.max(this.notified, e.size);
    this.queue.push(e);
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let e = this.queue.shift(); e !== undefined; e = this.queue.shift())
        await this.handle(e);
    } finally {
      this.running = false;
    }
  }

  private async handle(e: StoreEvent): Promise<void> {
    switch (e.kind) {
      case 'lost':
        this.unsync();
        return;
      case 'sync':
        // A sync re-read after a failed catch-up counts only while the feed still listens.
        if (this.listening) this.resync(e.size);
        return;
      case 'entry':
        if (!this.synced) return; // the next sync reloads the state this would have changed
        this.model.applyRemote(
          e.op === 'expiry'
            ? { op: 'expiry', id: e.id, expiresAtNs: e.expiresAtNs }
            : e.op === 'deleted'
              ? { op: 'deleted', id: e.id }
              : { op: 'superseded', id: e.id, by: '' },
        );
        return;
      case 'log':
        if (this.synced && this.notified > this.seen) await this.catchUp(this.notified);
        return;
    }
  }

  private unsync(): void {
    this.synced = false;
    this.model.setServing(false);
  }

  /** Start over at log size `size`: what is below it, partitions load from the store. */
  private resync(size: number): void {
    clearTimeout(this.retry);
    if (this.everSynced) this.resets++;
    this.model.reset();
    this.seen = size;
    this.notified = Math.max(this.notified, size);
    for (const i of this.local) if (i < size) this.local.delete(i);
    this.synced = true;
    this.everSynced = true;
    this.model.setServing(true);
    this.firstSync();
  }

  /** Integrate leaves [seen, target). */
  private async catchUp(target: number): Promise<void> {
    try {
      // A run this process committed is reported by its own transaction as it ends; only one
      // that took the head below `target` can hold a leaf of [seen, target).
      await this.localCommits.settled(target);
      const from = this.seen;
      for (let i = from; i < target;) {
        if (this.local.has(i)) {
          i++;
          continue;
        }
        let j = i;
        while (j < target && !this.local.has(j)) j++;
        await this.readRun(i, j);
        i = j;
      }
      for (let i = from; i < target; i++) this.local.delete(i);
      this.seen = target;
    } catch {
      // What was read cannot be told from what was missed: answer from the database until a
      // fresh start at the current log size.
      this.unsync();
      this.scheduleResync();
    }
  }

  /** Entries of leaf indices [a, b): at most b − a live embedded rows (tombstones have none). */
  private async readRun(a: number, b: number): Promise<void> {
    let after = a - 1;
    for (;;) {
      const limit = Math.min(b - 1 - after, PAGE);
      if (limit <= 0) return;
      const o = { afterLeafIndex: after, limit };
      // The feed's own connection where it offers one: a catch-up never queues behind requests.
      const rows: StoredEntry[] =
        this.feed.scanEntries !== undefined
          ? await this.feed.scanEntries(o)
          : await this.storage.scanEntries!(o);
      const mine = rows.filter((r) => r.leafIndex < b);
      if (mine.length > 0) {
        this.model.apply(mine.map((entry) => ({ op: 'put', entry })));
        this.applied += mine.length;
      }
      const last = rows[rows.length - 1];
      if (last === undefined || rows.length < limit || last.leafIndex >= b - 1) return;
      after = last.leafIndex;
    }
  }

  /** While the feed listens: start over at the log size read then (else its next sync does). */
  private scheduleResync(): void {
    clearTimeout(this.retry);
    if (!this.listening) return;
    this.retry = setTimeout(() => {
      this.storage
        .logSize()
        .then((size) => {
          // Queued behind anything already received, so notes keep their order.
          if (this.listening) this.onEvent({ kind: 'sync', size });
        })
        .catch(() => this.scheduleResync());
    }, RESYNC_MS);
    this.retry.unref();
  }
}
