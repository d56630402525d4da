/**
 * @module eval/detect/run
 * `memwarden eval detect`: the attack × defence matrix of MemSAD §6 on this codebase's
 * detectors, with the real embedding model by default. Per seed: a permutation of the benign
 * corpus into three disjoint parts — a reference set (calibration: mean and σ), a tuning set
 * (κ is chosen here, on benign data only: the smallest κ whose tuning FPR ≤ `targetFpr`) and a
 * held-out set (every reported FPR and AUROC) — a MemSAD history of victim queries (the paper's
 * protocol) and, in a second regime, victim queries mixed with `mixedHistoryQueries` benign
 * user queries; the three attacks; every defence. Then TPR / FPR at the tuned thresholds,
 * AUROC, bootstrap intervals over seeds, the synonym evasion table (§6.4, App. R), compound
 * exposure over sessions (App. S), and the shipped default pipeline driven through
 * `Memory.add` on a mixed benign workload (workload.ts).
 */
import {
  DEFAULT_MEMSAD_KAPPA,
  DEFAULT_NGRAM_KAPPA,
  DEFAULT_PROACTIVE_KAPPA,
  Memsad,
  NgramJsd,
  Proactive,
  Watermark,
  cosineSim,
  meanStd,
  validate,
} from '../../core/detect/index.js';
import { type DetectionConfig, DEFAULT_PROBES } from '../../memory/detect/pipeline.js';
import { DEFAULT_PLUS_GATE } from '../../memory/detect/calibration.js';
import type { Embedder } from '../../ports/embedder.js';
import {
  type AttackSet,
  type Embed,
  agentPoison,
  injecmem,
  minja,
  synonymAttack,
} from './attacks.js';
import { DiskEmbeddingCache } from './cache.js';
import { VICTIM_QUERIES, benignCorpus, benignQueries } from './corpus.js';
import { type Interval, auroc, bootstrap, rate, rocPoints, sessionsTo } from './metrics.js';
import { rng, shuffle } from './rng.js';
import { type WorkloadReport, runWorkload } from './workload.js';

export const DEFENCES = [
  'watermark',
  'validation',
  'proactive',
  'memsad',
  'memsad_plain',
  'memsad_plus',
  'memsad_plus_gated',
  'composite',
  'composite_auto',
  'composite_default',
] as const;
export type Defence = (typeof DEFENCES)[number];
export type AttackName = AttackSet['attack'];
export const ATTACKS: readonly AttackName[] = ['agentpoison', 'minja', 'injecmem'];

export interface DetectEvalOptions {
  readonly embedder: Embedder;
  readonly cacheDir?: string;
  readonly seeds?: number;
  readonly benignSize?: number;
  readonly referenceSize?: number;
  /**
   * Benign user queries mixed into MemSAD's history besides the victim queries. 0 (default)
   * is the paper's protocol (history = the domain-matched victim queries, App. P); 200 is a
   * harder, more realistic regime where benign entries also sit near recent queries.
   */
  readonly historyQueries?: number;
  /** Benign queries mixed into the history of the second ("mixed") regime (default 200; 0 skips it). */
  readonly mixedHistoryQueries?: number;
  /** Fixed MemSAD κ (no tuning; MemSAD+ 2.5, proactive 3). Default: κ tuned per seed on the tuning split. */
  readonly kappa?: number;
  /** Per-detector FPR target on the tuning split when κ is tuned (default 0.003). */
  readonly targetFpr?: number;
  /** The semantic gate of MemSAD+ in the shipped default (σ above MemSAD's benign mean; default 2). */
  readonly gate?: number;
  readonly synonymEntries?: number;
  /** Benign writes of the `Memory.add` workload (held-out texts of seed 0; default 400; 0 skips it). */
  readonly workloadWrites?: number;
  /** Detector knobs of the workload's `autoDetection` (default none: the shipped stack). */
  readonly workloadDetection?: DetectionConfig;
  readonly triggerSearchQueries?: number;
  readonly log?: (m: string) => void;
}

export interface MatrixCell {
  readonly attack: AttackName;
  readonly defence: Defence;
  readonly tpr: Interval;
  readonly fpr: Interval;
  /** Absent for the disjunctions (no single score), as in the paper's Table 3. */
  readonly auroc?: Interval;
}

