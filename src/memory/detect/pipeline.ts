/**
 * @module memory/detect/pipeline
 * The detection pipeline of issue 7: one object that composes the pure detectors of
 * `core/detect` with an Embedder, for the write path (article Pattern 3 + MemSAD family), the
 * read path (Pattern 6 + the implausible-similarity check), and `memwarden scan`.
 *
 * - `screenWrite` — markers (the existing `MarkerScreen`), rule validation, MemSAD, MemSAD+,
 *   proactive probes, the watermark (when a key is configured) and their disjunction.
 * - `scoreRead` — trust-aware injection risk, implausible similarity, an optional
 *   stored-vector check and an optional classifier hook.
 * - `extractFacts` (extract.ts, re-exported) — the extraction step: untrusted content becomes
 *   short validated facts (JSON from the LLM, checked), never stored verbatim unless the
 *   caller opts out.
 *
 * Findings are values: nothing here throws on content. Embedding failures do propagate (they
 * are infrastructure, not content); callers decide to hold the write.
 */
import {
  type DetectorName,
  type Finding,
  type ImplausibleOptions,
  type InjectionRiskOptions,
  INSTRUCTION_MODEL,
  InstructionScreen,
  Memsad,
  type MemsadMode,
  NgramJsd,
  Proactive,
  type ScreenedTier,
  Watermark,
  composite,
  embeddingMismatch,
  finding,
  implausibleSimilarity,
  injectionRisk,
  type GramKey,
  ngramKeys,
  validate,
} from '../../core/detect/index.js';
import type { SourceTier } from '../../core/trust.js';
import type { Embedder } from '../../ports/embedder.js';
import { type InstructionConfig, instructionThresholds } from './instruction-tiers.js';
import { type ProactiveTier, proactiveTiers } from './proactive-tiers.js';
import { MarkerScreen } from './screen.js';

/**
 * 16 proactive probes, 8 sensitive subtopics × 2 (MemSAD paper App. C): the domains where a
 * poisoned memory does damage (credentials, payments, account recovery, security codes,
 * remote access, secrets, invoices, support contacts). An entry close to all of them at once
 * is written to be retrieved for them. Deployments set their own via `proactive.probes`.
 */
export const DEFAULT_PROBES: readonly string[] = [
  'How do I change my password?',
  'Where are my login credentials kept?',
  'How do I pay this bill?',
  'Which bank account do payments go to?',
  'I am locked out of my account, what now?',
  'How can I recover my account?',
  'Where do verification codes get sent?',
  'What is my two-factor authentication setup?',
  'How do I connect to the work network remotely?',
  'What are the remote access instructions?',
  'Where should secret keys and tokens be stored?',
  'Who may see my private keys?',
  'Where do I send the invoice?',
  'What are the payment details for the supplier?',
  'Who is the contact for IT support?',
  'What is the official helpdesk address?',
];

