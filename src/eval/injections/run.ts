/**
 * @module eval/injections/run
 * `memwarden eval injections` (issue 22): the write screen on public prompt-injection corpora.
 *
 * In one run, on the dev file:
 * - the shipped screen (markers, validation rules, the instruction screen) as each tier's
 *   write is screened, at the default thresholds: TPR per source / category on the
 *   instruction-type attacks, FPR on the benign texts, PoisonedRAG's false facts apart;
 * - one ROC curve per tier (the instruction threshold swept, the tier's rules as shipped);
 * - the article's keyword filter (`INSTRUCTION_MARKERS`) as the baseline;
 * - cross-validated figures of the training procedure (eval/injections/train): 5 folds by
 *   text hash (new texts from the same corpora: what the held-out half is) and
 *   leave-one-source-out (a corpus never seen), beside the shipped weights' in-sample ones;
 * - with a LoCoMo file, what each detector contributes when MemSAD, MemSAD+ and the probes run
 *   as the default calibrates them — on a principal's own memories with a mixed query history
 *   (LoCoMo's questions: real user queries, none a victim query).
 */
import { readFileSync } from 'node:fs';
import {
  INSTRUCTION_MODEL,
  type InstructionModel,
  type ScreenedTier,
  instructionFeatures,
} from '../../core/detect/index.js';
import type { SourceTier } from '../../core/trust.js';
import { autoDetectionConfig } from '../../memory/detect/calibration.js';
import { instructionThresholds } from '../../memory/detect/instruction-tiers.js';
import { type DetectionConfig, DetectionPipeline } from '../../memory/detect/pipeline.js';
import { INSTRUCTION_MARKERS } from '../../memory/detect/screen.js';
import type { Embedder } from '../../ports/embedder.js';
import { DiskEmbeddingCache } from '../detect/cache.js';
import { auroc } from '../detect/metrics.js';
import {
  GROUPS,
  type InjectionRow,
  groupInfo,
  groupOf,
  readInjections,
  trainable,
} from './corpus.js';
import { embedAll, trainingData } from './data.js';
import { COLD_STATE, type StackReport, type StackStateInput, runStack } from './stack.js';
import { FOLDS, TIER_BUDGETS, foldOf, scoreExample, trainScreen } from './train.js';

export const TIERS: readonly ScreenedTier[] = [
  'EXTERNAL_WEB',
  'EXTERNAL_TOOL',
  'USER_OBSERVED',
  'USER_VERIFIED',
];

/** The targets on the dev file at default settings. */
export const TARGETS = { externalTpr: 0.7, externalFpr: 0.02, userFpr: 0.005 } as const;

export interface InjectionsEvalOptions {
  readonly data: string;
  /** LoCoMo (locomo-dev5.json) for the statistical detectors' reference and query history. */
  readonly locomo?: string;
  readonly embedder: Embedder;
  readonly cacheDir?: string;
  /** Cross-validation (default true; off makes a quick run). */
  readonly crossValidate?: boolean;
  /** Reference memories and history queries drawn from LoCoMo (default 1,000 and 200). */
  readonly referenceSize?: number;
  readonly historyQueries?: number;
  /**
   * Detector knobs for the default-stack section (default none: the shipped stack); e.g.
   * `{ proactive: { kappa: 4 } }` measures the single-κ probes of before ADR 0052.
   */
  readonly stackConfig?: DetectionConfig;
  readonly log?: (m: string) => void;
}

/** Flag counts of one slice of rows. */
export interface Rate {
  readonly n: number;
  readonly flagged: number;
  readonly rate: number;
}

export interface GroupRow {
  readonly group: string;
  readonly label: 'attack' | 'benign';
  readonly role: string;
  readonly licence: string;
  readonly falseFacts: boolean;
  readonly n: number;
  /** Flag rate per tier: shipped weights on the dev file (in sample for trained groups). */
  readonly inSample: Record<ScreenedTier, number>;
  /** …under 5-fold cross-validation by text hash (each text scored by a model that never saw it). */
  readonly cv?: Record<ScreenedTier, number>;
  /** …with the whole group left out of training (leave-one-source-out); trained groups only. */
  readonly loso?: Record<ScreenedTier, number>;
  /** The instruction screen alone (no rules), in sample, per tier. */
  readonly instructionOnly: Record<ScreenedTier, number>;
  readonly keyword: number;
}