export interface SynonymRow {
  readonly attack: AttackName;
  readonly entries: number;
  readonly memsadTprBefore: number;
  readonly memsadEvasion: number;
  readonly memsadPlusTprBefore: number;
  readonly memsadPlusEvasion: number;
  readonly subsPerEntry: number;
  readonly simRatio: number;
}

export interface CompoundRow {
  readonly attack: AttackName;
  readonly asrR: number;
  readonly asrRDefended: number;
  readonly sessionsTo50: number;
  readonly sessionsTo90: number;
  readonly sessionsTo90Defended: number;
}

/** κ per detector, chosen on the tuning split; mean and range over seeds. */
export interface TunedKappa {
  readonly detector: 'memsad' | 'memsad_plus' | 'proactive';
  readonly regime: 'paper' | 'mixed';
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  /** FPR on the tuning split at the chosen κ (mean over seeds). */
  readonly tuneFpr: number;
  /** The κ `Memory.open` ships with, and its held-out FPR (mean over seeds). */
  readonly shipped: number;
  readonly shippedHeldOutFpr: number;
}

export interface DetectEvalReport {
  readonly embedder: string;
  readonly config: Record<string, number>;
  /** The paper's protocol: MemSAD history = the victim queries. */
  readonly matrix: MatrixCell[];
  /** The realistic regime: victim queries mixed with benign user queries (empty when skipped). */
  readonly mixed: MatrixCell[];
  readonly kappas: TunedKappa[];
  /** The shipped default through `Memory.add` on a mixed benign workload, then the attacks. */
  readonly workload?: WorkloadReport;
  readonly roc: {
    attack: AttackName;
    defence: Defence;
    auroc: number;
    points: [number, number][];
  }[];
  readonly synonym: SynonymRow[];
  readonly compound: CompoundRow[];
  readonly triggers: string[];
  readonly timing: { totalMs: number; modelMs: number; embedded: number; cached: number };
}

/** The paper's reported numbers this evaluation is compared with (MemSAD §6.3, Table 3). */
export const PAPER = {
  memsadAuroc: { minja: 0.914, injecmem: 0.816, agentpoison_triggered: 1.0 },
  composite: { tpr: 1.0, fprMax: 0.01 },
} as const;

interface SeedScores {
  /** defence → attack → { pos scores, neg scores, pos flags, neg flags } */
  readonly cells: Map<string, { pos: number[]; neg: number[]; pf: boolean[]; nf: boolean[] }>;
  readonly compound: Map<AttackName, { asr: number; asrDef: number }>;
  readonly kappas: {
    detector: TunedKappa['detector'];
    kappa: number;
    tuneFpr: number;
    shippedFpr: number;
  }[];
}

/** The κ values `Memory.open` ships with (core/detect defaults). */
export const SHIPPED_KAPPA = {
  memsad: DEFAULT_MEMSAD_KAPPA,
  memsad_plus: DEFAULT_NGRAM_KAPPA,
  proactive: DEFAULT_PROACTIVE_KAPPA,
} as const;

/**
 * The smallest κ (z-score threshold; flag iff z > κ) whose FPR on `tune` is ≤ `target`, i.e.
 * the tuning split's upper quantile; never below 1.
 */
export function tuneKappa(tune: readonly number[], target: number): number {
  if (tune.length === 0) return Number.POSITIVE_INFINITY;
  const z = [...tune].sort((a, b) => b - a);
  const allowed = Math.floor(target * z.length);
  const k = z[allowed] as number;
  return Math.max(1, k);
}

const zs = (s: number, mean: number, std: number): number => (s - mean) / Math.max(std, 1e-9);

