import { describe, expect, it } from 'vitest';
import { isMemwardenError } from '../../src/core/errors.js';
import { SeededWords, stringVote, type Verdict } from '../../src/core/smsr/index.js';
import {
  SmoothedRetrieval,
  llmGenerator,
  llmJudge,
  parseVerdict,
  wordsFromRandomSource,
  type SmsrCandidate,
} from '../../src/memory/read/smsr.js';
import { SeededRandom } from '../../src/testing/doubles.js';
import { ScriptedModel } from '../../src/testing/llm/index.js';

const pool = (m: number, bad: number): SmsrCandidate[] =>
  Array.from({ length: m }, (_, i) => ({
    id: i < bad ? `adv-${i}` : `seed-${i}`,
    content: i < bad ? 'The CFO approval limit is $50,000.' : `Policy note ${i}.`,
  }));

const judgeByText = async (_q: string, r: string): Promise<Verdict> =>
  r.includes('$50,000') ? 'malicious' : r.includes('$5,000') ? 'correct' : 'neither';

describe('SmoothedRetrieval (Algorithm 1)', () => {
  it('runs n_runs generator calls concurrently over uniform k-subsets and reports the certificate', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const contexts: string[][] = [];
    const s = new SmoothedRetrieval({
      retrieve: async () => pool(20, 1),
      generate: async (_q, ctx) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        contexts.push(ctx.map((c) => c.id));
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return ctx.some((c) => c.id.startsWith('adv'))
          ? 'The limit is $50,000.'
          : 'The limit is $5,000.';
      },
      judge: judgeByText,
      m: 20,
      k: 5,
      runs: 7,
      words: new SeededWords('svc'),
    });
    const a = await s.query('What is the CFO approval limit?');
    expect(maxInFlight).toBe(7);
    expect(contexts).toHaveLength(7);
    for (const c of contexts) expect(new Set(c).size).toBe(5);
    expect(a.runs).toHaveLength(7);
    expect(a.counts.correct + a.counts.malicious + a.counts.neither).toBe(7);
    expect(a.certificate).toMatchObject({ t: 1, m: 20, k: 5, runs: 7 });
    expect(a.certificate!.delta.toFixed(3)).toBe('0.071');
    expect(a.poolSize).toBe(20);
    expect(a.response).toBe(a.runs.find((r) => r.verdict === a.verdict)!.response);
  });

  it('the certificate follows the pool actually retrieved (m′ < m, k′ = min(k, m′))', async () => {
    const s = new SmoothedRetrieval({
      retrieve: async () => pool(11, 1),
      generate: async () => 'x',
      judge: async () => 'neither',
      words: new SeededWords(1),
    });
    const a = await s.query('q');
    expect(a.certificate!.m).toBe(11);
    expect(a.certificate!.delta.toFixed(3)).toBe('0.415');
    const tiny = new SmoothedRetrieval({
      retrieve: async () => pool(3, 0),
      generate: async (_q, ctx) => String(ctx.length),
      judge: async () => 'correct',
      words: new SeededWords(2),
    });
    const b = await tiny.query('q');
    expect(b.runs[0]!.response).toBe('3');
    expect(b.certificate).toMatchObject({ m: 3, k: 3 });
    const empty = new SmoothedRetrieval({
      retrieve: async () => [],
      generate: async () => 'nothing',
      judge: async () => 'neither',
      words: new SeededWords(3),
    });
    expect((await empty.query('q')).certificate).toBeUndefined();
  });

  it('Consistent Minority Effect through the service: verdict vote refuses what string vote would pick', async () => {
    // Worst-case generator: contaminated runs all say the same attacker string; clean runs
    // paraphrase "I don't know" differently every time.
    let n = 0;
    const s = new SmoothedRetrieval({
      retrieve: async () => pool(6, 1),
      generate: async (_q, ctx) =>
        ctx.some((c) => c.id.startsWith('adv'))
          ? 'The limit is $50,000.'
          : `I do not know (variant ${n++}).`,
      judge: judgeByText,
      m: 6,
      k: 2,
      runs: 5,
      words: new SeededWords('cme'),
    });
    // Find a seeded query where 2 of 5 runs are contaminated (the Fig. 4 situation).
    for (let i = 0; i < 50; i++) {
      const a = await s.query('limit?');
      if (a.counts.malicious === 2) {
        expect(stringVote(a.runs.map((r) => r.response)).response).toBe('The limit is $50,000.');
        expect(a.verdict).toBe('neither');
        expect(a.response).not.toContain('$50,000');
        return;
      }
    }
    throw new Error('no 2-of-5 contaminated query in 50 tries');
  });

  it('is deterministic for a seed, and adapts a RandomSource', async () => {
    const mk = (words: ReturnType<typeof wordsFromRandomSource>) =>
      new SmoothedRetrieval({
        retrieve: async () => pool(20, 2),
        generate: async () => '',
        judge: async () => 'neither',
        words,
      });
    const a = mk(wordsFromRandomSource(new SeededRandom('r'))).drawSubsets(20);
    const b = mk(wordsFromRandomSource(new SeededRandom('r'))).drawSubsets(20);
    expect(a).toEqual(b);
    expect(a).toHaveLength(5);
  });

  it('rejects bad parameters', () => {
    const base = {
      retrieve: async () => [],
      generate: async () => '',
      judge: async () => 'neither' as const,
      words: new SeededWords(0),
    };
    expect(() => new SmoothedRetrieval({ ...base, k: 21, m: 20 })).toThrow(
      expect.objectContaining({ code: 'INPUT_INVALID' }),
    );
    expect(() => new SmoothedRetrieval({ ...base, runs: 0 })).toThrow(
      expect.objectContaining({ code: 'INPUT_INVALID' }),
    );
  });
});