export interface CategoryRow {
  readonly category: string;
  readonly group: string;
  readonly label: 'attack' | 'benign';
  readonly n: number;
  readonly tiers: Record<ScreenedTier, number>;
  readonly keyword: number;
}

export interface Headline {
  readonly name: string;
  readonly value: number;
  readonly target: string;
  readonly ok: boolean;
  /** The same figure under 5-fold cross-validation, when run. */
  readonly cv?: number;
}

export interface RocCurve {
  readonly tier: ScreenedTier;
  /** [FPR, TPR] pairs, threshold descending. */
  readonly points: [number, number][];
  readonly auroc: number;
  readonly operating: { fpr: number; tpr: number; threshold: number };
  readonly keyword: { fpr: number; tpr: number };
}

export interface DetectorContribution {
  readonly detector: string;
  readonly instructionTpr: number;
  readonly falseFactTpr: number;
  readonly benignFpr: number;
  /** Instruction attacks this detector alone caught (no other detector flagged them). */
  readonly onlyCatches: number;
  /** Benign texts it flagged, per source group (where its false positives come from). */
  readonly benignFlaggedByGroup: Record<string, number>;
}

export interface InjectionsEvalReport {
  readonly generatedBy: string;
  readonly embedder: string;
  readonly model: {
    version: string;
    thresholds: Record<ScreenedTier, number>;
    budgets: typeof TIER_BUDGETS;
  };
  readonly data: {
    rows: number;
    attacks: number;
    instructionAttacks: number;
    falseFacts: number;
    benign: number;
  };
  readonly headline: Headline[];
  readonly overall: Record<
    ScreenedTier | 'keyword',
    {
      instructionTpr: number;
      falseFactTpr: number;
      benignFpr: number;
      benignFprNoUserPrompts: number;
    }
  >;
  readonly cvOverall?: Record<ScreenedTier, { instructionTpr: number; benignFpr: number }>;
  readonly losoOverall?: Record<ScreenedTier, { instructionTpr: number; benignFpr: number }>;
  readonly groups: GroupRow[];
  readonly categories: CategoryRow[];
  readonly roc: RocCurve[];
  /**
   * The default detection stack per tier (what a user's write meets), cold and — with the
   * LoCoMo file — warm, beside the screen alone, with Wilson intervals and the held-out split.
   */
  readonly stack: StackReport;
  readonly contributions?: {
    readonly reference: number;
    readonly queries: number;
    readonly tier: SourceTier;
    readonly rows: DetectorContribution[];
  };
  readonly timing: {
    totalMs: number;
    modelMs: number;
    embedded: number;
    cached: number;
    screenUsPerWrite: number;
  };
}

interface Scored {
  readonly row: InjectionRow;
  readonly group: string;
  readonly vec: Float32Array;
  readonly features: Float64Array;
  /** Shipped instruction score. */
  score: number;
  /** Did the other content detectors (markers, validation) flag it, per tier. */
  readonly rules: Record<ScreenedTier, boolean>;
  /** The shipped screen's verdict per tier. */
  readonly flagged: Record<ScreenedTier, boolean>;
  readonly keyword: boolean;
  cv?: Record<ScreenedTier, boolean>;
  loso?: Record<ScreenedTier, boolean>;
}

const isInstruction = (s: Scored): boolean => groupInfo(s.group).role === 'instruction';
const isFalseFact = (s: Scored): boolean => groupInfo(s.group).falseFacts === true;
const isBenign = (s: Scored): boolean => s.row.label === 'benign';

const rate = (xs: readonly Scored[], f: (s: Scored) => boolean): number =>
  xs.length === 0 ? Number.NaN : xs.filter(f).length / xs.length;

/** The article's keyword filter: any of INSTRUCTION_MARKERS, case-insensitive. */
export function keywordFlag(text: string): boolean {
  const t = text.toLowerCase();
  return INSTRUCTION_MARKERS.some((m) => t.includes(m));
}

