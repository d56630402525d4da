/**
 * @module adapters/pg/feed
 * The change feed of the PostgreSQL server (ADR 0037): one dedicated connection LISTENs on the
 * schema's channel (`../sql/schema-feed.js`: the triggers of migration 20 announce log growth
 * and entry state changes, delivered by PostgreSQL only on commit, in commit order) and turns
 * each note into a {@link StoreEvent}.
 *
 * Nothing is assumed about a connection that is not listening: when it fails, ends or misses
 * its heartbeat, subscribers get `lost`; it reconnects with backoff and reports `sync` (with the
 * log size read after LISTEN took effect) once listening again, so a subscriber re-reads what
 * it may have missed. The heartbeat reads the log size every `heartbeatMs`: a connection that
 * died silently is noticed within one beat, and a grown log is reported even if a note were
 * ever dropped (the log is the truth; a note is only the wake-up).
 */
import pg from 'pg';
import { MemwardenError } from '../../core/errors.js';
import type { StoreEvent, StoreFeed, StoredEntry } from '../../ports/storage.js';
import { type SqlFeatures, scanEntries } from '../sql/entries.js';
import { normaliseDriverError } from '../sql/errors.js';
import { ENTER_SCOPE_SQL, type Queryable, SYSTEM_SCOPE, scopeParams } from '../sql/queryable.js';
import { checkScan } from '../sql/rank.js';
import { FEED_CHANNEL_SQL } from '../sql/schema-feed.js';

type Sink = (e: StoreEvent) => void;

/** The feed connection's `application_name` (how it shows in `pg_stat_activity`). */
export const FEED_APPLICATION = 'memwarden-feed';

/** Parse one note of the channel (see `../sql/schema-feed.js`); undefined when malformed. */
export function parseNote(payload: string | undefined): StoreEvent | undefined {
  if (payload === undefined || payload.length < 2) return undefined;
  const tag = payload[0];
  const rest = payload.slice(1);
  if (tag === 'L') {
    const size = Number(rest);
    return Number.isSafeInteger(size) && size >= 0 ? { kind: 'log', size } : undefined;
  }
  if (tag === 'D') return { kind: 'entry', op: 'deleted', id: rest };
  if (tag === 'S') return { kind: 'entry', op: 'superseded', id: rest };
  if (tag === 'X') {
    const colon = rest.indexOf(':');
    if (colon < 0) return undefined;
    const ns = rest.slice(0, colon);
    if (ns !== '' && !/^-?[0-9]+$/.test(ns)) return undefined;
    return {
      kind: 'entry',
      op: 'expiry',
      id: rest.slice(colon + 1),
      expiresAtNs: ns === '' ? undefined : BigInt(ns),
    };
  }
  return undefined;
}

export interface PgFeedOptions {
  /** How often the listening connection reads the log size (default 2,000 ms). */
  readonly heartbeatMs?: number;
}

