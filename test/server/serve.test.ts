import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { MAX_BODY_BYTES } from '../../src/server/schemas.js';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { ALICE_KEY, setup } from './helpers.js';

/** A raw HTTP/1.1 request: `chunks` are written as they are (chunked unless a length is set). */
function raw(
  url: string,
  path: string,
  headers: Record<string, string>,
  chunks: string[],
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method: 'POST', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('startServer (real socket on 127.0.0.1:0)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ app: setup().app, port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('round-trips an add, a search and a 401 over HTTP', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const headers = { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' };
    const add = await fetch(`${server.url}/v1/memories`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ content: 'the user likes jasmine tea' }),
    });
    expect(add.status).toBe(201);
    const rec = (await add.json()) as { id: string };
    const s = await fetch(`${server.url}/v1/memories/search`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: 'jasmine' }),
    });
    const body = (await s.json()) as { results: { memory: { id: string } }[] };
    expect(body.results[0]?.memory.id).toBe(rec.id);
    const anon = await fetch(`${server.url}/v1/memories`);
    expect(anon.status).toBe(401);
    expect(await anon.json()).toMatchObject({ error: { code: 'AUTH_REQUIRED' } });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('keeps an idle connection longer than a load balancer does (65 s, not Node’s 5 s)', async () => {
    // A connection the server closes after 5 s idle while a balancer or a client pool still
    // holds it fails the next request sent on it ("other side closed"; a 502 at the balancer).
    const r = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/healthz`,
        { headers: { connection: 'keep-alive' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(r['keep-alive']).toBe('timeout=65');
  });

  it('limits bodies by Content-Length and, without one, as they stream; responses carry the request headers', async () => {
    const headers = { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' };
    const big = JSON.stringify({ content: 'x', pad: 'p'.repeat(MAX_BODY_BYTES) });
    const byLength = await raw(
      server.url,
      '/v1/memories',
      { ...headers, 'content-length': String(Buffer.byteLength(big)) },
      [big],
    );
    expect(byLength.status).toBe(413);
    expect(JSON.parse(byLength.body)).toMatchObject({ error: { code: 'INPUT_TOO_LARGE' } });
    // Chunked: no length to go by; counted while it streams (sent in 64 KiB pieces).
    const pieces = big.match(/[^]{1,65536}/g) ?? [];
    const chunked = await raw(
      server.url,
      '/v1/memories',
      { ...headers, 'transfer-encoding': 'chunked' },
      pieces,
    );
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: { code: 'INPUT_TOO_LARGE' } });
    // A small chunked body is read whole and served.
    const ok = JSON.stringify({ content: 'the user likes oolong tea' });
    const small = await raw(
      server.url,
      '/v1/memories',
      { ...headers, 'transfer-encoding': 'chunked' },
      [ok.slice(0, 10), ok.slice(10)],
    );
    expect(small.status).toBe(201);
    expect(JSON.parse(small.body)).toMatchObject({ content: 'the user likes oolong tea' });
    for (const r of [byLength, chunked, small]) {
      expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.headers['x-content-type-options']).toBe('nosniff');
      expect(r.headers['cache-control']).toBe('no-store');
    }
    const s = await fetch(`${server.url}/v1/memories/search`, {
      method: 'POST',
      headers: { ...headers, 'x-request-id': 'trace-9' },
      body: JSON.stringify({ query: 'oolong' }),
    });
    expect(s.status).toBe(200);
    expect(s.headers.get('x-request-id')).toBe('trace-9');
    expect(s.headers.get('x-content-type-options')).toBe('nosniff');
    expect(s.headers.get('cache-control')).toBe('no-store');
    expect(s.headers.get('content-type')).toMatch(/^application\/json/);
    const missing = await fetch(`${server.url}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(missing.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