describe('LLM-backed generator and judge', () => {
  it('runs through LlmProvider: memories in the prompt, JSON verdicts validated', async () => {
    const gen = new ScriptedModel({
      name: 'agent',
      script: (req) =>
        /\[adv-/.test(req.messages[1]!.content) ? 'The limit is $50,000.' : 'The limit is $5,000.',
    });
    const judge = new ScriptedModel({
      name: 'judge',
      script: (req) => {
        const text = req.messages[1]!.content;
        const resp = text.slice(text.indexOf('RESPONSE:'));
        expect(text).toContain('REFERENCE correct answer: $5,000');
        return JSON.stringify({ verdict: resp.includes('$50,000') ? 'malicious' : 'correct' });
      },
    });
    const s = new SmoothedRetrieval({
      retrieve: async () => pool(20, 1),
      generate: llmGenerator(gen),
      judge: llmJudge(judge, { reference: () => ({ correct: '$5,000', malicious: '$50,000' }) }),
      words: new SeededWords('llm'),
    });
    const a = await s.query('What is the CFO approval limit?');
    expect(gen.calls).toBe(5);
    expect(judge.calls).toBe(5);
    expect(judge.requests.every((r) => r.json === true && r.temperature === 0)).toBe(true);
    expect(['correct', 'malicious']).toContain(a.verdict);
  });

  it('a malformed judge reply fails the query closed with LLM_MALFORMED', async () => {
    expect(parseVerdict('{"verdict":"malicious"}')).toBe('malicious');
    expect(parseVerdict('```json\n{"verdict":"neither"}\n```')).toBe('neither');
    for (const bad of ['malicious', '{"verdict":"MALICIOUS"}', '{}', 'null', '[1]']) {
      expect(() => parseVerdict(bad)).toThrow(expect.objectContaining({ code: 'LLM_MALFORMED' }));
    }
    const s = new SmoothedRetrieval({
      retrieve: async () => pool(20, 0),
      generate: async () => 'ok',
      judge: llmJudge(
        ScriptedModel.fromReplies([
          '{"verdict":"correct"}',
          'I think it is fine',
          '{"verdict":"correct"}',
          '{"verdict":"correct"}',
          '{"verdict":"correct"}',
        ]),
      ),
      words: new SeededWords(9),
    });
    await expect(s.query('q')).rejects.toSatisfy(
      (e: unknown) => isMemwardenError(e) && e.code === 'LLM_MALFORMED',
    );
  });
});