export class PgFeed implements StoreFeed {
  private readonly sinks = new Set<Sink>();
  private client: pg.Client | undefined;
  private listening = false;
  private starting: Promise<void> | undefined;
  private closed = false;
  private backoffMs = 100;
  private retry: NodeJS.Timeout | undefined;
  private beat: NodeJS.Timeout | undefined;
  private lastSize = 0;
  private readonly heartbeatMs: number;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly features: SqlFeatures,
    opts: PgFeedOptions = {},
  ) {
    this.heartbeatMs = opts.heartbeatMs ?? 2_000;
  }

  /**
   * Live embedded entries after a leaf index, read in the system scope on the feed's own
   * connection (a follower catching up: never queued behind the request pool). One pipelined
   * exchange — BEGIN, the scope switch, the scan; its COMMIT follows unawaited.
   */
  async scanEntries(opts: { afterLeafIndex?: number; limit: number }): Promise<StoredEntry[]> {
    checkScan(opts);
    const c = this.client;
    if (c === undefined || !this.listening)
      throw new MemwardenError('STORAGE_UNAVAILABLE', 'the change feed is not connected', {
        details: { retryable: true, reason: 'connection' },
      });
    const sent = [c.query('BEGIN'), c.query(ENTER_SCOPE_SQL, scopeParams(SYSTEM_SCOPE))];
    for (const p of sent) p.catch(() => undefined);
    const q: Queryable = {
      query: async (sql, params) => ({
        rows: (await c.query(sql, params === undefined ? undefined : [...params])).rows as Record<
          string,
          unknown
        >[],
      }),
      exec: async (sql) => {
        await c.query(sql);
      },
    };
    try {
      const rows = await scanEntries(q, this.features, opts);
      for (const p of sent) await p;
      return rows;
    } catch (e) {
      throw normaliseDriverError(e);
    } finally {
      // Ends the read (or its failure) for whatever the connection does next; a connection that
      // cannot is reconnected.
      c.query('COMMIT').catch(() => this.fail(c));
    }
  }

  follow(sink: Sink): () => void {
    this.sinks.add(sink);
    if (this.listening && this.client !== undefined) {
      // A late subscriber: its own sync, at a size read now (notes after LISTEN all reach it).
      const c = this.client;
      c.query('SELECT size FROM log_head')
        .then((r) => {
          if (this.client === c && this.sinks.has(sink))
            sink({ kind: 'sync', size: Number(r.rows[0]?.size ?? 0) });
        })
        .catch(() => this.fail(c));
    } else this.start();
    return () => {
      this.sinks.delete(sink);
    };
  }

  /** Whether the feed is listening now. */
  get live(): boolean {
    return this.listening;
  }

  private emit(e: StoreEvent): void {
    for (const s of this.sinks) {
      try {
        s(e);
      } catch {
        // a subscriber's failure is its own
      }
    }
  }

  private start(): void {
    if (this.closed || this.starting !== undefined || this.client !== undefined) return;
    this.starting = this.connect().finally(() => {
      this.starting = undefined;
    });
  }

  private async connect(): Promise<void> {
    const c = new pg.Client({
      ...this.config,
      keepAlive: true,
      application_name: FEED_APPLICATION,
      // Catch-up reads are sent ahead of their answers (pg's pipeline mode), as the comment on
      // scanEntries says; without it pg warns on stderr for each queued query (CLI output).
      pipeline: true,
    });
    c.on('error', () => this.fail(c));
    c.on('end', () => this.fail(c));
    c.on('notification', (m) => {
      if (this.client !== c || !this.listening) return;
      const e = parseNote(m.payload);
      if (e === undefined) return;
      if (e.kind === 'log') {
        if (e.size <= this.lastSize) return;
        this.lastSize = e.size;
      }
      this.emit(e);
    });
    this.client = c;
    try {
      await c.connect();
      const ch = String((await c.query(`SELECT ${FEED_CHANNEL_SQL} AS ch`)).rows[0].ch);
      await c.query(`LISTEN "${ch}"`);
      const size = Number((await c.query('SELECT size FROM log_head')).rows[0]?.size ?? 0);
      if (this.client !== c || this.closed) return;
      this.listening = true;
      this.backoffMs = 100;
      this.lastSize = size;
      this.emit({ kind: 'sync', size });
      this.heartbeat(c);
    } catch {
      this.fail(c);
    }
  }

  private heartbeat(c: pg.Client): void {
    this.beat = setTimeout(() => {
      if (this.client !== c) return;
      c.query('SELECT size FROM log_head')
        .then((r) => {
          if (this.client !== c) return;
          const size = Number(r.rows[0]?.size ?? 0);
          if (size > this.lastSize) {
            this.lastSize = size;
            this.emit({ kind: 'log', size });
          }
          this.heartbeat(c);
        })
        .catch(() => this.fail(c));
    }, this.heartbeatMs);
    this.beat.unref();
  }

  /** The listening connection `c` is gone: report it once, and reconnect. */
  private fail(c: pg.Client): void {
    if (this.client !== c) return;
    this.client = undefined;
    clearTimeout(this.beat);
    const was = this.listening;
    this.listening = false;
    c.end().catch(() => undefined);
    if (was) this.emit({ kind: 'lost' });
    if (this.closed) return;
    this.retry = setTimeout(() => this.start(), this.backoffMs);
    this.retry.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, 5_000);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearTimeout(this.beat);
    this.sinks.clear();
    const c = this.client;
    this.client = undefined;
    this.listening = false;
    await this.starting?.catch(() => undefined);
    await c?.end().catch(() => undefined);
  }
}
