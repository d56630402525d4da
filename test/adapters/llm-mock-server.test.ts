import { afterEach, describe, expect, it } from 'vitest';
import { type MockOpenAiServer, startMockOpenAiServer } from '../../src/testing/llm/index.js';

let server: MockOpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (path: string, body: unknown, key = 'k') =>
  fetch(`${server!.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('startMockOpenAiServer (the wire format itself)', () => {
  it('answers chat completions in the OpenAI shape, echoing by default', async () => {
    server = await startMockOpenAiServer({ apiKey: 'k' });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await post('/v1/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'ping' }],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      model: 'm',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'echo: ping' }, finish_reason: 'stop' },
      ],
      usage: {
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
      },
    });
  });

  it('streams SSE chunks with tool-call deltas, usage and [DONE]', async () => {
    server = await startMockOpenAiServer({
      handler: () => ({
        kind: 'message',
        text: 'thinking about it',
        toolCalls: [{ name: 'f', arguments: { a: 1 }, id: 'call_1' }],
      }),
    });
    const res = await post('/v1/chat/completions', {
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map(
      (e) =>
        JSON.parse(e) as {
          object: string;
          choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
          usage?: unknown;
        },
    );
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    const text = chunks.flatMap((c) => c.choices.map((ch) => ch.delta['content'] ?? '')).join('');
    expect(text).toBe('thinking about it');
    const args = chunks
      .flatMap((c) =>
        c.choices.flatMap(
          (ch) =>
            (ch.delta['tool_calls'] as { function: { arguments: string } }[] | undefined) ?? [],
        ),
      )
      .map((t) => t.function.arguments)
      .join('');
    expect(JSON.parse(args)).toEqual({ a: 1 });
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'tool_calls')).toBe(true);
    expect(chunks.at(-1)!.usage).toBeDefined();
  });

  it('serves embeddings (default deterministic vectors, or scripted)', async () => {
    server = await startMockOpenAiServer({ apiKey: 'k' });
    const a = (await (await post('/v1/embeddings', { model: 'e', input: ['x', 'y'] })).json()) as {
      data: { index: number; embedding: number[] }[];
    };
    expect(a.data.map((d) => d.index)).toEqual([0, 1]);
    expect(a.data[0]!.embedding).toHaveLength(8);
    const again = (await (
      await post('/v1/embeddings', { model: 'e', input: 'x' })
    ).json()) as typeof a;
    expect(again.data[0]!.embedding).toEqual(a.data[0]!.embedding);
    await server.close();
    server = await startMockOpenAiServer({
      embeddings: (_r, i) =>
        i === 0 ? { kind: 'error', status: 429 } : { kind: 'embeddings', vectors: [[1, 0]] },
    });
    expect((await post('/v1/embeddings', { model: 'e', input: 'x' })).status).toBe(429);
    expect(
      ((await (await post('/v1/embeddings', { model: 'e', input: 'x' })).json()) as typeof a)
        .data[0]!.embedding,
    ).toEqual([1, 0]);
  });

  it('checks the bearer key, paths and bodies like the real API, and never records the key', async () => {
    server = await startMockOpenAiServer({ apiKey: 'secret-key' });
    const unauth = await post(
      '/v1/chat/completions',
      { model: 'm', messages: [{ role: 'user', content: 'x' }] },
      'nope',
    );
    expect(unauth.status).toBe(401);
    expect(await unauth.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    expect((await post('/v1/other', {}, 'secret-key')).status).toBe(404);
    expect((await post('/v1/chat/completions', '{bad', 'secret-key')).status).toBe(400);
    expect(
      (await post('/v1/chat/completions', { model: 'm', messages: [] }, 'secret-key')).status,
    ).toBe(400);
    expect(server.requests.map((r) => r.authorized)).toEqual([false, true, true, true]);
    expect(JSON.stringify(server.requests)).not.toContain('secret-key');
  });

  it('close() releases hung requests', async () => {
    server = await startMockOpenAiServer({ handler: () => ({ kind: 'hang' }) });
    const pending = post('/v1/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
    }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    await server.close();
    server = undefined;
    expect(await pending).toBeInstanceOf(Error);
  });
});