export async function runDetectEval(o: DetectEvalOptions): Promise<DetectEvalReport> {
  const t0 = performance.now();
  const log = o.log ?? (() => undefined);
  const cache = new DiskEmbeddingCache(o.embedder, o.cacheDir);
  const embed: Embed = cache.embed;
  const seeds = o.seeds ?? 5;
  const refSize = o.referenceSize ?? 1000;
  const target = o.targetFpr ?? 0.003;
  const gate = o.gate ?? DEFAULT_PLUS_GATE;
  const corpus = benignCorpus(o.benignSize ?? 2000);
  if (corpus.length < refSize + 20)
    throw new RangeError('benign corpus too small for reference + tuning + held-out');
  const queries = benignQueries(300);
  log(
    `embedding ${corpus.length} benign entries and ${queries.length} queries (cached after the first run)…`,
  );
  const corpusVecs = await embed(corpus.map((c) => c.text));
  const queryVecs = await embed(queries);
  const probeVecs = await embed([...DEFAULT_PROBES]);
  const victimVecs = await embed([...VICTIM_QUERIES]);
  const wm = new Watermark({ key: 'eval-detect-ingestion-key' });
  const paperHist = o.historyQueries ?? 0;
  const mixedHist = o.mixedHistoryQueries ?? 200;

  const perSeed: SeedScores[] = [];
  const perSeedMixed: SeedScores[] = [];
  let seed0: { test: number[]; attacks: AttackSet[] } | undefined;
  const triggers: string[] = [];
  let synonym: SynonymRow[] = [];
  for (let seed = 0; seed < seeds; seed++) {
    const r = rng(1000 + seed);
    const idx = shuffle(
      r,
      corpus.map((_, i) => i),
    );
    // Three disjoint benign parts: calibration reference, κ tuning, held-out report.
    const rest = idx.slice(refSize);
    const split = {
      ref: idx.slice(0, refSize),
      tune: rest.slice(0, Math.floor(rest.length / 2)),
      test: rest.slice(Math.floor(rest.length / 2)),
    };
    const histOrder = shuffle(
      r,
      queries.map((_, i) => i),
    );

    log(`seed ${seed}: generating attacks…`);
    const ap = await agentPoison(rng(seed), embed, VICTIM_QUERIES, {
      searchQueries: o.triggerSearchQueries ?? 3,
    });
    triggers.push(ap.trigger ?? '');
    const attacks: AttackSet[] = [
      ap,
      minja(rng(seed + 1), VICTIM_QUERIES),
      injecmem(rng(seed + 2), VICTIM_QUERIES),
    ];
    if (seed === 0) seed0 = { test: split.test, attacks };
    const ctx: SeedContext = {
      o,
      embed,
      corpus,
      corpusVecs,
      probeVecs,
      victimVecs,
      wm,
      split,
      attacks,
      target,
      gate,
    };
    const paper = await scoreSeed(
      ctx,
      histOrder.slice(0, paperHist).map((i) => queryVecs[i] as Float32Array),
      seed === 0,
    );
    perSeed.push(paper.scores);
    synonym = [...synonym, ...paper.synonym];
    if (mixedHist > 0) {
      const mixed = await scoreSeed(
        ctx,
        histOrder.slice(0, mixedHist).map((i) => queryVecs[i] as Float32Array),
        false,
      );
      perSeedMixed.push(mixed.scores);
    }
  }

  const writes = o.workloadWrites ?? 400;
  let workload: WorkloadReport | undefined;
  if (writes > 0 && seed0 !== undefined) {
    log(`Memory.add workload: ${writes} benign writes, then the attacks…`);
    workload = await runWorkload({
      embedder: {
        name: o.embedder.name,
        dimensions: o.embedder.dimensions,
        embed: (t) => embed(t),
      },
      benign: seed0.test.slice(0, writes).map((i) => (corpus[i] as { text: string }).text),
      queries,
      victimQueries: VICTIM_QUERIES,
      attacks: seed0.attacks,
      rng: rng(99),
      ...(o.workloadDetection === undefined ? {} : { auto: { config: o.workloadDetection } }),
    });
  }

  const br = rng(7);
  const { matrix, roc } = aggregate(perSeed, br, true);
  const mixed = aggregate(perSeedMixed, br, false).matrix;
  const kappas: TunedKappa[] = [];
  for (const [regime, xs] of [
    ['paper', perSeed],
    ['mixed', perSeedMixed],
  ] as const) {
    for (const detector of ['memsad', 'memsad_plus', 'proactive'] as const) {
      const ks = xs.flatMap((s) => s.kappas.filter((k) => k.detector === detector));
      if (ks.length === 0) continue;
      const mean = (f: (k: (typeof ks)[number]) => number) =>
        ks.reduce((a, k) => a + f(k), 0) / ks.length;
      kappas.push({
        detector,
        regime,
        mean: mean((k) => k.kappa),
        min: Math.min(...ks.map((k) => k.kappa)),
        max: Math.max(...ks.map((k) => k.kappa)),
        tuneFpr: mean((k) => k.tuneFpr),
        shipped: SHIPPED_KAPPA[detector],
        shippedHeldOutFpr: mean((k) => k.shippedFpr),
      });
    }
  }
  const compound: CompoundRow[] = ATTACKS.map((a) => {
    const xs = perSeed.map((s) => s.compound.get(a) ?? { asr: 0, asrDef: 0 });
    const asrR = xs.reduce((s, x) => s + x.asr, 0) / xs.length;
    const asrRDefended = xs.reduce((s, x) => s + x.asrDef, 0) / xs.length;
    return {
      attack: a,
      asrR,
      asrRDefended,
      sessionsTo50: sessionsTo(asrR, 0.5),
      sessionsTo90: sessionsTo(asrR, 0.9),
      sessionsTo90Defended: sessionsTo(asrRDefended, 0.9),
    };
  });
  const rest = corpus.length - refSize;
  return {
    embedder: o.embedder.name,
    config: {
      seeds,
      benign: corpus.length,
      reference: refSize,
      tuning: Math.floor(rest / 2),
      heldOutBenign: rest - Math.floor(rest / 2),
      historyQueries: paperHist,
      mixedHistoryQueries: mixedHist,
      targetFpr: target,
      gate,
      ...(o.kappa === undefined ? {} : { kappa: o.kappa }),
    },
    matrix,
    mixed,
    kappas,
    ...(workload === undefined ? {} : { workload }),
    roc,
    synonym,
    compound,
    triggers,
    timing: {
      totalMs: performance.now() - t0,
      modelMs: cache.modelMs,
      embedded: cache.misses,
      cached: cache.hits,
    },
  };
}