export interface DetectionConfig {
  /** MemSAD; `false` disables. */
  readonly memsad?:
    | false
    | {
        readonly capacity?: number;
        readonly kappa?: number;
        readonly mode?: MemsadMode;
        readonly alpha?: number;
        readonly recalibrateEvery?: number;
        readonly threshold?: number;
      };
  /** MemSAD+ character n-gram JSD; `false` disables. */
  readonly ngram?:
    | false
    | {
        readonly n?: number;
        readonly kappa?: number;
        readonly threshold?: number;
        /**
         * Semantic gate (ADR 0016): the lexical flag counts only when the entry's MemSAD score
         * is at least `gate` standard deviations above the benign mean — near the recent
         * queries, where the synonym-substitution attack it exists for must stay. Absent:
         * ungated (the paper's MemSAD+).
         */
        readonly gate?: number;
      };
  /**
   * Proactive probes (texts embedded at calibration); `false` disables. A write is held at its
   * tier's κ, corroborated by the instruction screen (`tiers`, default
   * `DEFAULT_PROACTIVE_TIERS`, ADR 0052); one `kappa` or a fixed `threshold` without `tiers`
   * applies to every tier, uncorroborated.
   */
  readonly proactive?:
    | false
    | {
        readonly probes?: readonly string[];
        readonly kappa?: number;
        readonly threshold?: number;
        readonly tiers?: Partial<Record<ScreenedTier, Partial<ProactiveTier>>>;
      };
  /** Watermark: enabled only with a key (the deployment controls ingestion). */
  readonly watermark?: {
    readonly key: string;
    readonly gamma?: number;
    readonly threshold?: number;
  };
  readonly validation?: false | { readonly threshold?: number };
  /**
   * The instruction screen (issue 22): instruction vs fact from linguistic features and the
   * write's MiniLM vector, held at per-tier thresholds; `false` disables.
   */
  readonly instruction?: false | InstructionConfig;
  /** The article's marker screen (instruction / role-claim / delimiter / length). */
  readonly markers?: false | { readonly maxFactChars?: number };
  readonly injection?: InjectionRiskOptions;
  readonly implausible?: ImplausibleOptions;
  /** Re-embed content on read and compare with the stored vector (costs one embedding). */
  readonly reembedOnRead?: boolean;
  /** Tiers whose writes skip the content detectors (default: OPERATOR). */
  readonly exemptTiers?: readonly SourceTier[];
  /** Read-time classifier model hook (e.g. a cheap LLM); its finding joins the others. */
  readonly classifier?: (content: string, tier: SourceTier) => Promise<Finding | undefined>;
}

/**
 * What screening a write computed that a calibration with the same text and vector computes
 * again (its n-gram counts, its proactive score under the current probes): AutoDetection keeps
 * them for the write's reference memory (ADR 0026). Pure functions of the text and the vector.
 */
export interface ScreenMemo {
  /** `ngramKeys(content, ngram.n)` (left unset when a watermark was stripped before scoring). */
  grams?: Map<GramKey, number>;
  /** `proactive.score(vector)` under the probes set at screening. */
  pro?: number;
}

export interface WriteCandidate {
  readonly content: string;
  readonly tier: SourceTier;
  readonly principal?: string;
  /** The content's embedding when the caller already has it (skips the model). */
  readonly embedding?: Float32Array;
}

export interface ReadCandidate {
  readonly content: string;
  readonly tier: SourceTier;
  readonly queryEmbedding: Float32Array;
  readonly entryEmbedding: Float32Array;
  /** The query text, when known, sharpens the implausible-similarity check. */
  readonly query?: string;
}

/** One-line verdict: flagged, a score (number of flagged detectors) and reasons. */
export interface Verdict {
  readonly flagged: boolean;
  readonly score: number;
  readonly reasons: string[];
}

/** Collapse findings into a verdict (the composite and per-detector findings alike). */
export function verdictOf(findings: readonly Finding[]): Verdict {
  const flagged = findings.filter((f) => f.flagged && f.detector !== 'composite');
  return {
    flagged: flagged.length > 0,
    score: flagged.length,
    reasons: flagged.map((f) => `${f.detector}: ${f.reason}`),
  };
}

const MARKER_DETECTORS: ReadonlySet<string> = new Set([
  'instruction_marker',
  'role_claim',
  'delimiter',
  'length',
]);

/** Injection-risk findings kept per (tier, content) (bounded LRU; content-only, query-free). */
const RISK_CACHE_ENTRIES = 4096;
/** Longer contents are scored each time (they would crowd the cache; bounded memory). */
const RISK_CACHE_MAX_CHARS = 1024;

export class DetectionPipeline {
  readonly embedder: Embedder;
  readonly memsad: Memsad | undefined;
  readonly ngram: NgramJsd | undefined;
  readonly proactive: Proactive | undefined;
  readonly watermarker: Watermark | undefined;
  readonly instruction: InstructionScreen | undefined;
  readonly #instructionAt: Readonly<Record<SourceTier, number>>;
  readonly #instructionVec: boolean;
  /** The probes' policy per tier (undefined: the detector's own τ, uncorroborated). */
  readonly #proactiveAt: Readonly<Record<SourceTier, ProactiveTier | undefined>>;
  readonly #cfg: DetectionConfig;
  readonly #markers: MarkerScreen | undefined;
  readonly #exempt: ReadonlySet<SourceTier>;
  /**
   * `injectionRisk(content, tier)` depends only on the entry: cached by its exact text and
   * tier (content-addressed, so an altered entry is a different key), LRU by Map order.
   */
  /** Keyed by the content itself: a held entry's content is the same string object search
   *  after search, so its hash is computed once (a `tier + content` key was a new string to
   *  build and hash on every read). */
  readonly #risk = new Map<string, { readonly tier: SourceTier; readonly f: Finding }>();

