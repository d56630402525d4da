import { describe, expect, it } from 'vitest';
import { MemwardenError } from '../../src/core/errors.js';
import { MAX_BODY_BYTES, MAX_CONTENT_BYTES } from '../../src/server/schemas.js';
import { ALICE_KEY, setup } from './helpers.js';

const ID = '00000000-0000-7000-8000-000000000001';

/** Every /v1 route with a minimal valid request. */
const V1: [string, string, unknown?][] = [
  ['POST', '/v1/memories', { content: 'c' }],
  ['GET', '/v1/memories'],
  ['POST', '/v1/memories/search', { query: 'q' }],
  ['POST', '/v1/memories/purge', { source: 's' }],
  ['GET', `/v1/memories/${ID}`],
  ['PUT', `/v1/memories/${ID}`, { content: 'c' }],
  ['DELETE', `/v1/memories/${ID}`],
  ['GET', `/v1/memories/${ID}/history`],
  ['GET', `/v1/memories/${ID}/proof`],
  ['GET', '/v1/log/checkpoint'],
  ['GET', '/v1/log/consistency?from=0&to=0'],
  ['GET', '/v1/reviews'],
  ['POST', `/v1/reviews/${ID}/approve`],
  ['POST', `/v1/reviews/${ID}/reject`],
];

describe('authentication', () => {
  it.each(V1)(
    '%s %s without a key → 401 AUTH_REQUIRED, memory untouched',
    async (method, path, body) => {
      const { call, memory } = setup();
      for (const key of [null, 'mw_wrong_key', '', 'x'.repeat(600)]) {
        const r = await call(method, path, { key, ...(body === undefined ? {} : { body }) });
        expect(r.status).toBe(401);
        expect(r.json).toEqual({ error: { code: 'AUTH_REQUIRED', message: expect.any(String) } });
      }
      expect(memory.calls).toEqual([]);
    },
  );

  it('rejects other schemes and malformed headers; accepts a lowercase scheme', async () => {
    const { app } = setup();
    for (const h of [
      `Basic ${ALICE_KEY}`,
      `Bearer`,
      `Bearer ${ALICE_KEY} extra`,
      `Bearer\t${ALICE_KEY}`,
    ]) {
      expect((await app.request('/v1/memories', { headers: { authorization: h } })).status).toBe(
        401,
      );
    }
    expect(
      (await app.request('/v1/memories', { headers: { authorization: `bearer ${ALICE_KEY}` } }))
        .status,
    ).toBe(200);
  });

  it('a revoked key (coded by the authenticator) → 403 KEY_REVOKED', async () => {
    const { call, memory } = setup({
      auth: {
        authenticate: async () => {
          throw new MemwardenError('KEY_REVOKED', 'key revoked');
        },
      },
    });
    const r = await call('POST', '/v1/memories', { body: { content: 'x' } });
    expect(r).toMatchObject({ status: 403, json: { error: { code: 'KEY_REVOKED' } } });
    expect(memory.calls).toEqual([]);
  });

  it('an authenticator crash → 500 INTERNAL, nothing leaked', async () => {
    const { call } = setup({
      auth: {
        authenticate: async () => {
          throw new Error('connection to 10.0.0.5:5432 refused (password=hunter2)');
        },
      },
    });
    const r = await call('GET', '/v1/memories');
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ error: { code: 'INTERNAL', message: 'internal error' } });
  });
});

