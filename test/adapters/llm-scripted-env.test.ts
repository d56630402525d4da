import { afterEach, describe, expect, it } from 'vitest';
import {
  AnthropicProvider,
  OpenAiCompatibleProvider,
  providerFromEnv,
} from '../../src/adapters/llm/index.js';
import { MemwardenError, isMemwardenError } from '../../src/core/errors.js';
import {
  type MockOpenAiServer,
  ScriptedModel,
  startMockOpenAiServer,
} from '../../src/testing/llm/index.js';

describe('ScriptedModel', () => {
  it('answers from the script by call index and records every request', async () => {
    const m = new ScriptedModel({
      name: 'judge',
      script: (req, i) =>
        i === 0
          ? `first:${req.messages.length}`
          : { text: '', toolCalls: [{ name: 't', arguments: { a: i } }] },
    });
    expect(m.name).toBe('scripted:judge');
    expect(await m.generate({ messages: [{ role: 'user', content: 'x' }] })).toEqual({
      text: 'first:1',
      toolCalls: [],
      model: 'scripted:judge',
    });
    expect(
      (await m.generate({ messages: [{ role: 'user', content: 'y' }], json: true })).toolCalls,
    ).toEqual([{ name: 't', arguments: { a: 1 } }]);
    expect(m.calls).toBe(2);
    expect(m.requests.map((r) => r.messages[0]!.content)).toEqual(['x', 'y']);
    expect(m.requests[1]!.json).toBe(true);
  });

  it('propagates scripted failures and reports exhaustion with a code', async () => {
    const m = ScriptedModel.fromReplies(['a']);
    expect((await m.generate({ messages: [{ role: 'user', content: '1' }] })).text).toBe('a');
    await expect(m.generate({ messages: [{ role: 'user', content: '2' }] })).rejects.toMatchObject({
      code: 'LLM_UNAVAILABLE',
    });
    const flaky = new ScriptedModel({
      script: () => {
        throw new MemwardenError('LLM_TRANSPORT', 'down');
      },
    });
    await expect(
      flaky.generate({ messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ code: 'LLM_TRANSPORT' });
  });

  it('an already-aborted signal is LLM_TRANSPORT', async () => {
    const m = ScriptedModel.fromReplies(['a']);
    await expect(
      m.generate({ messages: [{ role: 'user', content: 'x' }], signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ code: 'LLM_TRANSPORT' });
  });
});

describe('providerFromEnv', () => {
  let server: MockOpenAiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('builds an OpenAI-compatible provider from OPENAI_API_KEY and MEMWARDEN_LLM_BASE_URL and it works', async () => {
    server = await startMockOpenAiServer({
      apiKey: 'sk-env',
      handler: () => ({ kind: 'message', text: 'from env' }),
    });
    const p = providerFromEnv({
      model: 'gpt-4o-mini',
      env: { OPENAI_API_KEY: 'sk-env', MEMWARDEN_LLM_BASE_URL: server.baseUrl },
    });
    expect(p).toBeInstanceOf(OpenAiCompatibleProvider);
    expect(p.name).toBe('openai-compatible:gpt-4o-mini');
    expect((await p.generate({ messages: [{ role: 'user', content: 'x' }] })).text).toBe(
      'from env',
    );
    expect(server.requests[0]!.authorized).toBe(true);
  });

  it('picks Anthropic for claude models or an anthropic: prefix, and needs ANTHROPIC_API_KEY', () => {
    expect(
      providerFromEnv({ model: 'claude-sonnet-4-5', env: { ANTHROPIC_API_KEY: 'k' } }),
    ).toBeInstanceOf(AnthropicProvider);
    const p = providerFromEnv({
      model: 'anthropic:claude-haiku-4-5',
      env: { ANTHROPIC_API_KEY: 'k' },
    });
    expect(p.name).toBe('anthropic:claude-haiku-4-5');
    expect(() => providerFromEnv({ model: 'claude-sonnet-4-5', env: {} })).toThrow(
      expect.objectContaining({ code: 'LLM_UNAVAILABLE' }),
    );
  });

  it('needs OPENAI_API_KEY for the public API but not for a local base URL', () => {
    let err: unknown;
    try {
      providerFromEnv({ model: 'gpt-4o-mini', env: {} });
    } catch (e) {
      err = e;
    }
    expect(isMemwardenError(err, 'LLM_UNAVAILABLE')).toBe(true);
    const local = providerFromEnv({
      model: 'openai:llama3',
      baseUrl: 'http://127.0.0.1:11434/v1',
      env: {},
    });
    expect(local.name).toBe('openai-compatible:llama3');
  });
});
