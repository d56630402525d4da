/**
 * `memwarden eval locomo` on a hand-written fixture in LoCoMo's shape (test/fixtures/locomo:
 * the dataset itself is never read by tests): parsing, session dates, and one run of the
 * three systems with the deterministic embedder — every category's cells, the recall
 * arithmetic, the report's table and chart.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/deterministic.js';
import {
  checks,
  htmlReport,
  loadLocomo,
  parseLocomo,
  parseSessionDate,
  runLocomo,
  textTable,
} from '../../src/eval/locomo/index.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/locomo/locomo-mini.json', import.meta.url));

describe('LoCoMo data', () => {
  it('parses sessions, dates, captions and evidence (split where the dataset joins ids)', () => {
    const data = loadLocomo(FIXTURE);
    expect(data.map((c) => [c.id, c.turns.length, c.questions.length])).toEqual([
      ['mini-1', 9, 5],
      ['mini-2', 3, 2],
    ]);
    const rowing = data[0]?.turns.find((t) => t.diaId === 'D1:4');
    expect(rowing?.text).toBe(
      'I started rowing lessons on the Douro last weekend. [shares a photo of a rowing boat on a river]',
    );
    expect(rowing?.at).toBe('2024-03-03T09:15:00.000Z');
    expect(data[1]?.questions[1]?.evidence).toEqual(['D1:2', 'D1:3']);
    expect(parseSessionDate('6:40 pm on 17 April, 2024')).toBe('2024-04-17T18:40:00.000Z');
    expect(parseSessionDate('12:05 am on 1 Jan, 2024')).toBeUndefined();
    expect(() => parseLocomo({})).toThrow();
  });
});

describe('memwarden eval locomo (fixture, deterministic embedder)', () => {
  it('writes every turn, asks every question with evidence, and reports recall@5/@10 per category', async () => {
    const lines: string[] = [];
    const report = await runLocomo(loadLocomo(FIXTURE), {
      embedder: new DeterministicEmbedder(384),
      progress: (l) => lines.push(l),
    });
    expect(report.model).toBe('deterministic:bow-384');
    expect(report.conversations.map((c) => [c.id, c.turns])).toEqual([
      ['mini-1', 9],
      ['mini-2', 3],
    ]);
    expect(lines.some((l) => l.includes('wrote 9/9 turns'))).toBe(true);
    const cell = (system: string, category: string, k: number) =>
      report.cells.find((c) => c.system === system && c.category === category && c.k === k);
    // Seven questions with evidence: categories 1–5 and all, three systems, two ks.
    expect(cell('memwarden', 'all', 10)?.questions).toBe(7);
    for (const system of ['memwarden', 'dense', 'bm25'])
      for (const category of ['1', '2', '3', '4', '5', 'all'])
        for (const k of [5, 10]) {
          const c = cell(system, category, k);
          expect(c?.recall).toBeGreaterThanOrEqual(0);
          expect(c?.recall).toBeLessThanOrEqual(1);
        }
    // A dozen turns: every evidence turn is in anyone's top 10.
    expect(cell('memwarden', 'all', 10)?.recall).toBe(1);
    expect(cell('bm25', 'all', 10)?.recall).toBe(1);
    // The single-hop questions name their evidence's words: the default ranking finds them first.
    expect(cell('memwarden', '4', 5)?.recall).toBe(1);
    const table = textTable(report);
    expect(table).toContain('memwarden@10');
    expect(table).toMatch(/PASS {2}memwarden recall@10 \(all\) 1\.000/);
    expect(checks(report).every((c) => c.ok)).toBe(true);
    const html = htmlReport(report, { data: 'fixture', command: 'memwarden eval locomo fixture' });
    expect(html.match(/<svg /g)).toHaveLength(2);
    expect(html).toContain('recall@10');
  }, 120_000);
});