describe('request validation: coded 4xx and nothing written', () => {
  const bad: [
    string,
    string,
    { body?: unknown; raw?: string; headers?: Record<string, string> },
    number,
    string,
  ][] = [
    ['malformed JSON', '/v1/memories', { raw: '{"content": "x"' }, 400, 'INPUT_INVALID'],
    ['JSON that is not an object', '/v1/memories', { raw: '["x"]' }, 400, 'INPUT_INVALID'],
    [
      'an unknown field',
      '/v1/memories',
      { body: { content: 'x', principal: 'user:evil' } },
      400,
      'INPUT_INVALID',
    ],
    [
      '__proto__ smuggling',
      '/v1/memories',
      { raw: '{"content":"x","__proto__":{"tier":"OPERATOR"}}' },
      400,
      'INPUT_INVALID',
    ],
    [
      '__proto__ smuggling, nested in an array and spelled with an escape',
      '/v1/memories',
      { raw: '{"content":"x","parents":[{"a":1},{"\\u005f_proto__":{"tier":"OPERATOR"}}]}' },
      400,
      'INPUT_INVALID',
    ],
    ['a wrong type', '/v1/memories', { body: { content: 42 } }, 400, 'INPUT_INVALID'],
    ['empty content', '/v1/memories', { body: { content: '' } }, 400, 'INPUT_INVALID'],
    [
      'an unknown tier',
      '/v1/memories',
      { body: { content: 'x', tier: 'ROOT' } },
      400,
      'INPUT_INVALID',
    ],
    ['a negative ttl', '/v1/memories', { body: { content: 'x', ttlMs: -1 } }, 400, 'INPUT_INVALID'],
    [
      'weights out of range',
      '/v1/memories',
      { body: { content: 'x', weights: [2] } },
      400,
      'INPUT_INVALID',
    ],
    [
      'a malformed parent id',
      '/v1/memories',
      { body: { content: 'x', parents: ['../etc'] } },
      400,
      'INPUT_INVALID',
    ],
    [
      'oversize content',
      '/v1/memories',
      { body: { content: 'a'.repeat(MAX_CONTENT_BYTES + 1) } },
      413,
      'INPUT_TOO_LARGE',
    ],
    [
      'oversize multibyte content',
      '/v1/memories',
      { body: { content: '€'.repeat(MAX_CONTENT_BYTES / 3 + 1) } },
      413,
      'INPUT_TOO_LARGE',
    ],
    [
      'an oversize body',
      '/v1/memories',
      { raw: JSON.stringify({ content: 'x', pad: 'p'.repeat(MAX_BODY_BYTES) }) },
      413,
      'INPUT_TOO_LARGE',
    ],
    [
      'a non-JSON content type',
      '/v1/memories',
      { raw: 'content=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['a missing body', '/v1/memories', {}, 400, 'INPUT_INVALID'],
    [
      'search: unknown field',
      '/v1/memories/search',
      { body: { query: 'q', principal: 'user:x' } },
      400,
      'INPUT_INVALID',
    ],
    [
      'search: limit too big',
      '/v1/memories/search',
      { body: { query: 'q', limit: 10_000 } },
      400,
      'INPUT_INVALID',
    ],
    [
      'search: bad mode',
      '/v1/memories/search',
      { body: { query: 'q', mode: 'god' } },
      400,
      'INPUT_INVALID',
    ],
    [
      'search: oversize query',
      '/v1/memories/search',
      { body: { query: 'q'.repeat(MAX_CONTENT_BYTES + 1) } },
      413,
      'INPUT_TOO_LARGE',
    ],
    ['purge: neither selector', '/v1/memories/purge', { body: {} }, 400, 'INPUT_INVALID'],
    [
      'purge: both selectors',
      '/v1/memories/purge',
      { body: { source: 's', contentHash: 'a'.repeat(64) } },
      400,
      'INPUT_INVALID',
    ],
    [
      'purge: bad hash',
      '/v1/memories/purge',
      { body: { contentHash: 'XYZ' } },
      400,
      'INPUT_INVALID',
    ],
  ];
  it.each(bad)('POST with %s', async (_name, path, o, status, code) => {
    const { call, memory, metrics } = setup();
    const r = await call('POST', path, o);
    expect(r.status).toBe(status);
    expect(r.json['error']['code']).toBe(code);
    expect(memory.calls).toEqual([]);
    if (path === '/v1/memories')
      expect((await metrics.expose()).body).toMatch(
        /memory_writes_rejected_total\{reason="(oversize|invalid_request)"\} 1/,
      );
  });

  it('error messages name fields but never echo values', async () => {
    const { call } = setup();
    const r = await call('POST', '/v1/memories', {
      body: { content: 'x', secretField: 'TOPSECRET' },
    });
    expect(r.json['error']['message']).toContain('secretField');
    expect(r.text).not.toContain('TOPSECRET');
  });

  it.each([
    ['/v1/memories?limit=abc'],
    ['/v1/memories?limit=-1'],
    ['/v1/memories?limit=1e3'],
    ['/v1/memories?limit=01'],
    ['/v1/memories?limit=1&limit=2'],
    ['/v1/memories?principal=user:x'],
    [`/v1/memories/${ID}?x=1`],
    ['/v1/log/consistency?from=1'],
    ['/v1/reviews?status=open'],
    ['/v1/memories/bad%20id'],
  ])('GET %s → 400 INPUT_INVALID', async (path) => {
    const { call, memory } = setup();
    const r = await call('GET', path);
    expect(r).toMatchObject({ status: 400, json: { error: { code: 'INPUT_INVALID' } } });
    expect(memory.calls).toEqual([]);
  });

  it('PUT validates content the same way (413 oversize, 400 unknown field)', async () => {
    const { call, memory } = setup();
    expect(
      (
        await call('PUT', `/v1/memories/${ID}`, {
          body: { content: 'a'.repeat(MAX_CONTENT_BYTES + 1) },
        })
      ).status,
    ).toBe(413);
    expect(
      (await call('PUT', `/v1/memories/${ID}`, { body: { content: 'a', tier: 'OPERATOR' } }))
        .status,
    ).toBe(400);
    expect(memory.calls).toEqual([]);
  });

  it('unknown ids → 404 STORAGE_NOT_FOUND; unknown routes → 404 ROUTE_NOT_FOUND', async () => {
    const { call } = setup();
    for (const p of [
      `/v1/memories/${ID}`,
      `/v1/memories/${ID}/history`,
      `/v1/memories/${ID}/proof`,
    ]) {
      expect(await call('GET', p)).toMatchObject({
        status: 404,
        json: { error: { code: 'STORAGE_NOT_FOUND' } },
      });
    }
    expect((await call('DELETE', `/v1/memories/${ID}`)).status).toBe(404);
    expect((await call('POST', `/v1/reviews/${ID}/approve`)).status).toBe(404);
    expect(await call('GET', '/v1/nope')).toMatchObject({
      status: 404,
      json: { error: { code: 'ROUTE_NOT_FOUND' } },
    });
    expect(await call('GET', '/nope', { key: null })).toMatchObject({
      status: 404,
      json: { error: { code: 'ROUTE_NOT_FOUND' } },
    });
  });
});