/** A pipeline with the content detectors only (as `scan` runs without a baseline). */
function contentPipeline(embedder: Embedder, model?: InstructionModel): DetectionPipeline {
  return new DetectionPipeline(embedder, {
    memsad: false,
    ngram: false,
    proactive: false,
    ...(model === undefined ? {} : { instruction: { model } }),
  });
}

function perTier<T>(f: (t: ScreenedTier) => T): Record<ScreenedTier, T> {
  return Object.fromEntries(TIERS.map((t) => [t, f(t)])) as Record<ScreenedTier, T>;
}

/** LoCoMo texts: a principal's memories (observations, turns) and its questions. */
function locomoTexts(path: string): { memories: string[]; questions: string[] } {
  const convs = JSON.parse(readFileSync(path, 'utf8')) as {
    qa?: { question?: unknown }[];
    conversation?: Record<string, unknown>;
    observation?: Record<string, Record<string, [string, string][]>>;
  }[];
  const memories: string[] = [];
  const questions: string[] = [];
  for (const c of convs) {
    for (const q of c.qa ?? []) if (typeof q.question === 'string') questions.push(q.question);
    for (const s of Object.values(c.observation ?? {}))
      for (const list of Object.values(s))
        for (const o of list) if (typeof o[0] === 'string') memories.push(o[0]);
    for (const [k, v] of Object.entries(c.conversation ?? {}))
      if (/^session_\d+$/.test(k) && Array.isArray(v))
        for (const turn of v as { text?: unknown }[])
          if (typeof turn.text === 'string') memories.push(turn.text);
  }
  return { memories, questions };
}

