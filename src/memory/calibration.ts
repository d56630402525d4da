/**
 * @module memory/calibration
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
 * - recalibration: MemSAD every `recalibrateEvery` queries (Theorem 12's rolling
 *   recalibration); all three detectors when the reference has grown by ≥ 10 % (at least
 *   `minOwn / 5` entries) or leaves the cold start.
 *
 * Each principal's detectors live in their own `DetectionPipeline` (own history, own
 * thresholds); at most `maxPrincipals` stay in memory, the least recently used is rebuilt
 * from the store when it is needed again.
 */
import { fromBase64, toBase64, toHex, utf8 } from '../core/bytes.js';
import type { Finding } from '../core/detect/index.js';
import type { SourceTier, TrustLabel } from '../core/trust.js';
import type { Embedder } from '../ports/embedder.js';
import type { StorageBackend } from '../ports/storage.js';
import { GENERIC_BENIGN_REFERENCE } from './benign-reference.js';
import { BUNDLED_VECTORS } from './benign-vectors.js';
import { sha256 } from '../core/crypto/sha256.js';
import type { MemoryContext } from './context.js';
import { type DetectionConfig, DetectionPipeline, type ReadCandidate, type WriteCandidate } from './detect.js';

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
  /** Calibrated principals kept in memory (default 32; each holds a 1.5 MB MemSAD history). */
  readonly maxPrincipals?: number;
}

/** What the write and read paths need from detection, always for one named principal. */
export interface DetectionHooks {
  screenWrite(principal: string, c: WriteCandidate): Promise<Finding[]>;
  /** A write was stored: it may join the principal's reference (rolling calibration). */
  stored(principal: string, w: StoredWrite): void;
  /** A search was run: its query vector joins the principal's history. */
  observeQuery(principal: string, queryEmbedding: Float32Array): Promise<void>;
  scoreRead(principal: string, c: ReadCandidate): Promise<Finding[]>;
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

const QUERY_ACTION = 'detect.query';

/** MemSAD+'s semantic gate in the default: MemSAD z-score at or above which its lexical flag counts. */
export const DEFAULT_PLUS_GATE = 2;
const DAY_MS = 86_400_000;

/** One principal's detectors and the data they were calibrated on. */
class PrincipalDetectors {
  readonly texts: string[] = [];
  readonly vecs: Float32Array[] = [];
  /** Size of the own reference at the last full calibration. */
  calibratedOwn = -1;
  usingGeneric = true;

  constructor(
    readonly pipeline: DetectionPipeline,
    /** A registered principal (an unknown one's searches persist nothing). */
    readonly known: boolean,
  ) {}

  push(text: string, vec: Float32Array, max: number): void {
    this.texts.push(text);
    this.vecs.push(vec);
    if (this.texts.length > max) {
      this.texts.shift();
      this.vecs.shift();
    }
  }
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
  #shared: Promise<{ generic: Float32Array[]; probes: Float32Array[] }> | undefined;

  constructor(
    private readonly ctx: MemoryContext,
    private readonly embedder: Embedder,
    o: AutoDetectionOptions = {},
  ) {
    const memsad = o.config?.memsad;
    const ngram = o.config?.ngram;
    this.#cfg = {
      ...o.config,
      // Theorem 12: recalibrate on the rolling window (the user's real queries drift).
      memsad: memsad === false ? false : { recalibrateEvery: 25, ...memsad },
      // MemSAD+ counts near the recent queries only (ADR 0016: otherwise it floods review).
      ngram: ngram === false ? false : { gate: DEFAULT_PLUS_GATE, ...ngram },
    };
    this.#generic = o.genericReference ?? GENERIC_BENIGN_REFERENCE;
    this.minOwn = o.minOwn ?? 50;
    this.maxReference = o.maxReference ?? 1000;
    this.#persist = o.persistQueries ?? true;
    this.#windowNs = BigInt(Math.round(o.historyWindowMs ?? 30 * DAY_MS)) * 1_000_000n;
    this.#maxPrincipals = Math.max(1, o.maxPrincipals ?? 32);
    this.#reader = new DetectionPipeline(embedder, { ...this.#cfg, memsad: false, ngram: false, proactive: false });
  }

  async screenWrite(principal: string, c: WriteCandidate): Promise<Finding[]> {
    const s = await this.#state(principal);
    await this.#refresh(s);
    return s.pipeline.screenWrite(c);
  }

