/**
 * @module memory/detect/calibration
 * Detection that calibrates itself, per principal (ADR 0016). The statistical detectors of
 * issue 7 — MemSAD, MemSAD+ and the proactive probes — judge a write against a benign
 * reference and (MemSAD) the queries the agent is being asked. By default both come from the
 * principal's own data, never another's:
 *
 * - reference: the principal's own live, verified memories of the trusted tiers
 *   (USER_VERIFIED, USER_OBSERVED; lineage label TRUSTED or DERIVED_TRUSTED), the most recent
 *   `maxReference`, read back from the store with their stored vectors (no re-embedding) and
 *   rolled forward as new ones are stored;
 * - cold start: while a principal has fewer than `minOwn` such memories, the proactive probes
 *   calibrate on the bundled generic reference (`GENERIC_BENIGN_REFERENCE`, the seven §6.1
 *   categories) plus the memories it has; MemSAD and MemSAD+ abstain until then. Both compare
 *   an entry with the principal's own distribution — its queries, its language — and a generic
 *   reference mis-sets them: measured through `Memory.add` with MiniLM, MemSAD calibrated on
 *   the generic reference held 42 % of a new principal's benign writes (its own entries sit far
 *   closer to its own queries than generic text does), and a generic n-gram baseline flags
 *   every write in another register (JSON values, short notes). Held writes never join the
 *   reference, so neither would recover on its own;
 * - MemSAD+ is gated: its lexical flag counts when the entry is also ≥ 2σ above the benign
 *   mean of MemSAD (near the recent queries, where a synonym-substituted poison must stay);
 * - query history: every search embeds its query anyway; the vector joins the principal's
 *   MemSAD FIFO and, int8-quantised, an audit event in the principal's own scope (row-level
 *   security keeps it theirs), so a restart rebuilds the history from the store;
 * - recalibration: MemSAD's τ rolls with the history (Theorem 12) once at least
 *   `recalibrateEvery` (25) queries arrived AND `recalibrateIntervalMs` (1 s) passed since the
 *   last, off the request path (a `setImmediate` after the search, or a timer for the rest of
 *   the interval), incrementally (core/detect/memsad): its cost is bounded by time, not by the
 *   query rate (ADR 0019). All three detectors recalibrate when the reference leaves the cold
 *   start (at once, before the write is screened) or has grown by ≥ 10 % (at least
 *   `minOwn / 5` entries: scheduled after the request, at most once per
 *   `recalibrateIntervalMs` per principal, incrementally — kept proactive scores and n-gram
 *   counts, only the new memories' computed);
 * - query persistence is batched: events wait in memory at most `queryFlushMs` (250 ms) or
 *   until `queryFlushEvents` are buffered, then go in one transaction per principal, in its
 *   own scope; `close()` flushes the rest. A crash loses at most one flush interval of query
 *   history — calibration data, never a memory write.
 *
 * Each principal's detectors live in their own `DetectionPipeline` (own history, own
 * thresholds); at most `maxPrincipals` stay in memory, the least recently used is rebuilt
 * from the store when it is needed again.
 */
import { fromBase64, toBase64, toHex, utf8 } from '../../core/bytes.js';
import { type Finding, type GramKey, type IndexedText, NgramIndex, ngramKeys } from '../../core/detect/index.js';
import type { SourceTier, TrustLabel } from '../../core/trust.js';
import type { Embedder } from '../../ports/embedder.js';
import type { AuditEvent, StorageBackend, StoredEntry } from '../../ports/storage.js';
import { GENERIC_BENIGN_REFERENCE } from './benign-reference.js';
import { BUNDLED_VECTORS } from './benign-vectors.js';
import { sha256 } from '../../core/crypto/sha256.js';
import type { MemoryContext } from '../context.js';
import type { Verification } from '../log/ledger.js';
import {
  type DetectionConfig,
  DetectionPipeline,
  type ReadCandidate,
  type ScreenMemo,
  type WriteCandidate,
} from './pipeline.js';