interface SeedContext {
  readonly o: DetectEvalOptions;
  readonly embed: Embed;
  readonly corpus: readonly { text: string }[];
  readonly corpusVecs: readonly Float32Array[];
  readonly probeVecs: readonly Float32Array[];
  readonly victimVecs: readonly Float32Array[];
  readonly wm: Watermark;
  readonly split: { ref: number[]; tune: number[]; test: number[] };
  readonly attacks: readonly AttackSet[];
  readonly target: number;
  readonly gate: number;
}

/** One seed under one MemSAD history: tune κ on the tuning split, score attacks and held-out. */
async function scoreSeed(
  c: SeedContext,
  histVecs: readonly Float32Array[],
  extras: boolean,
): Promise<{ scores: SeedScores; synonym: SynonymRow[] }> {
  const { o, embed, corpus, corpusVecs, wm, split } = c;
  const vecsOf = (ix: number[]) => ix.map((i) => corpusVecs[i] as Float32Array);
  const textsOf = (ix: number[]) => ix.map((i) => (corpus[i] as { text: string }).text);
  const refVecs = vecsOf(split.ref);
  const refTexts = textsOf(split.ref);
  const tuneVecs = vecsOf(split.tune);
  const tuneTexts = textsOf(split.tune);
  const testVecs = vecsOf(split.test);
  const testTexts = textsOf(split.test);

  const ngram = new NgramJsd({ kappa: 2.5 });
  ngram.calibrate(refTexts);
  const ns = ngram.stats ?? { mean: 0, std: 1 };
  const proactive = new Proactive({ kappa: 3 });
  proactive.setProbes(c.probeVecs);
  proactive.calibrate(refVecs);
  const ps = meanStd(refVecs.map((v) => proactive.score(v)));
  const mkMemsad = (victims: readonly Float32Array[]): Memsad => {
    const m = new Memsad({ dimensions: o.embedder.dimensions, capacity: 1000, mode: 'combined' });
    m.calibrate(refVecs, [...histVecs, ...victims]);
    return m;
  };
  const memsadPlain = mkMemsad(c.victimVecs);
  const calOf = (m: Memsad) => m.calibration ?? { mean: 0, std: 1, threshold: 0, epsilon: 0, n: 0 };
  const pcal = calOf(memsadPlain);
  // z-scores on the tuning split (benign only: the attacks play no part in choosing κ).
  const zM = (v: Float32Array) => zs(mkScore(memsadPlain, v), pcal.mean, pcal.std);
  const zN = (t: string) => zs(ngram.score(t), ns.mean, ns.std);
  const zP = (v: Float32Array) => zs(proactive.score(v), ps.mean, ps.std);
  const fixed = o.kappa !== undefined;
  const tuned = {
    memsad: fixed
      ? (o.kappa as number)
      : tuneKappa(
          tuneVecs.map((v) => zM(v)),
          c.target,
        ),
    memsad_plus: fixed ? SHIPPED_KAPPA.memsad_plus : tuneKappa(tuneTexts.map(zN), c.target),
    proactive: fixed ? SHIPPED_KAPPA.proactive : tuneKappa(tuneVecs.map(zP), c.target),
  };
  const heldZ = {
    memsad: testVecs.map((v) => zM(v)),
    memsad_plus: testTexts.map(zN),
    proactive: testVecs.map(zP),
  };
  const tuneZ = {
    memsad: tuneVecs.map((v) => zM(v)),
    memsad_plus: tuneTexts.map(zN),
    proactive: tuneVecs.map(zP),
  };
  const kappas = (['memsad', 'memsad_plus', 'proactive'] as const).map((d) => ({
    detector: d,
    kappa: tuned[d],
    tuneFpr: rate(tuneZ[d].map((z) => z > tuned[d])),
    shippedFpr: rate(heldZ[d].map((z) => z > SHIPPED_KAPPA[d])),
  }));
  const testMarked = testTexts.map((t) => wm.mark(t));

  const cells = new Map<string, { pos: number[]; neg: number[]; pf: boolean[]; nf: boolean[] }>();
  const compound = new Map<AttackName, { asr: number; asrDef: number }>();
  let synonym: SynonymRow[] = [];
  for (const a of c.attacks) {
    const trigVecs = await embed(a.victimQueries);
    const memsad = a.attack === 'agentpoison' ? mkMemsad(trigVecs) : memsadPlain;
    const cal = calOf(memsad);
    const poisonVecs = await embed(a.poisons);
    type Row = Record<Defence, { s: number; f: boolean }>;
    const judge = (text: string, marked: string, v: Float32Array): Row => {
      const ms = mkScore(memsad, v);
      const mp = mkScore(memsadPlain, v);
      const zms = zs(ms, cal.mean, cal.std);
      const zng = zN(text);
      const zpr = zP(v);
      const va = validate(text).score;
      const wfind = wm.detect(marked);
      const mf = zms > tuned.memsad;
      const nf = zng > tuned.memsad_plus;
      const pf = zpr > tuned.proactive;
      const vf = va > 0.5;
      const wf = wfind.flagged;
      // The shipped default: κ as shipped, MemSAD+ gated on MemSAD's z (calibration.ts).
      const dm = zms > SHIPPED_KAPPA.memsad;
      const dn = zng > SHIPPED_KAPPA.memsad_plus && zms >= c.gate;
      const dp = zpr > SHIPPED_KAPPA.proactive;
      return {
        watermark: { s: wfind.score, f: wf },
        validation: { s: va, f: vf },
        proactive: { s: zpr, f: pf },
        memsad: { s: zms, f: mf },
        memsad_plain: {
          s: zs(mp, pcal.mean, pcal.std),
          f: zs(mp, pcal.mean, pcal.std) > tuned.memsad,
        },
        memsad_plus: {
          s: Math.max(zms / tuned.memsad, zng / tuned.memsad_plus),
          f: mf || nf,
        },
        memsad_plus_gated: {
          s: Math.max(
            zms / tuned.memsad,
            zms >= c.gate ? zng / tuned.memsad_plus : Number.NEGATIVE_INFINITY,
          ),
          f: mf || (nf && zms >= c.gate),
        },
        composite: { s: Number.NaN, f: wf || mf || pf },
        composite_auto: { s: Number.NaN, f: mf || nf || pf || vf },
        composite_default: { s: Number.NaN, f: dm || dn || dp || vf },
      };
    };
    const pos = a.poisons.map((t, i) => judge(t, t, poisonVecs[i] as Float32Array));
    const neg = testTexts.map((t, i) =>
      judge(t, testMarked[i] as string, testVecs[i] as Float32Array),
    );
    for (const d of DEFENCES) {
      cells.set(`${d}|${a.attack}`, {
        pos: pos.map((x) => x[d].s),
        neg: neg.map((x) => x[d].s),
        pf: pos.map((x) => x[d].f),
        nf: neg.map((x) => x[d].f),
      });
    }
    // Retrieval exposure (ASR-R, k = 5) over the reference corpus plus the poisons.
    const asr = (keep: boolean[]): number => {
      let hit = 0;
      for (const q of trigVecs) {
        const sims = refVecs.map((v) => cosineSim(q, v)).sort((x, y) => y - x);
        const fifth = sims[4] ?? Number.NEGATIVE_INFINITY;
        if (poisonVecs.some((p, i) => keep[i] === true && cosineSim(q, p) > fifth)) hit++;
      }
      return hit / trigVecs.length;
    };
    compound.set(a.attack, {
      asr: asr(a.poisons.map(() => true)),
      asrDef: asr(pos.map((x) => !x.composite_default.f)),
    });

    if (extras) {
      // Synonym-substitution adaptive attack against MemSAD (white-box), then MemSAD+.
      const flagged = a.poisons
        .filter((_, i) => pos[i]?.memsad.f === true)
        .slice(0, o.synonymEntries ?? 5);
      const target = centroid(trigVecs);
      const th = cal.mean + tuned.memsad * cal.std;
      const rows = [];
      for (const t of flagged)
        rows.push(await synonymAttack(t, embed, (v) => mkScore(memsad, v), th, target));
      const advVecs = await embed(rows.map((x) => x.adversarial));
      const evadeM = rows.filter((x) => x.newScore <= th).length;
      const evadePlus = rows.filter(
        (x, i) =>
          !(
            mkScore(memsad, advVecs[i] as Float32Array) > th ||
            zN(x.adversarial) > tuned.memsad_plus
          ),
      ).length;
      const n = rows.length;
      synonym = [
        ...synonym,
        {
          attack: a.attack,
          entries: n,
          memsadTprBefore: rate(pos.map((x) => x.memsad.f)),
          memsadEvasion: n === 0 ? 0 : evadeM / n,
          memsadPlusTprBefore: rate(pos.map((x) => x.memsad_plus.f)),
          memsadPlusEvasion: n === 0 ? 0 : evadePlus / n,
          subsPerEntry: n === 0 ? 0 : rows.reduce((s, x) => s + x.substitutions, 0) / n,
          simRatio: n === 0 ? 1 : rows.reduce((s, x) => s + x.newSim / x.origSim, 0) / n,
        },
      ];
    }
  }
  return { scores: { cells, compound, kappas }, synonym };
}

