import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../src/adapters/llm/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import type { LlmRequest } from '../../src/ports/llm.js';

/** A small in-test stand-in for `POST /v1/messages` (the Anthropic Messages API). */
type Reply =
  | { kind: 'message'; content: unknown[]; stop_reason?: string }
  | { kind: 'error'; status: number; type: string }
  | { kind: 'raw'; body: string }
  | { kind: 'hang' };

interface Mock {
  baseUrl: string;
  requests: {
    path: string;
    apiKeyOk: boolean;
    version: string | undefined;
    body: Record<string, unknown>;
  }[];
  close(): Promise<void>;
}

const KEY = 'sk-ant-test-secret-456';
let mock: Mock | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

async function startAnthropicMock(reply: (i: number) => Reply): Promise<Mock> {
  const requests: Mock['requests'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<
        string,
        unknown
      >;
      const apiKeyOk = req.headers['x-api-key'] === KEY;
      const version = req.headers['anthropic-version'] as string | undefined;
      requests.push({ path: req.url ?? '', apiKeyOk, version, body });
      const send = (status: number, payload: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.method !== 'POST' || req.url !== '/v1/messages') {
        send(404, { type: 'error', error: { type: 'not_found_error', message: 'not found' } });
        return;
      }
      if (!apiKeyOk) {
        send(401, {
          type: 'error',
          error: { type: 'authentication_error', message: 'invalid x-api-key' },
        });
        return;
      }
      const r = reply(requests.length - 1);
      if (r.kind === 'hang') return;
      if (r.kind === 'raw') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(r.body);
        return;
      }
      if (r.kind === 'error') {
        send(r.status, { type: 'error', error: { type: r.type, message: 'mock failure' } });
        return;
      }
      send(200, {
        id: `msg_mock_${requests.length}`,
        type: 'message',
        role: 'assistant',
        model: body['model'],
        content: r.content,
        stop_reason: r.stop_reason ?? 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const ask: LlmRequest = {
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hi' },
  ],
};

function provider(m: Mock, extra: { apiKey?: string; timeoutMs?: number } = {}): AnthropicProvider {
  return new AnthropicProvider({
    baseUrl: m.baseUrl,
    model: 'claude-sonnet-4-5',
    apiKey: extra.apiKey ?? KEY,
    ...(extra.timeoutMs ? { timeoutMs: extra.timeoutMs } : {}),
  });
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('AnthropicProvider against a mock Messages API', () => {
  it('returns text; system goes to the top-level system field; key sent as x-api-key', async () => {
    mock = await startAnthropicMock(() => ({
      kind: 'message',
      content: [{ type: 'text', text: 'hello' }],
    }));
    const res = await provider(mock).generate({ ...ask, temperature: 0, maxTokens: 50 });
    expect(res).toEqual({ text: 'hello', toolCalls: [], model: 'claude-sonnet-4-5' });
    const r = mock.requests[0]!;
    expect(r.path).toBe('/v1/messages');
    expect(r.apiKeyOk).toBe(true);
    expect(r.version).toBeTypeOf('string');
    expect(r.body['model']).toBe('claude-sonnet-4-5');
    expect(r.body['max_tokens']).toBe(50);
    expect(r.body['temperature']).toBe(0);
    expect(JSON.stringify(r.body['system'])).toContain('be brief');
    expect(r.body['messages']).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('sends tools and returns tool_use blocks as tool calls', async () => {
    mock = await startAnthropicMock(() => ({
      kind: 'message',
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } }],
    }));
    const res = await provider(mock).generate({
      ...ask,
      tools: [
        {
          name: 'lookup',
          description: 'Look up',
          parameters: { type: 'object', properties: { q: { type: 'string' } } },
        },
      ],
    });
    expect(res.toolCalls).toEqual([{ name: 'lookup', arguments: { q: 'x' } }]);
    const tools = mock.requests[0]!.body['tools'] as Record<string, unknown>[];
    expect(tools[0]).toMatchObject({
      name: 'lookup',
      description: 'Look up',
      input_schema: { type: 'object' },
    });
  });

  it('JSON mode: instructs the model and checks the answer is a JSON object', async () => {
    mock = await startAnthropicMock((i) => ({
      kind: 'message',
      content: [{ type: 'text', text: i === 0 ? '{"ok":true}' : 'Sure: {"ok":true}' }],
    }));
    const p = provider(mock);
    expect(JSON.parse((await p.generate({ ...ask, json: true })).text)).toEqual({ ok: true });
    expect(JSON.stringify(mock.requests[0]!.body['system'])).toContain('single JSON object');
    expect(await codeOf(p.generate({ ...ask, json: true }))).toBe('LLM_MALFORMED');
  });

  it('a wrong key (401) is LLM_UNAVAILABLE without the key in the error', async () => {
    mock = await startAnthropicMock(() => ({ kind: 'message', content: [] }));
    const wrong = 'sk-ant-wrong-789';
    let err: unknown;
    try {
      await provider(mock, { apiKey: wrong }).generate(ask);
    } catch (e) {
      err = e;
    }
    expect(isMemwardenError(err, 'LLM_UNAVAILABLE')).toBe(true);
    expect(
      `${(err as Error).message} ${JSON.stringify((err as { details: unknown }).details)}`,
    ).not.toContain(wrong);
  });

  it.each([
    [429, 'rate_limit_error', 'LLM_TRANSPORT'],
    [500, 'api_error', 'LLM_TRANSPORT'],
    [529, 'overloaded_error', 'LLM_TRANSPORT'],
    [403, 'permission_error', 'LLM_UNAVAILABLE'],
    [404, 'not_found_error', 'LLM_UNAVAILABLE'],
  ])('HTTP %i (%s) maps to %s', async (status, type, code) => {
    mock = await startAnthropicMock(() => ({ kind: 'error', status, type }));
    expect(await codeOf(provider(mock).generate(ask))).toBe(code);
    expect(mock.requests).toHaveLength(1);
  });

  it('a timeout is LLM_TRANSPORT; a malformed 200 is LLM_MALFORMED', async () => {
    mock = await startAnthropicMock((i) =>
      i === 0 ? { kind: 'hang' } : { kind: 'raw', body: '{"type":"message","content":"nope"}' },
    );
    expect(await codeOf(provider(mock, { timeoutMs: 200 }).generate(ask))).toBe('LLM_TRANSPORT');
    expect(await codeOf(provider(mock).generate(ask))).toBe('LLM_MALFORMED');
  });
});