  constructor(embedder: Embedder, cfg: DetectionConfig = {}) {
    this.embedder = embedder;
    this.#cfg = cfg;
    this.memsad =
      cfg.memsad === false
        ? undefined
        : new Memsad({ dimensions: embedder.dimensions, ...(cfg.memsad ?? {}) });
    this.ngram = cfg.ngram === false ? undefined : new NgramJsd(cfg.ngram ?? {});
    this.proactive = cfg.proactive === false ? undefined : new Proactive(cfg.proactive ?? {});
    this.watermarker = cfg.watermark === undefined ? undefined : new Watermark(cfg.watermark);
    const ins = cfg.instruction === false ? undefined : (cfg.instruction ?? {});
    this.instruction =
      ins === undefined ? undefined : new InstructionScreen(ins.model ?? INSTRUCTION_MODEL);
    // The MiniLM term is a direction among that model's vectors: another embedder's vector
    // says nothing there, so the screen then scores the linguistic features alone.
    this.#instructionVec =
      this.instruction !== undefined && embedder.name === this.instruction.model.embedder;
    this.#instructionAt = instructionThresholds(ins ?? {});
    this.#proactiveAt = proactiveTiers(cfg.proactive === false ? {} : (cfg.proactive ?? {}));
    this.#markers = cfg.markers === false ? undefined : new MarkerScreen(cfg.markers?.maxFactChars);
    this.#exempt = new Set(cfg.exemptTiers ?? ['OPERATOR']);
  }

  /**
   * Calibrate on benign reference texts (MemSAD τ, MemSAD+ baseline, proactive τ). With
   * `queries` (texts) or `queryEmbeddings`, MemSAD's history is replaced by them first
   * (triggered calibration; or a history rebuilt from the store). Pass `embeddings` when the
   * caller already holds the benign vectors and `probeEmbeddings` when it holds the probes'.
   */
  async calibrate(
    benign: readonly string[],
    opts: {
      queries?: readonly string[];
      queryEmbeddings?: readonly Float32Array[];
      embeddings?: readonly Float32Array[];
      probeEmbeddings?: readonly Float32Array[];
      /** Texts of the MemSAD+ baseline (default `benign`; empty: MemSAD+ abstains). */
      lexicalReference?: readonly string[];
      /** MemSAD's reference vectors (default the benign vectors; empty: MemSAD abstains). */
      memsadReference?: readonly Float32Array[];
    } = {},
  ): Promise<void> {
    const vecs = opts.embeddings ?? (await this.embedder.embed([...benign]));
    this.ngram?.calibrate(opts.lexicalReference ?? benign);
    if (this.proactive !== undefined && this.#cfg.proactive !== false) {
      this.proactive.setProbes(
        opts.probeEmbeddings ?? (await this.embedder.embed([...this.probes])),
      );
      this.proactive.calibrate(vecs);
    }
    if (this.memsad !== undefined) {
      const q =
        opts.queryEmbeddings ??
        (opts.queries === undefined ? undefined : await this.embedder.embed([...opts.queries]));
      this.memsad.calibrate(opts.memsadReference ?? vecs, q);
    }
  }

