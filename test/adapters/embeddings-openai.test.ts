import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiCompatibleEmbedder } from '../../src/adapters/embeddings/openai-compatible.js';
import { DeterministicEmbedder } from '../../src/adapters/embeddings/deterministic.js';
import { EMBEDDING_ERROR_CODE } from '../../src/adapters/embeddings/types.js';

const KEY = 'sk-test-0123456789';
const DIM = 8;
const model = new DeterministicEmbedder(DIM);

/** What the fake server answers next: the real protocol, or one kind of misbehaviour. */
type Mode =
  | 'ok'
  | 'reversed'
  | 'not-json'
  | 'missing-data'
  | 'short'
  | 'wrong-dim'
  | 'nan'
  | 'dup-index'
  | '500';
let mode: Mode = 'ok';
const requests: { auth: string | undefined; body: unknown; path: string | undefined }[] = [];

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function handler(req: IncomingMessage, res: ServerResponse): void {
  void (async () => {
    const raw = await readBody(req);
    const body = JSON.parse(raw) as { model: string; input: string[] };
    requests.push({ auth: req.headers.authorization, body, path: req.url });
    const send = (status: number, payload: string): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(payload);
    };
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(404, '{}');
    if (req.headers.authorization !== `Bearer ${KEY}`) {
      return send(
        401,
        JSON.stringify({
          error: { message: 'Incorrect API key provided', type: 'invalid_request_error' },
        }),
      );
    }
    if (mode === '500') return send(500, '{"error":{"message":"boom"}}');
    if (mode === 'not-json') return send(200, '<html>gateway</html>');
    if (mode === 'missing-data') return send(200, JSON.stringify({ object: 'list' }));
    let data = body.input.map((t, index) => ({
      object: 'embedding',
      index,
      embedding: Array.from(model.embedOne(t)) as unknown[],
    }));
    if (mode === 'reversed') data = data.reverse();
    if (mode === 'short') data = data.slice(1);
    if (mode === 'wrong-dim' && data[0]) data[0].embedding = data[0].embedding.slice(1);
    if (mode === 'nan' && data[0]) data[0].embedding[0] = 'NaN';
    if (mode === 'dup-index' && data[1]) data[1].index = 0;
    send(
      200,
      JSON.stringify({
        object: 'list',
        data,
        model: body.model,
        usage: { prompt_tokens: 1, total_tokens: 1 },
      }),
    );
  })();
}

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  mode = 'ok';
  requests.length = 0;
});

const make = (
  over: Partial<{ apiKey: string; batchSize: number }> = {},
): OpenAiCompatibleEmbedder =>
  new OpenAiCompatibleEmbedder({
    baseUrl,
    apiKey: KEY,
    model: 'test-embed',
    dimensions: DIM,
    ...over,
  });

describe('OpenAiCompatibleEmbedder against a real local HTTP server', () => {
  it('POSTs { model, input } with the bearer key and returns vectors in input order', async () => {
    const e = make();
    expect(e.name).toBe('openai-compatible:test-embed');
    const out = await e.embed(['alpha beta', 'gamma']);
    expect(requests).toEqual([
      {
        auth: `Bearer ${KEY}`,
        body: { model: 'test-embed', input: ['alpha beta', 'gamma'] },
        path: '/v1/embeddings',
      },
    ]);
    expect(out.map((v) => Array.from(v))).toEqual([
      Array.from(model.embedOne('alpha beta')),
      Array.from(model.embedOne('gamma')),
    ]);
  });

  it('reorders by index when the server answers out of order', async () => {
    mode = 'reversed';
    const out = await make().embed(['one', 'two', 'three']);
    expect(Array.from(out[2] as Float32Array)).toEqual(Array.from(model.embedOne('three')));
  });

  it('splits large inputs into batches', async () => {
    const out = await make({ batchSize: 2 }).embed(['a', 'b', 'c', 'd', 'e']);
    expect(out).toHaveLength(5);
    expect(requests.map((r) => (r.body as { input: string[] }).input.length)).toEqual([2, 2, 1]);
  });

  it('401 is a coded auth failure that does not echo the key or the server body', async () => {
    const err = await make({ apiKey: 'sk-wrong' })
      .embed(['x'])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: EMBEDDING_ERROR_CODE,
      details: { reason: 'auth', status: 401 },
    });
    expect(String((err as Error).message)).not.toContain('sk-wrong');
    expect(JSON.stringify((err as { details: unknown }).details)).not.toContain('Incorrect');
  });

  it.each([
    ['not-json', 'response_invalid'],
    ['missing-data', 'response_invalid'],
    ['short', 'response_invalid'],
    ['nan', 'response_invalid'],
    ['dup-index', 'response_invalid'],
    ['wrong-dim', 'dimension_mismatch'],
    ['500', 'http_status'],
  ] as const)('malformed response (%s) is coded %s', async (m, reason) => {
    mode = m;
    await expect(make().embed(['first text', 'second text'])).rejects.toMatchObject({
      code: EMBEDDING_ERROR_CODE,
      details: { reason },
    });
  });

  it('an unreachable server is a coded network failure', async () => {
    const e = new OpenAiCompatibleEmbedder({
      baseUrl: 'http://127.0.0.1:1/v1',
      apiKey: KEY,
      model: 'm',
      dimensions: DIM,
    });
    await expect(e.embed(['x'])).rejects.toMatchObject({
      code: EMBEDDING_ERROR_CODE,
      details: { reason: 'network' },
    });
  });

  it('validates its options with INPUT_INVALID', () => {
    const bad = [
      { baseUrl: 'not a url', apiKey: KEY, model: 'm', dimensions: DIM },
      { baseUrl: 'file:///etc', apiKey: KEY, model: 'm', dimensions: DIM },
      { baseUrl, apiKey: '', model: 'm', dimensions: DIM },
      { baseUrl, apiKey: 'a\nb', model: 'm', dimensions: DIM },
      { baseUrl, apiKey: KEY, model: 'm', dimensions: 0 },
    ];
    for (const o of bad)
      expect(() => new OpenAiCompatibleEmbedder(o)).toThrowError(
        expect.objectContaining({ code: 'INPUT_INVALID' }),
      );
  });

  it('embeds nothing without a request', async () => {
    expect(await make().embed([])).toEqual([]);
    expect(requests).toHaveLength(0);
  });
});
