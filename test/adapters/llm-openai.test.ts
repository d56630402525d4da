import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiCompatibleProvider } from '../../src/adapters/llm/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import type { LlmRequest } from '../../src/ports/llm.js';
import {
  type MockChatReply,
  type MockChatRequest,
  type MockOpenAiServer,
  startMockOpenAiServer,
} from '../../src/testing/llm/index.js';

const KEY = 'sk-test-not-a-real-key-123';
let server: MockOpenAiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(
  reply: (req: MockChatRequest, i: number) => MockChatReply,
): Promise<MockOpenAiServer> {
  server = await startMockOpenAiServer({ apiKey: KEY, handler: reply });
  return server;
}

function provider(
  s: MockOpenAiServer,
  extra: { apiKey?: string; timeoutMs?: number } = {},
): OpenAiCompatibleProvider {
  return new OpenAiCompatibleProvider({
    baseUrl: s.baseUrl,
    model: 'mock-model',
    apiKey: extra.apiKey ?? KEY,
    ...(extra.timeoutMs ? { timeoutMs: extra.timeoutMs } : {}),
  });
}

const ask: LlmRequest = {
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hi' },
  ],
};

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('OpenAiCompatibleProvider against the mock OpenAI server', () => {
  it('returns text and sends model, messages and sampling settings over the wire', async () => {
    const s = await start(() => ({ kind: 'message', text: 'hello there' }));
    const res = await provider(s).generate({ ...ask, temperature: 0, maxTokens: 64 });
    expect(res).toEqual({ text: 'hello there', toolCalls: [], model: 'mock-model' });
    expect(s.requests).toHaveLength(1);
    const r = s.requests[0]!;
    expect(r.path).toBe('/v1/chat/completions');
    expect(r.authorized).toBe(true);
    const body = r.body as Record<string, unknown>;
    expect(body['model']).toBe('mock-model');
    expect(body['messages']).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ]);
    expect(body['temperature']).toBe(0);
    expect(body['max_tokens']).toBe(64);
    expect(body['stream']).not.toBe(true);
    expect(body['response_format']).toBeUndefined();
  });

  it('sends response_format json_object in JSON mode and accepts a JSON object', async () => {
    const s = await start(() => ({ kind: 'message', text: '{"score":0.9}' }));
    const res = await provider(s).generate({ ...ask, json: true });
    expect(JSON.parse(res.text)).toEqual({ score: 0.9 });
    expect((s.requests[0]!.body as Record<string, unknown>)['response_format']).toEqual({
      type: 'json_object',
    });
  });

  it('JSON mode: a non-JSON or non-object answer is LLM_MALFORMED', async () => {
    const s = await start((_r, i) => ({
      kind: 'message',
      text: i === 0 ? 'sure! {"score": 1}' : '[1,2]',
    }));
    const p = provider(s);
    expect(await codeOf(p.generate({ ...ask, json: true }))).toBe('LLM_MALFORMED');
    expect(await codeOf(p.generate({ ...ask, json: true }))).toBe('LLM_MALFORMED');
  });

  it('sends tools as OpenAI functions and returns tool calls', async () => {
    const s = await start(() => ({
      kind: 'message',
      toolCalls: [{ name: 'send_money', arguments: { recipient: 'alice', amount: 5 } }],
    }));
    const parameters = {
      type: 'object',
      properties: { recipient: { type: 'string' }, amount: { type: 'number' } },
      required: ['recipient', 'amount'],
    };
    const res = await provider(s).generate({
      ...ask,
      tools: [{ name: 'send_money', description: 'Send money', parameters }],
    });
    expect(res.toolCalls).toEqual([
      { name: 'send_money', arguments: { recipient: 'alice', amount: 5 } },
    ]);
    const tools = (s.requests[0]!.body as Record<string, unknown>)['tools'] as unknown[];
    expect(tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'send_money',
          description: 'Send money',
          parameters: expect.objectContaining(parameters),
        },
      },
    ]);
  });

  it('tool-call arguments that are not JSON are LLM_MALFORMED', async () => {
    const s = await start(() => ({
      kind: 'message',
      toolCalls: [{ name: 'f', arguments: '{not json' }],
    }));
    const res = provider(s).generate({
      ...ask,
      tools: [{ name: 'f', parameters: { type: 'object' } }],
    });
    expect(await codeOf(res)).toBe('LLM_MALFORMED');
  });

  it('a wrong key (401) is LLM_UNAVAILABLE and the key appears in no error text', async () => {
    const s = await start(() => ({ kind: 'message', text: 'never' }));
    const wrong = 'sk-wrong-secret-value-xyz';
    let err: unknown;
    try {
      await provider(s, { apiKey: wrong }).generate(ask);
    } catch (e) {
      err = e;
    }
    expect(isMemwardenError(err, 'LLM_UNAVAILABLE')).toBe(true);
    expect(s.requests[0]!.authorized).toBe(false);
    const e = err as Error & { details?: unknown };
    expect(`${e.message} ${JSON.stringify(e.details)} ${e.stack ?? ''}`).not.toContain(wrong);
    expect(JSON.stringify(s.requests)).not.toContain(wrong);
  });

  it.each([
    [403, 'LLM_UNAVAILABLE'],
    [404, 'LLM_UNAVAILABLE'],
    [429, 'LLM_TRANSPORT'],
    [500, 'LLM_TRANSPORT'],
    [503, 'LLM_TRANSPORT'],
  ])('HTTP %i maps to %s (with cause)', async (status, code) => {
    const s = await start(() => ({ kind: 'error', status }));
    let err: unknown;
    try {
      await provider(s).generate(ask);
    } catch (e) {
      err = e;
    }
    expect(isMemwardenError(err)).toBe(true);
    expect((err as { code: string }).code).toBe(code);
    expect((err as Error).cause).toBeDefined();
    expect((err as { details: Record<string, unknown> }).details['status']).toBe(status);
    expect(s.requests).toHaveLength(1); // no hidden retries by default
  });

  it('a timeout is LLM_TRANSPORT', async () => {
    const s = await start(() => ({ kind: 'hang' }));
    expect(await codeOf(provider(s, { timeoutMs: 200 }).generate(ask))).toBe('LLM_TRANSPORT');
  });

  it('a dropped connection and an unreachable host are LLM_TRANSPORT', async () => {
    const s = await start(() => ({ kind: 'drop' }));
    expect(await codeOf(provider(s).generate(ask))).toBe('LLM_TRANSPORT');
    const dead = new OpenAiCompatibleProvider({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm' });
    expect(await codeOf(dead.generate(ask))).toBe('LLM_TRANSPORT');
  });

  it('the caller aborting is LLM_TRANSPORT', async () => {
    const s = await start(() => ({ kind: 'hang' }));
    const ac = new AbortController();
    const p = provider(s).generate({ ...ask, signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    expect(await codeOf(p)).toBe('LLM_TRANSPORT');
  });

  it.each([
    ['not JSON at all', 'oops <html>'],
    ['wrong shape', JSON.stringify({ hello: 'world' })],
    [
      'empty choices',
      JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [] }),
    ],
  ])('a 200 with a malformed body (%s) is LLM_MALFORMED', async (_label, body) => {
    const s = await start(() => ({ kind: 'raw', body }));
    expect(await codeOf(provider(s).generate(ask))).toBe('LLM_MALFORMED');
  });

  it('rejects bad configuration with INPUT_INVALID', () => {
    for (const bad of [
      { baseUrl: 'ftp://x', model: 'm' },
      { baseUrl: 'not a url', model: 'm' },
      { baseUrl: 'https://user:pw@example.com/v1', model: 'm' },
      { baseUrl: 'https://example.com/v1', model: '' },
      { baseUrl: 'https://example.com/v1', model: 'm', apiKey: 'a\nb' },
      { baseUrl: 'https://example.com/v1', model: 'm', timeoutMs: 0 },
    ]) {
      expect(() => new OpenAiCompatibleProvider(bad)).toThrow(
        expect.objectContaining({ code: 'INPUT_INVALID' }),
      );
    }
  });
});