/** Options of the default, self-calibrating detection. Every field has a default. */
export interface AutoDetectionOptions {
  /** Detector knobs applied to every principal's pipeline (κ, modes, probes, watermark, …). */
  readonly config?: DetectionConfig;
  /** The cold-start reference (default `GENERIC_BENIGN_REFERENCE`). */
  readonly genericReference?: readonly string[];
  /** Own trusted memories needed before the generic reference is dropped (default 50). */
  readonly minOwn?: number;
  /** Own memories kept in the reference, most recent first (default 1,000). */
  readonly maxReference?: number;
  /** Persist query vectors in the principal's audit scope (default true). */
  readonly persistQueries?: boolean;
  /** How far back the history is rebuilt from the store (default 30 days). */
  readonly historyWindowMs?: number;
  /**
   * Calibrated principals kept in memory (default 64; each holds up to ~3 MB: history +
   * reference). More principals active in turn than this rebuild their state from the store
   * on every turn (least recently used goes first: a round robin one larger than the bound
   * misses every time) — size it to the principals active at once.
   */
  readonly maxPrincipals?: number;
  /**
   * Rolling recalibration: at least this many new queries (default 25, or
   * `config.memsad.recalibrateEvery`; 0 = never) AND at least `recalibrateIntervalMs`
   * (default 1,000) since MemSAD's τ was last set.
   */
  readonly recalibrateIntervalMs?: number;
  /** Longest time a query event waits in memory before it is persisted (default 250 ms). */
  readonly queryFlushMs?: number;
  /** Buffered query events (all principals) that trigger a flush at once (default 256). */
  readonly queryFlushEvents?: number;
}

/** What the write and read paths need from detection, always for one named principal. */
export interface DetectionHooks {
  screenWrite(principal: string, c: WriteCandidate): Promise<Finding[]>;
  /** A write was stored: it may join the principal's reference (rolling calibration). */
  stored(principal: string, w: StoredWrite): void;
  /** A search was run: its query vector joins the principal's history. */
  observeQuery(principal: string, queryEmbedding: Float32Array): Promise<void>;
  scoreRead(principal: string, c: ReadCandidate): Promise<Finding[]>;
  /** `scoreRead` without waiting when it needs nothing asynchronous (else undefined): the same findings. */
  scoreReadNow?(principal: string, c: ReadCandidate): Finding[] | undefined;
  /** Persist what is buffered and stop background work (`Memory.close`). */
  close?(): Promise<void>;
}

export interface StoredWrite {
  readonly content: string;
  readonly tier: SourceTier;
  readonly label: TrustLabel;
  readonly embedding: Float32Array;
}

/** Tiers and labels whose memories count as the principal's benign reference. */
const REFERENCE_TIERS: ReadonlySet<SourceTier> = new Set(['USER_VERIFIED', 'USER_OBSERVED']);
const REFERENCE_LABELS: ReadonlySet<TrustLabel> = new Set(['TRUSTED', 'DERIVED_TRUSTED']);

export const isReferenceWrite = (tier: SourceTier, label: TrustLabel): boolean =>
  REFERENCE_TIERS.has(tier) && REFERENCE_LABELS.has(label);
const isReferenceTier = (tier: SourceTier): boolean => REFERENCE_TIERS.has(tier);

const QUERY_ACTION = 'detect.query';

/** MemSAD+'s semantic gate in the default: MemSAD z-score at or above which its lexical flag counts. */
export const DEFAULT_PLUS_GATE = 2;
const DAY_MS = 86_400_000;

/**
 * One memory of a principal's own reference, with what calibration derived from it: its
 * proactive score and its n-gram counts never change, so a growth recalibration computes
 * them for the new memories only (ADR 0019) — or takes them from the write's screening
 * (`counts`, `pro`: the same functions of the same text and vector; ADR 0026).
 */
interface RefItem {
  readonly text: string;
  readonly vec: Float32Array;
  pro?: number;
  /** `ngramKeys(text, n)` from screening, until the item joins the index. */
  counts?: ReadonlyMap<GramKey, number> | undefined;
  /** The item's counts in the principal's n-gram index. */
  grams?: IndexedText;
}

/** What a write's screening left for its reference memory (keyed by the write's vector). */
interface Screened extends ScreenMemo {
  readonly state: PrincipalDetectors;
  readonly text: string;
}

