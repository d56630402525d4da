import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/serve.js';
import { ALICE_KEY, setup } from './helpers.js';

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
});
