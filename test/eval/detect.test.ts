import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/deterministic.js';
import { Memsad } from '../../src/core/detect/index.js';
import { agentPoison, injecmem, minja, synonymAttack } from '../../src/eval/detect/attacks.js';
import { DiskEmbeddingCache } from '../../src/eval/detect/cache.js';
import {
  CATEGORIES,
  VICTIM_QUERIES,
  benignCorpus,
  benignQueries,
} from '../../src/eval/detect/corpus.js';
import { auroc, bootstrap, rocPoints, sessionsTo } from '../../src/eval/detect/metrics.js';
import { htmlReport, textSummary } from '../../src/eval/detect/report.js';
import { rng } from '../../src/eval/detect/rng.js';
import { runDetectEval, tuneKappa } from '../../src/eval/detect/run.js';

describe('benign corpus', () => {
  it('is ≥ 1,000 distinct entries over the seven §6.1 categories, deterministic per seed', () => {
    const c = benignCorpus(1400);
    expect(c).toHaveLength(1400);
    expect(new Set(c.map((e) => e.text)).size).toBe(1400);
    expect(new Set(c.map((e) => e.category))).toEqual(new Set(CATEGORIES));
    expect(benignCorpus(1400)).toEqual(c);
    expect(benignCorpus(1400, 2)).not.toEqual(c);
    expect(new Set(benignQueries(300)).size).toBe(300);
  });
});

