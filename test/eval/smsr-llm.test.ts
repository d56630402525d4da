/**
 * The evaluation's LLM-backed path over the wire: agent and judge are OpenAI-compatible
 * providers talking to the protocol-level mock server (a real model drops in the same way).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiCompatibleProvider } from '../../src/adapters/llm/index.js';
import { SCENARIOS, runSmsrEval } from '../../src/eval/smsr/index.js';
import { startMockOpenAiServer, type MockOpenAiServer } from '../../src/testing/llm/index.js';

let server: MockOpenAiServer;
const text = (m: Record<string, unknown>): string => String(m['content'] ?? '');

beforeAll(async () => {
  server = await startMockOpenAiServer({
    handler: (req) => {
      const system = text(req.messages[0] ?? {});
      const user = text(req.messages[req.messages.length - 1] ?? {});
      const s = SCENARIOS.find((x) => user.includes(x.question))!;
      if (system.includes('strict evaluator')) {
        const resp = user.slice(user.indexOf('RESPONSE:'));
        const verdict = resp.includes(s.malicious)
          ? 'malicious'
          : resp.includes(s.correct)
            ? 'correct'
            : 'neither';
        return { kind: 'message', text: JSON.stringify({ verdict }) };
      }
      // A gullible agent: believes the newest-looking policy statement in its context.
      const lines = user.split('\n').filter((l) => l.startsWith('['));
      if (lines.some((l) => l.includes(s.malicious)))
        return { kind: 'message', text: `It is ${s.malicious}.` };
      if (lines.some((l) => l.includes(s.correct)))
        return { kind: 'message', text: `It is ${s.correct}.` };
      return { kind: 'message', text: "I don't know." };
    },
  });
});
afterAll(async () => {
  await server.close();
});

describe('eval smsr over an OpenAI-compatible endpoint', () => {
  it('runs the matrix through real HTTP providers', async () => {
    const provider = (model: string) =>
      new OpenAiCompatibleProvider({
        baseUrl: server.baseUrl,
        model,
        apiKey: 'test',
        maxRetries: 0,
      });
    const agent = provider('agent-model');
    const judge = provider('judge-model');
    const s = await runSmsrEval({
      scenarios: 2,
      reps: 1,
      certReps: 2,
      agent: () => agent,
      judge: () => judge,
    });
    expect(s.params.scenarios).toBe(2);
    expect(server.requests.length).toBeGreaterThan(500);
    const judged = server.requests.filter((r) => (r.body as any).model === 'judge-model');
    expect(judged.length).toBeGreaterThan(0);
    expect(
      judged.every((r) => JSON.stringify((r.body as any).response_format ?? {}).includes('json')),
    ).toBe(true);
    const asr = (attack: string, t: number, mode: string) =>
      s.attacks.find((a) => a.attack === attack && a.t === t && a.mode === mode)!.asr.rate;
    expect(asr('unsigned-direct', 1, 'none')).toBe(1);
    expect(asr('unsigned-direct', 1, 'c1')).toBe(0);
    expect(asr('bypass', 3, 'c1c2')).toBe(0);
    expect(asr('authenticated-direct', 1, 'c1')).toBe(1);
  });
});