const mkScore = (m: Memsad, v: Float32Array): number => m.score(v) ?? 0;

/** Matrix (and ROC curves of seed 0) from per-seed scores. */
function aggregate(
  perSeed: readonly SeedScores[],
  br: () => number,
  withRoc: boolean,
): { matrix: MatrixCell[]; roc: DetectEvalReport['roc'] } {
  const matrix: MatrixCell[] = [];
  const roc: DetectEvalReport['roc'] = [];
  if (perSeed.length === 0) return { matrix, roc };
  for (const a of ATTACKS) {
    for (const d of DEFENCES) {
      if (d === 'memsad_plain' && a !== 'agentpoison') continue;
      const cs = perSeed.map((s) => s.cells.get(`${d}|${a}`)).filter((c) => c !== undefined);
      const hasScore = !d.startsWith('composite');
      matrix.push({
        attack: a,
        defence: d,
        tpr: bootstrap(
          cs.map((c) => rate(c.pf)),
          br,
        ),
        fpr: bootstrap(
          cs.map((c) => rate(c.nf)),
          br,
        ),
        ...(hasScore
          ? {
              auroc: bootstrap(
                cs.map((c) => auroc(c.pos, c.neg)),
                br,
              ),
            }
          : {}),
      });
      const c0 = cs[0];
      if (withRoc && hasScore && c0 !== undefined)
        roc.push({
          attack: a,
          defence: d,
          auroc: auroc(c0.pos, c0.neg),
          points: rocPoints(c0.pos, c0.neg),
        });
    }
  }
  return { matrix, roc };
}

function centroid(vs: readonly Float32Array[]): Float32Array {
  const c = new Float32Array(vs[0]?.length ?? 0);
  for (const v of vs) for (let i = 0; i < v.length; i++) c[i] = (c[i] as number) + (v[i] as number);
  return c;
}
