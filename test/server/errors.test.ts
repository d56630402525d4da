import { describe, expect, it } from 'vitest';
import { ErrorCodes, MemwardenError } from '../../src/core/errors.js';
import { EdgeError, HTTP_STATUS_BY_CODE, mapError } from '../../src/server/errors.js';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/server/logger.js';
import { setup } from './helpers.js';

describe('the code → status table', () => {
  it('maps every core code to a status (the type enforces it; this pins the runtime too)', () => {
    for (const code of ErrorCodes) expect(HTTP_STATUS_BY_CODE[code]).toBeGreaterThanOrEqual(400);
  });

  it.each([
    ['STORAGE_NOT_FOUND', 404],
    ['STORAGE_CONFLICT', 409],
    ['INPUT_INVALID', 400],
    ['CODEC_MALFORMED', 400],
    ['INPUT_TOO_LARGE', 413],
    ['AUTH_REQUIRED', 401],
    ['KEY_REVOKED', 403],
    ['PRINCIPAL_UNKNOWN', 403],
    ['QUOTA_EXCEEDED', 429],
    ['POLICY_DENIED', 403],
    ['STORAGE_FAILED', 500],
    ['STORAGE_UNAVAILABLE', 503],
    ['LOG_CORRUPT', 500],
    ['EMBEDDING_FAILED', 502],
  ] as const)('%s → %i', (code, status) => {
    expect(mapError(new MemwardenError(code, 'm')).status).toBe(status);
  });

  it('4xx keep message and details; 5xx keep only the code; non-coded throwables are INTERNAL', () => {
    const q = mapError(
      new MemwardenError('QUOTA_EXCEEDED', 'daily quota reached', {
        details: { tier: 'USER_OBSERVED' },
      }),
    );
    expect(q.body).toEqual({
      error: {
        code: 'QUOTA_EXCEEDED',
        message: 'daily quota reached',
        details: { tier: 'USER_OBSERVED' },
      },
    });
    const s = mapError(
      new MemwardenError('STORAGE_FAILED', 'relation "entries" violates … content=secret', {
        details: { sql: 'x' },
      }),
    );
    expect(s).toMatchObject({
      status: 500,
      serverFault: true,
      body: { error: { code: 'STORAGE_FAILED', message: 'internal error' } },
    });
    expect(JSON.stringify(s.body)).not.toContain('secret');
    for (const e of [
      new TypeError('x is undefined'),
      'a string',
      null,
      { code: 'STORAGE_NOT_FOUND' },
    ]) {
      expect(mapError(e)).toMatchObject({
        status: 500,
        code: 'INTERNAL',
        body: { error: { code: 'INTERNAL', message: 'internal error' } },
      });
    }
    expect(mapError(new EdgeError('UNSUPPORTED_MEDIA_TYPE', 'json only')).status).toBe(415);
  });
});

describe('error mapping through the app', () => {
  it.each([
    [new MemwardenError('QUOTA_EXCEEDED', 'quota'), 429, 'QUOTA_EXCEEDED'],
    [new MemwardenError('STORAGE_CONFLICT', 'conflict'), 409, 'STORAGE_CONFLICT'],
    [
      new MemwardenError('POLICY_DENIED', 'operator tier is not writable by agents'),
      403,
      'POLICY_DENIED',
    ],
    [
      new MemwardenError(
        'STORAGE_FAILED',
        'pg: password authentication failed for user "memwarden"',
      ),
      500,
      'STORAGE_FAILED',
    ],
    [
      new RangeError('Invalid array length at /srv/memwarden/src/memory/memory.ts:42'),
      500,
      'INTERNAL',
    ],
  ])('memory throws %s → %i %s without internals', async (err, status, code) => {
    const { call, memory, lines } = setup();
    memory.failNext = err;
    const r = await call('POST', '/v1/memories', { body: { content: 'x' } });
    expect(r.status).toBe(status);
    expect(r.json['error']['code']).toBe(code);
    if (status >= 500) {
      expect(r.json).toEqual({ error: { code, message: 'internal error' } });
      expect(r.text).not.toMatch(/password|srv|Invalid array/);
      // the server side keeps the stack for operators
      expect(lines.some((l) => l['msg'] === 'request failed' && l['code'] === code)).toBe(true);
    }
  });
});