  stored(principal: string, w: StoredWrite): void {
    if (!isReferenceWrite(w.tier, w.label) || w.embedding.length !== this.embedder.dimensions) return;
    const pending = this.#states.get(principal);
    // Not loaded: the write is in the store and the next load reads it from there.
    if (pending === undefined) return;
    void pending.then(
      (s) => s.push(w.content, w.embedding, this.maxReference),
      () => undefined,
    );
  }

  async observeQuery(principal: string, v: Float32Array): Promise<void> {
    const s = await this.#state(principal);
    const m = s.pipeline.memsad;
    m?.observeQuery(v);
    // The first queries after a warm calibration with an empty history: set τ now rather than
    // abstaining until the next rolling recalibration.
    if (m !== undefined && m.calibration === undefined && !s.usingGeneric) m.recalibrate();
    if (this.#persist && s.known && s.pipeline.memsad !== undefined) {
      await this.ctx.view(principal).appendAudit({
        id: this.ctx.newId(),
        atNs: this.ctx.clock.nowNs(),
        actor: principal,
        action: QUERY_ACTION,
        subject: subjectOf(principal),
        details: { v: toBase64(quantize(v)) },
      });
    }
  }

  scoreRead(_principal: string, c: ReadCandidate): Promise<Finding[]> {
    return this.#reader.scoreRead(c);
  }

  /** The calibration a principal's detectors run on (for operators and tests). */
  async describe(principal: string): Promise<{
    own: number;
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
      own: s.texts.length,
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
    const queries = this.#persist && s.pipeline.memsad !== undefined ? await this.#history(view, principal) : [];
    await this.#calibrate(s, queries);
    return s;
  }

  /** Full calibration when the reference grew enough (or left the cold start) since the last. */
  async #refresh(s: PrincipalDetectors): Promise<void> {
    const own = s.texts.length;
    const step = Math.max(Math.ceil(this.minOwn / 5), Math.ceil(s.calibratedOwn * 0.1));
    const leavesColdStart = s.usingGeneric && own >= this.minOwn;
    if (leavesColdStart || own - s.calibratedOwn >= step) await this.#calibrate(s);
  }

  async #calibrate(s: PrincipalDetectors, queries?: Float32Array[]): Promise<void> {
    const shared = await this.#sharedVectors();
    const cold = s.texts.length < this.minOwn;
    const texts = cold ? [...this.#generic, ...s.texts] : [...s.texts];
    const vecs = cold ? [...shared.generic, ...s.vecs] : [...s.vecs];
    await s.pipeline.calibrate(texts, {
      embeddings: vecs,
      // MemSAD and MemSAD+ compare an entry with the principal's own distribution (its queries,
      // its language): a generic reference mis-sets them, so they wait for the principal's own.
      lexicalReference: cold ? [] : texts,
      memsadReference: cold ? [] : vecs,
      probeEmbeddings: shared.probes,
      ...(queries === undefined ? {} : { queryEmbeddings: queries }),
    });
    s.usingGeneric = cold;
    s.calibratedOwn = s.texts.length;
  }

  /**
   * The generic reference and the probes, embedded once for every principal — or taken from
   * the bundled vectors when they were made by this embedder's model from these very texts.
   */
  #sharedVectors(): Promise<{ generic: Float32Array[]; probes: Float32Array[] }> {
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
    const page = 500;
    const rows = [];
    for (let offset = 0; ; offset += page) {
      const got = await view.listEntriesFor({ limit: page, offset, nowNs, owner: principal });
      for (const r of got) {
        if (REFERENCE_TIERS.has(r.tier) && r.embedding?.length === this.embedder.dimensions) rows.push(r);
      }
      if (rows.length > this.maxReference) rows.splice(0, rows.length - this.maxReference);
      if (got.length < page) break;
    }
    const out: { text: string; vec: Float32Array }[] = [];
    for (const r of rows) {
      const v = await this.ctx.ledger.verifyStored(r);
      if (!v.ok || v.entry.ns !== principal || !isReferenceWrite(v.entry.tier, v.entry.label)) continue;
      out.push({ text: v.entry.content, vec: r.embedding as Float32Array });
    }
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
  for (const x of v) n += x * x;
  const k = n > 0 ? 127 / Math.sqrt(n) : 0;
  const q = new Int8Array(v.length);
  for (let i = 0; i < v.length; i++) q[i] = Math.max(-127, Math.min(127, Math.round((v[i] as number) * k)));
  return new Uint8Array(q.buffer);
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