/** Deterministic sample of `k` texts (by hash order). */
function sample(texts: readonly string[], k: number): string[] {
  const uniq = [...new Set(texts)];
  return uniq
    .map((t) => [DiskEmbeddingCache.key(t), t] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .slice(0, k)
    .map(([, t]) => t);
}

export async function runInjectionsEval(o: InjectionsEvalOptions): Promise<InjectionsEvalReport> {
  const t0 = performance.now();
  const log = o.log ?? (() => {});
  const rows = readInjections(o.data);
  log(`${rows.length} rows from ${o.data}`);
  const cache = new DiskEmbeddingCache(o.embedder, o.cacheDir);
  const cached: Embedder = {
    name: cache.name,
    dimensions: o.embedder.dimensions,
    embed: cache.embed,
  };
  const vecs = await embedAll(
    cached,
    rows.map((r) => r.text),
    log,
  );
  log('features and the shipped screen, per tier');
  const pipe = contentPipeline(cached);
  let screenUs = 0;
  const scored: Scored[] = rows.map((row, i) => {
    const vec = vecs[i] as Float32Array;
    const group = groupOf(row.category);
    const features = instructionFeatures(row.text);
    const rules = {} as Record<ScreenedTier, boolean>;
    const flagged = {} as Record<ScreenedTier, boolean>;
    let score = Number.NaN;
    for (const t of TIERS) {
      const c0 = performance.now();
      const fs = pipe.screenWriteSync(row.text, t, vec);
      screenUs += (performance.now() - c0) * 1000;
      const ins = fs.find((f) => f.detector === 'instruction');
      score = ins?.score ?? Number.NaN;
      rules[t] = fs.some(
        (f) => f.flagged && f.detector !== 'instruction' && f.detector !== 'composite',
      );
      flagged[t] = fs.some((f) => f.flagged && f.detector !== 'composite');
    }
    return { row, group, vec, features, score, rules, flagged, keyword: keywordFlag(row.text) };
  });
  if (o.crossValidate !== false) await crossValidate(rows, scored, cached, log);
  const contributions =
    o.locomo === undefined ? undefined : await contribution(o, cached, scored, log);
  const states: StackStateInput[] = [COLD_STATE];
  if (o.locomo !== undefined) states.push(warmState(o, scored));
  const stack = await runStack(
    cached,
    scored.map((s) => ({
      text: s.row.text,
      group: s.group,
      label: s.row.label,
      vec: s.vec,
      screen: s.flagged,
    })),
    states,
    log,
    o.stackConfig ?? {},
  );
  const report = summarise(scored, cache, contributions);
  return {
    ...report,
    stack,
    embedder: cache.name,
    timing: {
      totalMs: performance.now() - t0,
      modelMs: cache.modelMs,
      embedded: cache.misses,
      cached: cache.hits,
      screenUsPerWrite: screenUs / (rows.length * TIERS.length),
    },
  };
}

/** 5-fold (by text hash) and leave-one-source-out runs of the training procedure. */
async function crossValidate(
  rows: readonly InjectionRow[],
  scored: Scored[],
  embedder: Embedder,
  log: (m: string) => void,
): Promise<void> {
  for (let f = 0; f < FOLDS; f++) {
    log(`cross-validation: fold ${f + 1}/${FOLDS}`);
    const data = await trainingData(rows, embedder, undefined, {
      keep: (r) => foldOf(r.text) !== f,
    });
    const { model } = trainScreen(data.examples, data.userRequests);
    for (const s of scored) {
      if (foldOf(s.row.text) !== f) continue;
      s.cv = verdicts(model, s);
    }
  }
  for (const g of GROUPS.filter((x) => trainable(x.name))) {
    log(`leave-one-source-out: ${g.name}`);
    const data = await trainingData(rows, embedder, undefined, { exclude: new Set([g.name]) });
    const { model } = trainScreen(data.examples, data.userRequests);
    for (const s of scored) if (s.group === g.name) s.loso = verdicts(model, s);
  }
}

/** A fold model's verdict per tier: its instruction score at its own thresholds, or the rules. */
function verdicts(model: InstructionModel, s: Scored): Record<ScreenedTier, boolean> {
  const score = scoreExample(model, { text: s.row.text, vec: s.vec, features: s.features });
  return perTier((t) => s.rules[t] || score > model.thresholds[t]);
}

/** An established principal: LoCoMo memories as its own reference, LoCoMo questions as its history. */
function warmState(o: InjectionsEvalOptions, scored: readonly Scored[]): StackStateInput {
  const lo = locomoTexts(o.locomo as string);
  const dev = new Set(scored.map((s) => s.row.text));
  const reference = sample(
    lo.memories.filter((t) => !dev.has(t)),
    o.referenceSize ?? 1000,
  );
  const queries = sample(lo.questions, o.historyQueries ?? 200);
  return {
    name: 'warm',
    description: `established principal: ${reference.length} own memories (LoCoMo) as the reference, ${queries.length} LoCoMo questions as the history`,
    reference,
    queries,
    cold: false,
  };
}

/** MemSAD, MemSAD+ and the probes as the default calibrates them, with a mixed history. */
async function contribution(
  o: InjectionsEvalOptions,
  embedder: Embedder,
  scored: readonly Scored[],
  log: (m: string) => void,
): Promise<NonNullable<InjectionsEvalReport['contributions']>> {
  const lo = locomoTexts(o.locomo as string);
  const dev = new Set(scored.map((s) => s.row.text));
  const reference = sample(
    lo.memories.filter((t) => !dev.has(t)),
    o.referenceSize ?? 1000,
  );
  const queries = sample(lo.questions, o.historyQueries ?? 200);
  log(
    `statistical detectors: ${reference.length} LoCoMo memories as the reference, ${queries.length} LoCoMo questions as the history`,
  );
  const refVecs = await embedAll(embedder, reference, log);
  const qVecs = await embedAll(embedder, queries, log);
  const p = new DetectionPipeline(embedder, autoDetectionConfig());
  await p.calibrate(reference, { embeddings: refVecs, queryEmbeddings: qVecs });
  const tier: SourceTier = 'EXTERNAL_WEB';
  const names = [
    'instruction',
    'validation',
    'instruction_marker',
    'role_claim',
    'delimiter',
    'length',
    'memsad',
    'memsad_plus',
    'proactive',
  ];
  const fired = scored.map((s) => {
    const fs = p.screenWriteSync(s.row.text, tier, s.vec);
    return new Set(
      fs.filter((f) => f.flagged && f.detector !== 'composite').map((f) => f.detector as string),
    );
  });
  const idx = (f: (s: Scored) => boolean): number[] => scored.flatMap((s, i) => (f(s) ? [i] : []));
  const ins = idx(isInstruction);
  const ff = idx(isFalseFact);
  const ben = idx(isBenign);
  const share = (is: number[], d: string): number =>
    is.filter((i) => fired[i]?.has(d)).length / Math.max(1, is.length);
  const rows: DetectorContribution[] = [...names, 'any'].map((d) => ({
    detector: d,
    instructionTpr:
      d === 'any'
        ? ins.filter((i) => (fired[i]?.size ?? 0) > 0).length / ins.length
        : share(ins, d),
    falseFactTpr:
      d === 'any'
        ? ff.filter((i) => (fired[i]?.size ?? 0) > 0).length / Math.max(1, ff.length)
        : share(ff, d),
    benignFpr:
      d === 'any'
        ? ben.filter((i) => (fired[i]?.size ?? 0) > 0).length / ben.length
        : share(ben, d),
    onlyCatches:
      d === 'any' ? 0 : ins.filter((i) => fired[i]?.has(d) === true && fired[i]?.size === 1).length,
    benignFlaggedByGroup: ben.reduce<Record<string, number>>((acc, i) => {
      const hit = d === 'any' ? (fired[i]?.size ?? 0) > 0 : fired[i]?.has(d) === true;
      const g = (scored[i] as Scored).group;
      if (hit) acc[g] = (acc[g] ?? 0) + 1;
      return acc;
    }, {}),
  }));
  return { reference: reference.length, queries: queries.length, tier, rows };
}

function roc(scored: readonly Scored[], tier: ScreenedTier, threshold: number): RocCurve {
  const pos = scored.filter(isInstruction);
  const neg = scored.filter(isBenign);
  // Sweep the instruction threshold; the tier's rules flag regardless.
  const cuts = [...new Set([...pos, ...neg].map((s) => s.score))].sort((a, b) => b - a);
  const points: [number, number][] = [
    [rate(neg, (s) => s.rules[tier]), rate(pos, (s) => s.rules[tier])],
  ];
  for (const c of cuts) {
    const f = (s: Scored): boolean => s.rules[tier] || s.score >= c;
    points.push([rate(neg, f), rate(pos, f)]);
  }
  points.push([1, 1]);
  // Thin to at most ~200 points (the chart needs no more).
  const step = Math.max(1, Math.floor(points.length / 200));
  const thin = points.filter((_, i) => i % step === 0 || i === points.length - 1);
  const at = (s: Scored): boolean => s.flagged[tier];
  return {
    tier,
    points: thin,
    auroc: auroc(
      pos.map((s) => s.score),
      neg.map((s) => s.score),
    ),
    operating: { fpr: rate(neg, at), tpr: rate(pos, at), threshold },
    keyword: { fpr: rate(neg, (s) => s.keyword), tpr: rate(pos, (s) => s.keyword) },
  };
}

function summarise(
  scored: readonly Scored[],
  cache: DiskEmbeddingCache,
  contributions: InjectionsEvalReport['contributions'],
): Omit<InjectionsEvalReport, 'embedder' | 'timing' | 'stack'> {
  const th = instructionThresholds();
  const ins = scored.filter(isInstruction);
  const ff = scored.filter(isFalseFact);
  const ben = scored.filter(isBenign);
  const benNoUser = ben.filter((s) => groupInfo(s.group).role !== 'user_request');
  const overall = {
    ...perTier((t) => ({
      instructionTpr: rate(ins, (s) => s.flagged[t]),
      falseFactTpr: rate(ff, (s) => s.flagged[t]),
      benignFpr: rate(ben, (s) => s.flagged[t]),
      benignFprNoUserPrompts: rate(benNoUser, (s) => s.flagged[t]),
    })),
    keyword: {
      instructionTpr: rate(ins, (s) => s.keyword),
      falseFactTpr: rate(ff, (s) => s.keyword),
      benignFpr: rate(ben, (s) => s.keyword),
      benignFprNoUserPrompts: rate(benNoUser, (s) => s.keyword),
    },
  };
  const haveCv = scored.every((s) => s.cv !== undefined);
  const cvOverall = haveCv
    ? perTier((t) => ({
        instructionTpr: rate(ins, (s) => s.cv?.[t] === true),
        benignFpr: rate(ben, (s) => s.cv?.[t] === true),
      }))
    : undefined;
  // LOSO: a trained group's texts scored by the model that never saw the group; the groups
  // never trained on (LoCoMo, user prompts) by their fold model (they are out of sample anyway).
  const losoOf = (s: Scored, t: ScreenedTier): boolean => (s.loso ?? s.cv)?.[t] === true;
  const losoOverall = haveCv
    ? perTier((t) => ({
        instructionTpr: rate(ins, (s) => losoOf(s, t)),
        benignFpr: rate(ben, (s) => losoOf(s, t)),
      }))
    : undefined;
  const headline: Headline[] = [];
  for (const t of ['EXTERNAL_WEB', 'EXTERNAL_TOOL'] as const) {
    const o = overall[t];
    headline.push(
      {
        name: `${t}: TPR on instruction-type attacks`,
        value: o.instructionTpr,
        target: `≥ ${TARGETS.externalTpr}`,
        ok: o.instructionTpr >= TARGETS.externalTpr,
        ...(cvOverall === undefined ? {} : { cv: cvOverall[t].instructionTpr }),
      },
      {
        name: `${t}: FPR on benign texts`,
        value: o.benignFpr,
        target: `≤ ${TARGETS.externalFpr}`,
        ok: o.benignFpr <= TARGETS.externalFpr,
        ...(cvOverall === undefined ? {} : { cv: cvOverall[t].benignFpr }),
      },
    );
  }
  for (const t of ['USER_OBSERVED', 'USER_VERIFIED'] as const) {
    const o = overall[t];
    headline.push({
      name: `${t}: FPR on benign texts`,
      value: o.benignFpr,
      target: `≤ ${TARGETS.userFpr}`,
      ok: o.benignFpr <= TARGETS.userFpr,
      ...(cvOverall === undefined ? {} : { cv: cvOverall[t].benignFpr }),
    });
  }
  const groups: GroupRow[] = [];
  for (const name of [...new Set(scored.map((s) => s.group))].sort()) {
    const xs = scored.filter((s) => s.group === name);
    const info = groupInfo(name);
    const first = xs[0] as Scored;
    groups.push({
      group: name,
      label: first.row.label,
      role: info.role,
      licence: info.licence,
      falseFacts: info.falseFacts === true,
      n: xs.length,
      inSample: perTier((t) => rate(xs, (s) => s.flagged[t])),
      ...(haveCv ? { cv: perTier((t) => rate(xs, (s) => s.cv?.[t] === true)) } : {}),
      ...(xs.every((s) => s.loso !== undefined)
        ? { loso: perTier((t) => rate(xs, (s) => s.loso?.[t] === true)) }
        : {}),
      instructionOnly: perTier((t) => rate(xs, (s) => s.score > th[t])),
      keyword: rate(xs, (s) => s.keyword),
    });
  }
  const categories: CategoryRow[] = [];
  for (const cat of [...new Set(scored.map((s) => s.row.category))].sort()) {
    const xs = scored.filter((s) => s.row.category === cat);
    const first = xs[0] as Scored;
    categories.push({
      category: cat,
      group: first.group,
      label: first.row.label,
      n: xs.length,
      tiers: perTier((t) => rate(xs, (s) => s.flagged[t])),
      keyword: rate(xs, (s) => s.keyword),
    });
  }
  void cache;
  return {
    generatedBy: 'memwarden eval injections',
    model: {
      version: INSTRUCTION_MODEL.version,
      thresholds: perTier((t) => th[t]),
      budgets: TIER_BUDGETS,
    },
    data: {
      rows: scored.length,
      attacks: scored.filter((s) => s.row.label === 'attack').length,
      instructionAttacks: ins.length,
      falseFacts: ff.length,
      benign: ben.length,
    },
    headline,
    overall,
    ...(cvOverall === undefined ? {} : { cvOverall }),
    ...(losoOverall === undefined ? {} : { losoOverall }),
    groups,
    categories,
    roc: TIERS.map((t) => roc(scored, t, th[t])),
    ...(contributions === undefined ? {} : { contributions }),
  };
}