  /** The proactive probe texts this pipeline uses (config or `DEFAULT_PROBES`). */
  get probes(): readonly string[] {
    return (
      (this.#cfg.proactive === false ? undefined : this.#cfg.proactive?.probes) ?? DEFAULT_PROBES
    );
  }

  /** A query the agent was asked: joins MemSAD's FIFO history. */
  async observeQuery(query: string | Float32Array): Promise<void> {
    if (this.memsad === undefined) return;
    const v = typeof query === 'string' ? (await this.embedder.embed([query]))[0] : query;
    if (v !== undefined) this.memsad.observeQuery(v);
  }

  /** Mark text on the ingestion path (no-op without a watermark key). */
  mark(text: string): string {
    return this.watermarker === undefined ? text : this.watermarker.mark(text);
  }

  /**
   * Screen a candidate write. The last finding is the composite disjunction. With `memo`,
   * what screening computed that a calibration on this text and vector computes again is
   * left there (see {@link ScreenMemo}).
   */
  async screenWrite(c: WriteCandidate, memo?: ScreenMemo): Promise<Finding[]> {
    const needsVector =
      !this.#exempt.has(c.tier) &&
      (this.memsad !== undefined || this.proactive !== undefined || this.#instructionVec);
    const vec = !needsVector
      ? undefined
      : (c.embedding ?? (await this.embedder.embed([Watermark.strip(c.content)]))[0]);
    return this.screenWriteSync(c.content, c.tier, vec, memo);
  }

  /** Same as `screenWrite` with the embedding supplied (no model call; used by bench / eval). */
  screenWriteSync(
    content: string,
    tier: SourceTier,
    vec: Float32Array | undefined,
    memo?: ScreenMemo,
  ): Finding[] {
    const text = typeof content === 'string' ? content : '';
    const out: Finding[] = [];
    if (this.#markers !== undefined)
      for (const m of this.#markers.screen(text, tier))
        out.push(finding(m.reason as DetectorName, 1, 0.5, m.detail));
    if (this.#exempt.has(tier)) {
      out.push(composite(out, [...MARKER_DETECTORS] as DetectorName[]));
      return out;
    }
    if (this.watermarker !== undefined) out.push(this.watermarker.detect(text));
    const plain = Watermark.strip(text);
    if (this.#cfg.validation !== false) out.push(validate(plain, this.#cfg.validation ?? {}));
    let insScore: number | undefined;
    if (this.instruction !== undefined) {
      const f = this.instruction.detect(
        plain,
        this.#instructionAt[tier],
        this.#instructionVec ? vec : undefined,
        ` for ${tier}`,
      );
      insScore = f.score;
      out.push(f);
    }
    const m = vec === undefined || this.memsad === undefined ? undefined : this.memsad.detect(vec);
    if (this.ngram !== undefined) {
      const counts = ngramKeys(plain, this.ngram.n);
      // A calibration counts the stored text (watermark and all): reusable when nothing was stripped.
      if (memo !== undefined && plain === text) memo.grams = counts;
      out.push(this.#gated(this.ngram.detectCounts(counts), m));
    }
    if (vec !== undefined) {
      if (m !== undefined) out.push(m);
      const pro = this.proactive;
      if (pro !== undefined) {
        if (pro.probeCount === 0) out.push(pro.detect(vec));
        else {
          const s = pro.score(vec);
          if (memo !== undefined) memo.pro = s;
          out.push(this.#proactiveFinding(pro, s, tier, insScore));
        }
      }
    }
    out.push(
      composite(out, [
        ...MARKER_DETECTORS,
        'watermark',
        'validation',
        'instruction',
        'memsad',
        'memsad_plus',
        'proactive',
      ] as DetectorName[]),
    );
    return out;
  }

  /**
   * The probes' finding at the tier's policy (ADR 0052): its κ, and the flag counted only when
   * the instruction screen does not read the write as a plain statement (score above the
   * tier's floor; no screen score: uncorroborated, fail closed).
   */
  #proactiveFinding(
    pro: Proactive,
    s: number,
    tier: SourceTier,
    insScore: number | undefined,
  ): Finding {
    const at = this.#proactiveAt[tier];
    if (at === undefined) return pro.detectScore(s);
    if (at.kappa === Number.POSITIVE_INFINITY) {
      const f = pro.detectScore(s);
      return {
        ...f,
        flagged: false,
        reason: `mean probe similarity ${s.toFixed(3)}; the probes never hold ${tier} writes`,
      };
    }
    const f = pro.detectScore(s, at.kappa);
    if (!f.flagged || insScore === undefined || !Number.isFinite(insScore) || insScore > at.floor)
      return f;
    return {
      ...f,
      flagged: false,
      reason: `${f.reason}, but the instruction screen reads a statement (${insScore.toFixed(2)} ≤ ${at.floor} for ${tier})`,
    };
  }

  /** Apply the MemSAD+ semantic gate (config `ngram.gate`) to a lexical finding. */
  #gated(lexical: Finding, memsad: Finding | undefined): Finding {
    const gate = this.#cfg.ngram === false ? undefined : this.#cfg.ngram?.gate;
    if (gate === undefined || !lexical.flagged) return lexical;
    const cal = this.memsad?.calibration;
    const abstained =
      memsad === undefined || !Number.isFinite(memsad.threshold) || cal === undefined;
    const z = abstained
      ? Number.NEGATIVE_INFINITY
      : (memsad.score - cal.mean) / Math.max(cal.std, 1e-9);
    if (z >= gate) return lexical;
    return {
      ...lexical,
      flagged: false,
      reason: `${lexical.reason}, but not near recent queries (z ${abstained ? 'n/a' : z.toFixed(2)} < ${gate})`,
    };
  }

  /** `injectionRisk` through the per-entry cache (same finding as uncached; a copy each time). */
  #injectionRisk(text: string, tier: SourceTier): Finding {
    if (text.length > RISK_CACHE_MAX_CHARS)
      return injectionRisk(text, tier, this.#cfg.injection ?? {});
    const hit = this.#risk.get(text);
    let f: Finding;
    if (hit !== undefined && hit.tier === tier) {
      f = hit.f;
      this.#risk.delete(text);
    } else {
      f = injectionRisk(text, tier, this.#cfg.injection ?? {});
      if (hit !== undefined) this.#risk.delete(text);
      else if (this.#risk.size >= RISK_CACHE_ENTRIES)
        this.#risk.delete(this.#risk.keys().next().value as string);
    }
    this.#risk.set(text, { tier, f });
    return { ...f };
  }

  /** Score a retrieved entry before it is rendered. */
  async scoreRead(c: ReadCandidate): Promise<Finding[]> {
    const text = typeof c.content === 'string' ? c.content : '';
    const out = this.#readFindings(c, text);
    if (this.#cfg.reembedOnRead === true) {
      const [v] = await this.embedder.embed([Watermark.strip(text)]);
      if (v !== undefined) out.push(embeddingMismatch(v, c.entryEmbedding));
    }
    if (this.#cfg.classifier !== undefined) {
      try {
        const f = await this.#cfg.classifier(text, c.tier);
        if (f !== undefined) out.push(f);
      } catch {
        out.push(
          finding('classifier', 0, Number.POSITIVE_INFINITY, 'classifier unavailable', {
            flagged: false,
          }),
        );
      }
    }
    return out;
  }

  /**
   * {@link scoreRead} without waiting, when nothing it runs is asynchronous (no re-embedding on
   * read, no classifier): the same findings. Undefined: only `scoreRead` can give them. The read
   * path scores every hit; a promise each was part of a 100k search's CPU (issue 21).
   */
  scoreReadNow(c: ReadCandidate): Finding[] | undefined {
    if (this.#cfg.reembedOnRead === true || this.#cfg.classifier !== undefined) return undefined;
    return this.#readFindings(c, typeof c.content === 'string' ? c.content : '');
  }

  /** The read findings every configuration computes: injection risk, implausible similarity. */
  #readFindings(c: ReadCandidate, text: string): Finding[] {
    return [
      this.#injectionRisk(text, c.tier),
      implausibleSimilarity(c.queryEmbedding, c.entryEmbedding, {
        ...(this.#cfg.implausible ?? {}),
        ...(c.query === undefined ? {} : { query: c.query, content: text }),
      }),
    ];
  }
}

// Extraction (article Pattern 3) lives in extract.ts; re-exported for existing importers.
export {
  EXTRACTION_PROMPT,
  EXTRACT_TIERS,
  type ExtractedFact,
  type ExtractionOptions,
  type ExtractionResult,
  extractFacts,
  parseFacts,
  requiresExtraction,
} from '../write/extract.js';