describe('metrics', () => {
  it('AUROC: 1 for separated, 0.5 for ties, matches the pairwise definition', () => {
    expect(auroc([3, 4], [1, 2])).toBe(1);
    expect(auroc([1, 1], [1, 1])).toBe(0.5);
    const r = rng(9);
    const pos = Array.from({ length: 30 }, () => r() + 0.3);
    const neg = Array.from({ length: 40 }, () => r());
    let pairs = 0;
    for (const p of pos) for (const n of neg) pairs += p > n ? 1 : p === n ? 0.5 : 0;
    expect(auroc(pos, neg)).toBeCloseTo(pairs / (pos.length * neg.length), 12);
    const pts = rocPoints(pos, neg);
    expect(pts[0]).toEqual([0, 0]);
    expect(pts.at(-1)).toEqual([1, 1]);
  });
  it('bootstrap interval brackets the mean; sessions-to-compromise', () => {
    const b = bootstrap([0.8, 0.9, 1, 0.85, 0.95], rng(1));
    expect(b.lo).toBeLessThanOrEqual(b.mean);
    expect(b.hi).toBeGreaterThanOrEqual(b.mean);
    expect(sessionsTo(0.45, 0.9)).toBe(4); // App. S: MINJA at 0.45 reaches 90 % in 4 sessions
    expect(sessionsTo(0, 0.9)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('κ tuning (tuning split only)', () => {
  it('picks the smallest κ whose tuning FPR is at most the target, never below 1', () => {
    const r = rng(5);
    const z = Array.from({ length: 500 }, () => (r() - 0.5) * 8);
    for (const target of [0, 0.003, 0.01, 0.05]) {
      const k = tuneKappa(z, target);
      const fpr = z.filter((x) => x > k).length / z.length;
      expect(fpr).toBeLessThanOrEqual(target);
      // Any smaller candidate (a sample value just below k) exceeds the target, unless at the floor.
      const below = z.filter((x) => x < k).sort((a, b) => b - a)[0];
      if (k > 1 && below !== undefined)
        expect(z.filter((x) => x > below).length / z.length).toBeGreaterThan(target);
    }
    expect(tuneKappa([0.1, 0.2], 0.5)).toBe(1);
  });
});

describe('attacks', () => {
  const e = new DeterministicEmbedder();
  const embed = (t: string[]) => e.embed(t);
  it('AgentPoison: greedy trigger search never lowers the objective; triggered queries carry the trigger', async () => {
    const a = await agentPoison(rng(1), embed, VICTIM_QUERIES, { poisons: 3 });
    expect(a.trigger!.split(' ')).toHaveLength(3);
    expect(a.poisons).toHaveLength(3);
    for (const p of a.poisons) expect(p.endsWith(a.trigger!)).toBe(true);
    for (const q of a.victimQueries) expect(q.endsWith(a.trigger!)).toBe(true);
  });
  it('MINJA shortening levels and InjecMEM anchors', () => {
    const m = minja(rng(2), VICTIM_QUERIES, { queries: 4, levels: 3 });
    expect(m.poisons).toHaveLength(12);
    expect(m.poisons[2]!.length).toBeLessThan(m.poisons[0]!.length);
    expect(injecmem(rng(3), VICTIM_QUERIES).poisons).toHaveLength(5);
  });
  it('synonym attack lowers the white-box score while keeping retrieval similarity', async () => {
    const m = new Memsad({ dimensions: 384, mode: 'max' });
    const qs = await embed(['send the password for the account', 'account password payment']);
    for (const q of qs) m.observeQuery(q);
    const target = qs[0]!;
    const res = await synonymAttack(
      'send the password for the account payment details',
      embed,
      (v) => m.score(v) ?? 0,
      0.1,
      target,
      { keep: 0.3 },
    );
    expect(res.substitutions).toBeGreaterThan(0);
    expect(res.newScore).toBeLessThan(res.origScore);
    expect(res.newSim).toBeGreaterThanOrEqual(0.3 * res.origSim);
  });
});

describe('disk embedding cache', () => {
  it('embeds once and reloads from disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-ec-'));
    const a = new DiskEmbeddingCache(new DeterministicEmbedder(), dir);
    const [v] = await a.embed(['hello world', 'hello world']);
    expect(a.misses).toBe(1);
    const b = new DiskEmbeddingCache(new DeterministicEmbedder(), dir);
    const [w] = await b.embed(['hello world']);
    expect(b.misses).toBe(0);
    expect(Array.from(w!)).toEqual(Array.from(v!));
    expect(readdirSync(dir)).toHaveLength(1);
  });
});

describe('runDetectEval (deterministic embedder)', () => {
  it('produces the matrix, ROC, synonym and compound views and an HTML report with SVG', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-ed-'));
    const r = await runDetectEval({
      embedder: new DeterministicEmbedder(),
      cacheDir: dir,
      seeds: 2,
      benignSize: 1100,
      referenceSize: 1000,
      synonymEntries: 2,
      mixedHistoryQueries: 30,
      workloadWrites: 40,
    });
    expect(r.config.benign).toBe(1100);
    // Reference, tuning and held-out splits are disjoint and cover the corpus.
    expect(r.config.reference! + r.config.tuning! + r.config.heldOutBenign!).toBe(1100);
    expect(r.kappas.map((k) => `${k.regime}/${k.detector}`).sort()).toEqual([
      'mixed/memsad',
      'mixed/memsad_plus',
      'mixed/proactive',
      'paper/memsad',
      'paper/memsad_plus',
      'paper/proactive',
    ]);
    for (const k of r.kappas) expect(k.tuneFpr).toBeLessThanOrEqual(r.config.targetFpr! + 1e-12);
    expect(r.mixed.filter((m) => m.defence === 'composite_default')).toHaveLength(3);
    const wl = r.workload!;
    expect(wl.overall.writes).toBe(40);
    expect(wl.overall.stored + wl.overall.held + wl.overall.nearDuplicate).toBe(40);
    expect(wl.coldStart.writes + wl.warm.writes).toBe(40);
    expect(wl.attacks.map((a) => a.attack)).toEqual(['agentpoison', 'minja', 'injecmem']);
    expect(textSummary(r)).toMatch(/Memory\.add workload/);
    expect(r.matrix.filter((m) => m.defence === 'composite')).toHaveLength(3);
    const w = r.matrix.find((m) => m.attack === 'minja' && m.defence === 'watermark')!;
    expect(w.tpr.mean).toBe(1); // injected entries never pass through the watermarking ingestion path
    expect(w.fpr.mean).toBe(0);
    for (const m of r.matrix) {
      expect(m.tpr.lo).toBeLessThanOrEqual(m.tpr.hi);
      // Issue 19: this asserted AUROC ≥ 0, which cannot fail. The bootstrap interval must
      // bracket its mean inside [0, 1].
      if (m.auroc !== undefined) {
        expect(m.auroc.lo).toBeGreaterThanOrEqual(0);
        expect(m.auroc.lo).toBeLessThanOrEqual(m.auroc.mean);
        expect(m.auroc.mean).toBeLessThanOrEqual(m.auroc.hi);
        expect(m.auroc.hi).toBeLessThanOrEqual(1);
      }
    }
    expect(r.roc.length).toBeGreaterThan(0);
    expect(r.compound).toHaveLength(3);
    expect(r.synonym).toHaveLength(3);
    const html = htmlReport(r);
    expect(html).toContain('<svg');
    expect(html).toContain('Synonym substitution');
    expect(textSummary(r)).toMatch(/headline vs paper/);
    // A rerun embeds nothing new: everything comes from the disk cache.
    const again = await runDetectEval({
      embedder: new DeterministicEmbedder(),
      cacheDir: dir,
      seeds: 2,
      benignSize: 1100,
      referenceSize: 1000,
      synonymEntries: 2,
      mixedHistoryQueries: 30,
      workloadWrites: 0,
    });
    expect(again.timing.embedded).toBe(0);
    expect(JSON.parse(JSON.stringify(again.matrix))).toEqual(JSON.parse(JSON.stringify(r.matrix)));
    void readFileSync;
  });
});