/** One principal's detectors and the data they were calibrated on. */
class PrincipalDetectors {
  /** The own reference, oldest first (at most `maxReference`). */
  readonly items: RefItem[] = [];
  /** The n-gram counts of the items that have them (`grams`), summed and indexed. */
  readonly grams = new NgramIndex();
  /** Size of the own reference at the last full calibration. */
  calibratedOwn = -1;
  usingGeneric = true;
  /** Clock time (ns) MemSAD's τ was last set. */
  lastRecalNs = 0n;
  /** Clock time (ns) of the last calibration on the reference (load, cold start, growth). */
  lastCalibratedNs = 0n;
  /** A growth recalibration is queued (`setImmediate`) or running. */
  growQueued = false;
  /** …or waits on a timer for the rest of the interval. */
  growTimer: ReturnType<typeof setTimeout> | undefined;
  /** A rolling recalibration is queued with `setImmediate`. */
  recalQueued = false;
  /** …or waits on a timer for the rest of the interval. */
  recalTimer: ReturnType<typeof setTimeout> | undefined;
  /** The shared probes are set on the pipeline's proactive detector. */
  probesSet = false;
  /** Own memories MemSAD was last calibrated on (the first that many items; -1: none). */
  memsadOn = -1;
  /** Items evicted (oldest first) since the last calibration. */
  evicted = 0;

  constructor(
    readonly pipeline: DetectionPipeline,
    /** A registered principal (an unknown one's searches persist nothing). */
    readonly known: boolean,
  ) {}

  get own(): number {
    return this.items.length;
  }

  push(text: string, vec: Float32Array, max: number, memo?: ScreenMemo): void {
    const it: RefItem = { text, vec };
    if (memo?.pro !== undefined) it.pro = memo.pro;
    if (memo?.grams !== undefined) it.counts = memo.grams;
    this.items.push(it);
    while (this.items.length > max) {
      const out = this.items.shift() as RefItem;
      if (out.grams !== undefined) this.grams.remove(out.grams);
      this.evicted++;
    }
  }
}

/**
 * The detector configuration every principal's pipeline runs with (the default stack a write
 * meets): the caller's knobs, MemSAD's rolling recalibration left to AutoDetection, MemSAD+
 * gated. `memwarden eval injections` measures the stack through this very function.
 */
export function autoDetectionConfig(config: DetectionConfig = {}): DetectionConfig {
  const memsad = config.memsad;
  const ngram = config.ngram;
  return {
    ...config,
    // Theorem 12's rolling recalibration is scheduled here (bounded by count and time), not
    // by MemSAD on every N-th query.
    memsad: memsad === false ? false : { ...memsad, recalibrateEvery: 0 },
    // MemSAD+ counts near the recent queries only (ADR 0016: otherwise it floods review).
    ngram: ngram === false ? false : { gate: DEFAULT_PLUS_GATE, ...ngram },
  };
}

export class AutoDetection implements DetectionHooks {
  readonly minOwn: number;
  readonly maxReference: number;
  readonly #cfg: DetectionConfig;
  readonly #generic: readonly string[];
  readonly #persist: boolean;
  readonly #windowNs: bigint;
  readonly #maxPrincipals: number;
  /** Read-time scoring is stateless (injection risk, implausible similarity): one shared pipeline. */
  readonly #reader: DetectionPipeline;
  readonly #states = new Map<string, Promise<PrincipalDetectors>>();
  readonly #recalEvery: number;
  readonly #recalIntervalNs: bigint;
  readonly #flushMs: number;
  readonly #flushEvents: number;
  /** Query events not yet persisted, per principal, oldest first. */
  #buffer = new Map<string, AuditEvent[]>();
  #buffered = 0;
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** The flush in progress (flushes run one at a time, in order). */
  #flushing: Promise<void> = Promise.resolve();
  readonly #recalTimers = new Set<ReturnType<typeof setTimeout>>();
  readonly #growTimers = new Set<ReturnType<typeof setTimeout>>();
  #closed = false;
  #shared: Promise<SharedVectors> | undefined;
  /**
   * What screening computed for a write, until the write is stored (or its vector is
   * collected): keyed by the very vector the write path screens and then stores.
   */
  readonly #screened = new WeakMap<Float32Array, Screened>();
  /** Query payloads by the array they were computed from, with its bits then (`#payload`). */
  readonly #payloads = new WeakMap<Float32Array, { readonly bits: Int32Array; readonly payload: string }>();

  constructor(
    private readonly ctx: MemoryContext,
    private readonly embedder: Embedder,
    o: AutoDetectionOptions = {},
  ) {
    const memsad = o.config?.memsad;
    this.#cfg = autoDetectionConfig(o.config);
    this.#generic = o.genericReference ?? GENERIC_BENIGN_REFERENCE;
    this.minOwn = o.minOwn ?? 50;
    this.maxReference = o.maxReference ?? 1000;
    this.#persist = o.persistQueries ?? true;
    this.#windowNs = BigInt(Math.round(o.historyWindowMs ?? 30 * DAY_MS)) * 1_000_000n;
    this.#maxPrincipals = Math.max(1, o.maxPrincipals ?? 64);
    this.#recalEvery = memsad === false ? 0 : Math.max(0, memsad?.recalibrateEvery ?? 25);
    this.#recalIntervalNs = BigInt(Math.max(0, Math.round(o.recalibrateIntervalMs ?? 1000))) * 1_000_000n;
    this.#flushMs = Math.max(0, o.queryFlushMs ?? 250);
    this.#flushEvents = Math.max(1, o.queryFlushEvents ?? 256);
    this.#reader = new DetectionPipeline(embedder, { ...this.#cfg, memsad: false, ngram: false, proactive: false });
  }