describe('a database that is restarting or unreachable', () => {
  it('is a retryable 503 with Retry-After and no internals', async () => {
    const { call, memory } = setup();
    memory.failNext = new MemwardenError(
      'STORAGE_UNAVAILABLE',
      'database: terminating connection due to administrator command at 10.0.0.7',
      { details: { retryable: true, reason: 'connection' } },
    );
    const r = await call('POST', '/v1/memories', { body: { content: 'x' } });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(r.json).toEqual({
      error: { code: 'STORAGE_UNAVAILABLE', message: 'temporarily unavailable, retry' },
    });
    expect(r.text).not.toContain('10.0.0.7');
  });
});

describe('request logs', () => {
  it('one line per request with id, principal, route, status, latency — never content or keys', async () => {
    const { call, raw, lines } = setup();
    await call('POST', '/v1/memories', { body: { content: 'MY-PRIVATE-CONTENT' } });
    await call('POST', '/v1/memories/search', { body: { query: 'MY-PRIVATE-QUERY' } });
    await call('GET', '/v1/memories', { key: 'mw_wrong_key_zzz' });
    const reqs = lines.filter((l) => l['msg'] === 'request');
    expect(reqs).toHaveLength(3);
    expect(reqs[0]).toMatchObject({
      method: 'POST',
      route: '/v1/memories',
      status: 201,
      principal: expect.stringMatching(/^user:/),
      reqId: expect.any(String),
    });
    expect(typeof reqs[0]?.['latencyMs']).toBe('number');
    expect(reqs[2]).toMatchObject({ status: 401, code: 'AUTH_REQUIRED', level: 40 });
    const all = raw.join('\n');
    for (const secret of ['MY-PRIVATE-CONTENT', 'MY-PRIVATE-QUERY', 'mw_alice', 'mw_wrong_key_zzz'])
      expect(all).not.toContain(secret);
  });

  it('access lines carry exactly the fixed fields (they skip redaction, so nothing else may join them)', async () => {
    const { call, lines } = setup();
    await call('POST', '/v1/memories/search', { body: { query: 'q' } });
    await call('GET', '/v1/memories', { key: 'mw_wrong_key_zzz' });
    await call('GET', '/healthz', { key: null, headers: { 'x-request-id': 'trace-7' } });
    const reqs = lines.filter((l) => l['msg'] === 'request');
    expect(reqs.map((l) => Object.keys(l).sort())).toEqual([
      [
        'latencyMs',
        'level',
        'method',
        'msg',
        'principal',
        'reqId',
        'route',
        'service',
        'status',
        'time',
      ],
      [
        'code',
        'latencyMs',
        'level',
        'method',
        'msg',
        'reqId',
        'route',
        'service',
        'status',
        'time',
      ],
      ['latencyMs', 'level', 'method', 'msg', 'reqId', 'route', 'service', 'status', 'time'],
    ]);
    expect(reqs[0]).toMatchObject({ route: '/v1/memories/search', status: 200, level: 30 });
    expect(reqs[1]).toMatchObject({ status: 401, code: 'AUTH_REQUIRED', level: 40 });
    expect(reqs[2]).toMatchObject({ route: '/healthz', reqId: 'trace-7', status: 200 });
  });

  it('every other line keeps the redaction fence', () => {
    const out: string[] = [];
    const logger = createLogger({
      destination: new Writable({
        write(chunk: Buffer, _enc, cb) {
          out.push(chunk.toString('utf8'));
          cb();
        },
      }),
    });
    logger.info(
      { content: 'SECRET-1', nested: { query: 'SECRET-2' }, authorization: 'SECRET-3' },
      'x',
    );
    logger.error({ headers: { authorization: 'SECRET-4' }, apiKey: 'SECRET-5' }, 'y');
    const all = out.join('');
    expect(all).toContain('[redacted]');
    for (const s of ['SECRET-1', 'SECRET-2', 'SECRET-3', 'SECRET-4', 'SECRET-5'])
      expect(all).not.toContain(s);
  });
});