  async screenWrite(principal: string, c: WriteCandidate): Promise<Finding[]> {
    const s = await this.#state(principal);
    await this.#refresh(s);
    if (c.embedding === undefined || !isReferenceTier(c.tier)) return s.pipeline.screenWrite(c);
    const memo: Screened = { state: s, text: c.content };
    const out = await s.pipeline.screenWrite(c, memo);
    this.#screened.set(c.embedding, memo);
    return out;
  }

  stored(principal: string, w: StoredWrite): void {
    const memo = this.#screened.get(w.embedding);
    if (memo !== undefined) this.#screened.delete(w.embedding);
    if (!isReferenceWrite(w.tier, w.label) || w.embedding.length !== this.embedder.dimensions) return;
    const pending = this.#states.get(principal);
    // Not loaded: the write is in the store and the next load reads it from there.
    if (pending === undefined) return;
    void pending.then(
      (s) =>
        s.push(
          w.content,
          w.embedding,
          this.maxReference,
          // Screened by this principal's detectors, on this very text: reused, not recomputed.
          memo !== undefined && memo.state === s && memo.text === w.content ? memo : undefined,
        ),
      () => undefined,
    );
  }

  async observeQuery(principal: string, v: Float32Array): Promise<void> {
    const s = await this.#state(principal);
    const m = s.pipeline.memsad;
    if (m === undefined) return;
    m.observeQuery(v);
    if (m.calibration === undefined && !s.usingGeneric) {
      // The first queries after a warm calibration with an empty history: set τ now rather
      // than abstaining until the next rolling recalibration (cheap: the history is tiny).
      m.recalibrate();
      s.lastRecalNs = this.ctx.clock.nowNs();
    } else this.#scheduleRecalibration(s);
    if (this.#persist && s.known) {
      this.#enqueue(principal, {
        id: this.ctx.newId(),
        atNs: this.ctx.clock.nowNs(),
        actor: principal,
        action: QUERY_ACTION,
        subject: subjectOf(principal),
        details: { v: this.#payload(v) },
      });
    }
  }

  /**
   * Theorem 12's rolling recalibration, bounded by count and time: once `recalibrateEvery`
   * queries arrived since τ was set, τ is recomputed as soon as `recalibrateIntervalMs` has
   * passed since then — right after this request (`setImmediate`) or on a timer for the rest
   * of the interval, so a burst followed by silence still moves τ.
   */
  #scheduleRecalibration(s: PrincipalDetectors): void {
    const m = s.pipeline.memsad;
    if (m === undefined || this.#closed || s.recalQueued || this.#recalEvery === 0) return;
    if (m.queriesSinceCalibration < this.#recalEvery) return;
    const waitNs = this.#recalIntervalNs - (this.ctx.clock.nowNs() - s.lastRecalNs);
    if (waitNs <= 0n) {
      if (s.recalTimer !== undefined) {
        clearTimeout(s.recalTimer);
        this.#recalTimers.delete(s.recalTimer);
        s.recalTimer = undefined;
      }
      s.recalQueued = true;
      setImmediate(() => this.#recalibrate(s));
    } else if (s.recalTimer === undefined) {
      const t = setTimeout(() => this.#recalibrate(s), Math.ceil(Number(waitNs) / 1e6));
      t.unref();
      this.#recalTimers.add(t);
      s.recalTimer = t;
    }
  }

  #recalibrate(s: PrincipalDetectors): void {
    if (s.recalTimer !== undefined) this.#recalTimers.delete(s.recalTimer);
    s.recalTimer = undefined;
    s.recalQueued = false;
    const m = s.pipeline.memsad;
    if (this.#closed || m === undefined || m.queriesSinceCalibration === 0 || s.usingGeneric) return;
    m.recalibrate();
    s.lastRecalNs = this.ctx.clock.nowNs();
  }

  /**
   * A query event's vector, `toBase64(quantize(v))`: kept per query array while its bits are
   * unchanged, since an agent asks the same queries again and the server's query-embedding
   * cache hands back the same array (quantising 384 floats and encoding them costs several
   * times the comparison that proves the payload is still the one `v` gives).
   */
  #payload(v: Float32Array): string {
    const bits = new Int32Array(v.buffer, v.byteOffset, v.length);
    const hit = this.#payloads.get(v);
    if (hit !== undefined && sameBits(hit.bits, bits)) return hit.payload;
    const payload = toBase64(quantize(v));
    this.#payloads.set(v, { bits: bits.slice(), payload });
    return payload;
  }

  /** Buffer a query event; flushed within `queryFlushMs`, or now when enough are waiting. */
  #enqueue(principal: string, e: AuditEvent): void {
    let q = this.#buffer.get(principal);
    if (q === undefined) this.#buffer.set(principal, (q = []));
    q.push(e);
    this.#buffered++;
    if (this.#buffered >= this.#flushEvents) {
      this.flush().catch(() => undefined); // kept buffered and retried on the next flush
    } else if (this.#flushTimer === undefined) {
      this.#flushTimer = setTimeout(() => {
        this.#flushTimer = undefined;
        this.flush().catch(() => undefined);
      }, this.#flushMs);
      this.#flushTimer.unref();
    }
  }

  /**
   * Persist every buffered query event: one transaction per principal, through its own view
   * (its own row-level-security scope). A principal whose transaction fails keeps its events
   * buffered (the newest `capacity`, what a rebuild would read) for the next flush, and the
   * first error is thrown after the others were tried.
   */
  flush(): Promise<void> {
    const run = this.#flushing.then(() => this.#flushNow());
    this.#flushing = run.catch(() => undefined);
    return run;
  }

  async #flushNow(): Promise<void> {
    if (this.#flushTimer !== undefined) {
      clearTimeout(this.#flushTimer);
      this.#flushTimer = undefined;
    }
    if (this.#buffered === 0) return;
    const batches = this.#buffer;
    this.#buffer = new Map();
    this.#buffered = 0;
    let failure: unknown;
    let failed = false;
    for (const [principal, events] of batches) {
      try {
        // One multi-row statement where the backend has it (one per event costs ~0.25 ms on
        // PGlite: most of a search's budget at load); otherwise one transaction.
        const view = this.ctx.view(principal);
        if (view.appendAudits !== undefined) await view.appendAudits(events);
        else
          await view.transaction(async (tx) => {
            for (const e of events) await tx.appendAudit(e);
          });
      } catch (err) {
        if (!failed) failure = err;
        failed = true;
        const cap = this.#cfg.memsad === false ? 0 : (this.#cfg.memsad?.capacity ?? 1000);
        const kept = [...events, ...(this.#buffer.get(principal) ?? [])].slice(-cap);
        this.#buffered += kept.length - (this.#buffer.get(principal)?.length ?? 0);
        this.#buffer.set(principal, kept);
      }
    }
    if (failed) {
      if (!this.#closed && this.#flushTimer === undefined) {
        this.#flushTimer = setTimeout(() => {
          this.#flushTimer = undefined;
          this.flush().catch(() => undefined);
        }, this.#flushMs);
        this.#flushTimer.unref();
      }
      throw failure;
    }
  }

  /** Persist the buffered query history and stop the timers (nothing buffered is lost). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#recalTimers) clearTimeout(t);
    for (const t of this.#growTimers) clearTimeout(t);
    this.#growTimers.clear();
    this.#recalTimers.clear();
    await this.flush();
  }

  scoreRead(_principal: string, c: ReadCandidate): Promise<Finding[]> {
    return this.#reader.scoreRead(c);
  }

  scoreReadNow(_principal: string, c: ReadCandidate): Finding[] | undefined {
    return this.#reader.scoreReadNow(c);
  }

  /** The calibration a principal's detectors run on (for operators and tests). */
  async describe(principal: string): Promise<{
    own: number;
    /** Size of the own reference the thresholds were last calibrated on. */
    calibratedOn: number;
    generic: boolean;
    history: number;
    thresholds: { memsad?: number; memsad_plus?: number; proactive?: number };
  }> {
    const s = await this.#state(principal);
    await this.#refresh(s);
    const p = s.pipeline;
    const memsad = p.memsad?.calibration?.threshold;
    const plus = p.ngram?.threshold;
    const pro = p.proactive?.threshold;
    return {
      own: s.own,
      calibratedOn: s.calibratedOwn,
      generic: s.usingGeneric,
      history: p.memsad?.historySize ?? 0,
      thresholds: {
        ...(memsad === undefined ? {} : { memsad }),
        ...(plus === undefined ? {} : { memsad_plus: plus }),
        ...(pro === undefined ? {} : { proactive: pro }),
      },
    };
  }

  #state(principal: string): Promise<PrincipalDetectors> {
    const hit = this.#states.get(principal);
    if (hit !== undefined) {
      // LRU: move to the back.
      this.#states.delete(principal);
      this.#states.set(principal, hit);
      return hit;
    }
    const p = this.#load(principal);
    this.#states.set(principal, p);
    p.catch(() => this.#states.delete(principal)); // a failed load is retried next time
    while (this.#states.size > this.#maxPrincipals) {
      const oldest = this.#states.keys().next().value as string;
      this.#states.delete(oldest);
    }
    return p;
  }

  /** Build a principal's detectors from the store: own reference, persisted query history. */
  async #load(principal: string): Promise<PrincipalDetectors> {
    const view = this.ctx.view(principal);
    const known = (await this.ctx.storage.getPrincipal(principal)) !== undefined;
    const s = new PrincipalDetectors(new DetectionPipeline(this.embedder, this.#cfg), known);
    for (const r of await this.#ownReference(view, principal)) s.push(r.text, r.vec, this.maxReference);
    // Buffered events first, so a principal reloaded after LRU eviction keeps its history.
    // (A flush already in progress is awaited too; a failing store is retried later.)
    if (this.#persist) await (this.#buffer.has(principal) ? this.flush() : this.#flushing).catch(() => undefined);
    const queries = this.#persist && s.pipeline.memsad !== undefined ? await this.#history(view, principal) : [];
    await this.#calibrate(s, queries);
    return s;
  }

  /**
   * Recalibrate on the reference when it left the cold start (now, on this request) or grew
   * by the step since the last calibration (scheduled after the request: this one is screened
   * with the current calibration).
   */
  async #refresh(s: PrincipalDetectors): Promise<void> {
    if (s.usingGeneric && s.own >= this.minOwn) {
      // Leaving the cold start turns MemSAD and MemSAD+ on (they abstain on the generic
      // reference): done before this write is screened, so no write after the principal's
      // minOwn-th trusted memory passes with two detectors abstaining. Once per principal,
      // on a small reference (~minOwn memories): well under a millisecond of CPU.
      await this.#calibrate(s);
    } else if (this.#grown(s)) this.#scheduleGrowth(s);
  }

  /** The reference grew by ≥ 10 % (at least minOwn / 5) since it was last calibrated on. */
  #grown(s: PrincipalDetectors): boolean {
    const step = Math.max(Math.ceil(this.minOwn / 5), Math.ceil(s.calibratedOwn * 0.1));
    return s.own - s.calibratedOwn >= step;
  }

  /**
   * A growth recalibration, off the request path and bounded by time like MemSAD's rolling
   * one: at most one queued per principal, and at most one per `recalibrateIntervalMs` since
   * the last calibration (by the injected clock) — right after this request (`setImmediate`)
   * or on an unref'd timer for the rest of the interval.
   */
  #scheduleGrowth(s: PrincipalDetectors): void {
    if (this.#closed || s.growQueued) return;
    const waitNs = this.#recalIntervalNs - (this.ctx.clock.nowNs() - s.lastCalibratedNs);
    if (waitNs <= 0n) {
      if (s.growTimer !== undefined) {
        clearTimeout(s.growTimer);
        this.#growTimers.delete(s.growTimer);
        s.growTimer = undefined;
      }
      s.growQueued = true;
      setImmediate(() => void this.#grow(s));
    } else if (s.growTimer === undefined) {
      const t = setTimeout(() => {
        this.#growTimers.delete(t);
        s.growTimer = undefined;
        s.growQueued = true;
        void this.#grow(s);
      }, Math.ceil(Number(waitNs) / 1e6));
      t.unref();
      this.#growTimers.add(t);
      s.growTimer = t;
    }
  }

  async #grow(s: PrincipalDetectors): Promise<void> {
    try {
      if (this.#closed) return;
      // Re-checked: a cold-start calibration may have run meanwhile.
      if ((s.usingGeneric && s.own >= this.minOwn) || this.#grown(s)) await this.#calibrate(s);
    } catch {
      // The shared vectors could not be made (model unavailable): the current calibration
      // stays, and the next write that finds the reference grown schedules it again.
    } finally {
      s.growQueued = false;
    }
  }

  /**
   * Calibrate every detector on the principal's reference — incrementally where a memory's
   * contribution does not change: proactive scores and n-gram counts are computed once per
   * reference memory (and once per process for the generic reference), then combined. The
   * thresholds equal `DetectionPipeline.calibrate` on the same reference exactly (tested).
   * MemSAD takes the new reference in full (its τ scores the reference against the history).
   */
  async #calibrate(s: PrincipalDetectors, queries?: Float32Array[]): Promise<void> {
    const shared = await this.#sharedVectors();
    const p = s.pipeline;
    const cold = s.own < this.minOwn;
    const items = s.items;
    if (p.proactive !== undefined) {
      const pro = p.proactive;
      if (!s.probesSet) {
        pro.setProbes(shared.probes);
        s.probesSet = true;
      }
      shared.genericScores ??= shared.generic.map((v) => pro.score(v));
      const xs: number[] = cold ? [...shared.genericScores] : [];
      for (const it of items) xs.push((it.pro ??= pro.score(it.vec)));
      pro.calibrateScores(xs);
    }
    // MemSAD and MemSAD+ compare an entry with the principal's own distribution (its queries,
    // its language): a generic reference mis-sets them, so they wait for the principal's own.
    if (p.ngram !== undefined) {
      const n = p.ngram.n;
      const per: IndexedText[] = [];
      if (!cold)
        for (const it of items) {
          if (it.grams === undefined) {
            it.grams = s.grams.add(it.counts ?? ngramKeys(it.text, n));
            it.counts = undefined;
          }
          per.push(it.grams);
        }
      p.ngram.calibrateIndexed(per, s.grams);
    }
    if (p.memsad !== undefined) {
      // A reference that only grew since MemSAD's last calibration is appended to (only the
      // new memories are scored against the history); otherwise it is replaced.
      if (!cold && queries === undefined && s.memsadOn >= 0 && s.evicted === 0)
        p.memsad.extendReference(items.slice(s.memsadOn).map((it) => it.vec));
      else p.memsad.calibrate(cold ? [] : items.map((it) => it.vec), queries);
    }
    s.memsadOn = cold ? -1 : items.length;
    s.evicted = 0;
    s.usingGeneric = cold;
    s.calibratedOwn = s.own;
    s.lastRecalNs = s.lastCalibratedNs = this.ctx.clock.nowNs();
  }

  /**
   * The generic reference and the probes, embedded once for every principal — or taken from
   * the bundled vectors when they were made by this embedder's model from these very texts.
   */
  #sharedVectors(): Promise<SharedVectors> {
    if (this.#shared === undefined) {
      const probes = this.#reader.probes;
      const b = BUNDLED_VECTORS;
      const bundled = this.embedder.name === b.model && this.embedder.dimensions === b.dimensions;
      this.#shared = (async () => ({
        generic:
          bundled && fingerprint(this.#generic) === b.referenceFingerprint
            ? unpack(b.reference, b.dimensions)
            : await embedAll(this.embedder, this.#generic),
        probes:
          this.#cfg.proactive === false
            ? []
            : bundled && fingerprint(probes) === b.probesFingerprint
              ? unpack(b.probes, b.dimensions)
              : await embedAll(this.embedder, probes),
      }))();
      this.#shared.catch(() => {
        this.#shared = undefined; // model unavailable: retried on the next call
      });
    }
    return this.#shared;
  }

  /** The principal's most recent trusted memories, verified, with their stored vectors. */
  async #ownReference(view: StorageBackend, principal: string): Promise<{ text: string; vec: Float32Array }[]> {
    const nowNs = this.ctx.clock.nowNs();
    const rows: StoredEntry[] = [];
    const keep = (got: readonly StoredEntry[]): void => {
      for (const r of got) {
        if (REFERENCE_TIERS.has(r.tier) && r.embedding?.length === this.embedder.dimensions) rows.push(r);
      }
      if (rows.length > this.maxReference) rows.splice(0, rows.length - this.maxReference);
    };
    if (view.scanEntries !== undefined) {
      // Keyset pages of the live embedded rows with binary embeddings (ADR 0022): linear in the
      // principal's rows. OFFSET pages re-read every earlier row and parsed text vectors — most
      // of a large principal's first search after a restart (~3.5 s of CPU at 10,000 entries).
      const page = 1000;
      for (let after = -1; ; ) {
        const got = await view.scanEntries({ afterLeafIndex: after, limit: page });
        keep(got.filter((r) => r.owner === principal && (r.expiresAtNs === undefined || r.expiresAtNs > nowNs)));
        if (got.length < page) break;
        after = (got[got.length - 1] as StoredEntry).leafIndex;
      }
    } else {
      const page = 500;
      for (let offset = 0; ; offset += page) {
        const got = await view.listEntriesFor({ limit: page, offset, nowNs, owner: principal });
        keep(got);
        if (got.length < page) break;
      }
    }
    const out: { text: string; vec: Float32Array }[] = [];
    // One batch (`Ledger.verifyMany`): entries past the latest checkpoint are proved by audit
    // paths read in one call. One at a time, each cost its own checkpoint read and node read —
    // on a PostgreSQL server two transactions per row, 0.3–15 s for a principal's first write
    // on a process at 100,000 entries.
    const verdicts = await this.ctx.ledger.verifyMany(rows);
    rows.forEach((r, i) => {
      const v = verdicts[i] as Verification;
      if (!v.ok || v.entry.ns !== principal || !isReferenceWrite(v.entry.tier, v.entry.label)) return;
      out.push({ text: v.entry.content, vec: r.embedding as Float32Array });
    });
    return out;
  }

  /** The principal's persisted query vectors within the window, the newest `capacity`. */
  async #history(view: StorageBackend, principal: string): Promise<Float32Array[]> {
    const capacity = this.#cfg.memsad === false ? 0 : (this.#cfg.memsad?.capacity ?? 1000);
    const dims = this.embedder.dimensions;
    const out: Float32Array[] = [];
    let afterNs = this.ctx.clock.nowNs() - this.#windowNs;
    const subject = subjectOf(principal);
    for (;;) {
      const got = await view.listAudit({ limit: 1000, afterNs, subject });
      for (const e of got) {
        const raw = e.action === QUERY_ACTION ? e.details.v : undefined;
        if (typeof raw !== 'string') continue;
        try {
          const q = fromBase64(raw);
          if (q.length === dims) out.push(dequantize(q));
        } catch {
          // a malformed event is skipped, never fatal
        }
      }
      if (out.length > capacity) out.splice(0, out.length - capacity);
      const last = got.at(-1);
      if (got.length < 1000 || last === undefined) break;
      afterNs = last.atNs;
    }
    return out;
  }
}

/** The generic reference and probe vectors, shared by every principal of one `AutoDetection`. */
interface SharedVectors {
  readonly generic: Float32Array[];
  readonly probes: Float32Array[];
  /** The generic reference's proactive scores under these probes (computed on first use). */
  genericScores?: number[];
}

/** The audit subject of a principal's query history (indexed, so a rebuild reads only theirs). */
const subjectOf = (principal: string): string => `${QUERY_ACTION}:${principal}`;

async function embedAll(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  // Batches under 24 keep the local model single-threaded (DESIGN.md).
  for (let i = 0; i < texts.length; i += 16) out.push(...(await embedder.embed(texts.slice(i, i + 16))));
  return out;
}

/** A unit-normalised vector as int8 (cosine error ≈ 1e-3, 4× smaller than float32). */
export function quantize(v: Float32Array): Uint8Array {
  let n = 0;
  // Indexed, not `for…of` (the iterator costs a third of the function): the same sum.
  for (let i = 0; i < v.length; i++) n += (v[i] as number) * (v[i] as number);
  const k = n > 0 ? 127 / Math.sqrt(n) : 0;
  const q = new Int8Array(v.length);
  for (let i = 0; i < v.length; i++) q[i] = Math.max(-127, Math.min(127, Math.round((v[i] as number) * k)));
  return new Uint8Array(q.buffer);
}

/** Bit-identical word arrays. */
function sameBits(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function dequantize(b: Uint8Array): Float32Array {
  const q = new Int8Array(b.buffer, b.byteOffset, b.length);
  return Float32Array.from(q, (x) => x / 127);
}

/** SHA-256 over the texts (length-prefixed), to tie bundled vectors to the texts they embed. */
export function fingerprint(texts: readonly string[]): string {
  return toHex(sha256(utf8.encode(JSON.stringify(texts))));
}

function unpack(b64: string, dims: number): Float32Array[] {
  const bytes = fromBase64(b64);
  const out: Float32Array[] = [];
  for (let o = 0; o + dims <= bytes.length; o += dims) out.push(dequantize(bytes.subarray(o, o + dims)));
  return out;
}
