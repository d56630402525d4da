/**
 * Identity for platforms (issue 24), over HTTP on the real Memory (PGlite, real keys and log):
 * the operator's admin API (principals, keys: issue, list, rotate, revoke, re-issue a lost
 * one), unique names, and platform keys acting for end users named by a string — each its own
 * principal, isolated like any other, provisioned once, with its kind's tier ceiling.
 * Each finding the issue quotes failed on main before this change (404 routes, duplicate
 * names accepted, no way to act for a user_id).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Memory } from '../../src/open.js';
import { createApp } from '../../src/server/app.js';
import { createCachedAuthenticator } from '../../src/server/auth.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-admin-'));
let mem: Memory;
let app: ReturnType<typeof createApp>;
let operatorKey = '';
let operatorId = '';

beforeAll(async () => {
  mem = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  const op = await mem.bootstrapOperator();
  operatorKey = op!.apiKey;
  operatorId = op!.id;
  const metrics = new Metrics();
  app = createApp({
    memory: mem,
    // As serve wires it: cached, so revocation must drop the cache at once.
    auth: createCachedAuthenticator({ authenticate: (t) => mem.authenticate(t) }),
    metrics,
    logger: createLogger({ level: 'silent' }),
  });
}, 60_000);
afterAll(async () => {
  await mem.close();
  rmSync(dir, { recursive: true, force: true });
});

type Json = Record<string, any>;
async function call(
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Json }> {
  const h: Record<string, string> = { ...headers };
  if (key !== null) h.authorization = `Bearer ${key}`;
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await app.request(path, {
    method,
    headers: h,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text.startsWith('{') ? (JSON.parse(text) as Json) : {} };
}
const code = (r: { json: Json }): unknown => r.json.error?.code;

describe('bootstrap operator', () => {
  it('is created once: a second call creates and shows nothing', async () => {
    expect(await mem.bootstrapOperator()).toBeUndefined();
    const me = await call('GET', '/v1/me', operatorKey);
    expect(me.json).toMatchObject({ id: operatorId, kind: 'operator' });
  });

  it('takes a given key of at least 32 visible characters, and refuses a short one', async () => {
    const d = mkdtempSync(join(tmpdir(), 'mw-boot-'));
    const m = await Memory.open({ dataDir: d, ephemeral: true, embedder: 'deterministic' });
    try {
      await expect(m.bootstrapOperator('short')).rejects.toMatchObject({ code: 'INPUT_INVALID' });
      const given = 'op_' + 'x'.repeat(40);
      const r = await m.bootstrapOperator(given);
      expect(r?.apiKey).toBe(given);
      expect(await m.authenticate(given)).toBe(r?.id);
    } finally {
      await m.close();
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('admin API (operator key)', () => {
  let userId = '';
  let userKey = '';
  let userKeyId = '';

  it('creates a principal with its first key over HTTP (finding: no HTTP route for principals or keys)', async () => {
    const r = await call('POST', '/v1/admin/principals', operatorKey, {
      kind: 'user',
      name: 'carol',
    });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      kind: 'user',
      name: 'carol',
      key: { scope: 'principal', revoked: false },
    });
    userId = r.json.id;
    userKey = r.json.key.apiKey;
    userKeyId = r.json.key.keyId;
    expect(userKey).toMatch(/^mwk_/);
    expect((await call('GET', '/v1/me', userKey)).json.id).toBe(userId);
    const list = await call('GET', '/v1/admin/principals', operatorKey);
    expect(list.json.principals.map((p: Json) => p.id)).toEqual(
      expect.arrayContaining([operatorId, userId]),
    );
  });

  it('refuses a second principal with the same name (finding: names are not unique)', async () => {
    const r = await call('POST', '/v1/admin/principals', operatorKey, {
      kind: 'agent',
      name: 'carol',
    });
    expect(r.status).toBe(409);
    expect(code(r)).toBe('PRINCIPAL_ALREADY_REGISTERED');
  });

  it('is for operators only: a user key is 403 and changes nothing', async () => {
    const before = (await call('GET', '/v1/admin/principals', operatorKey)).json.principals.length;
    const r = await call('POST', '/v1/admin/principals', userKey, {
      kind: 'user',
      name: 'mallory',
    });
    expect(r.status).toBe(403);
    expect(code(r)).toBe('AUTH_FORBIDDEN');
    expect((await call('GET', `/v1/admin/principals/${userId}/keys`, userKey)).status).toBe(403);
    expect((await call('POST', `/v1/admin/keys/${userKeyId}/revoke`, userKey)).status).toBe(403);
    expect((await call('GET', '/v1/admin/principals', operatorKey)).json.principals.length).toBe(
      before,
    );
  });

  it('lists, rotates and revokes keys; a revoked key stops at once despite the auth cache', async () => {
    const second = await call('POST', `/v1/admin/principals/${userId}/keys`, operatorKey, {});
    expect(second.status).toBe(201);
    const keys = await call('GET', `/v1/admin/principals/${userId}/keys`, operatorKey);
    expect(keys.json.keys.map((k: Json) => k.keyId)).toEqual([userKeyId, second.json.keyId]);
    expect(JSON.stringify(keys.json)).not.toContain(userKey); // never a secret
    expect((await call('GET', '/v1/me', second.json.apiKey)).status).toBe(200); // cached now
    const rot = await call('POST', `/v1/admin/keys/${second.json.keyId}/rotate`, operatorKey);
    expect(rot.status).toBe(201);
    expect(rot.json).toMatchObject({
      principal: userId,
      scope: 'principal',
      replaced: second.json.keyId,
    });
    expect((await call('GET', '/v1/me', second.json.apiKey)).status).toBe(401);
    expect((await call('GET', '/v1/me', rot.json.apiKey)).json.id).toBe(userId);
    const rev = await call('POST', `/v1/admin/keys/${rot.json.keyId}/revoke`, operatorKey, {
      reason: 'test',
    });
    expect(rev.json).toMatchObject({ revoked: true });
    expect((await call('GET', '/v1/me', rot.json.apiKey)).status).toBe(401);
    const again = await call('POST', `/v1/admin/keys/${rot.json.keyId}/revoke`, operatorKey);
    expect(code(again)).toBe('KEY_REVOKED');
    const unknown = await call('POST', `/v1/admin/keys/${'0'.repeat(64)}/revoke`, operatorKey);
    expect(code(unknown)).toBe('KEY_UNKNOWN');
    expect(code(await call('POST', '/v1/admin/keys/nothex/revoke', operatorKey))).toBe(
      'INPUT_INVALID',
    );
  });

  it('re-issues a lost key: every other key revoked, the new one works (finding: a lost key cannot be re-issued)', async () => {
    expect((await call('GET', '/v1/me', userKey)).status).toBe(200);
    const r = await call('POST', `/v1/admin/principals/${userId}/keys`, operatorKey, {
      revokeOthers: true,
      reason: 'lost laptop',
    });
    expect(r.status).toBe(201);
    expect((await call('GET', '/v1/me', userKey)).status).toBe(401);
    expect((await call('GET', '/v1/me', r.json.apiKey)).json.id).toBe(userId);
    const keys = (await call('GET', `/v1/admin/principals/${userId}/keys`, operatorKey)).json
      .keys as Json[];
    expect(keys.filter((k) => !k.revoked).map((k) => k.keyId)).toEqual([r.json.keyId]);
  });

  it('audits every change as the operator', async () => {
    const events = await mem.storageBackend.listAudit({
      actor: operatorId,
      actionPrefix: 'apikey.',
      limit: 100,
    });
    const actions = events.map((e) => e.action);
    expect(actions.filter((a) => a === 'apikey.issued').length).toBeGreaterThanOrEqual(4);
    expect(actions.filter((a) => a === 'apikey.revoked').length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(events.map((e) => e.details))).not.toContain('mwk_');
  });
});

describe('platform keys acting for end users (finding: no way for a platform to act for user_id "alice")', () => {
  let platformKey = '';
  let platformId = '';
  let otherPlatformKey = '';
  let plainKey = '';
  const as = (h: string, v: string): Record<string, string> => ({ [h]: v });

  beforeAll(async () => {
    const p = await call('POST', '/v1/admin/principals', operatorKey, {
      kind: 'agent',
      name: 'acme-app',
      scope: 'platform',
    });
    platformKey = p.json.key.apiKey;
    platformId = p.json.id;
    expect(platformKey).toMatch(/^mwp_/);
    otherPlatformKey = (
      await call('POST', '/v1/admin/principals', operatorKey, {
        kind: 'agent',
        name: 'other-app',
        scope: 'platform',
      })
    ).json.key.apiKey;
    plainKey = (
      await call('POST', '/v1/admin/principals', operatorKey, { kind: 'agent', name: 'plain-app' })
    ).json.key.apiKey;
  });

  it('each user_id is its own principal, provisioned on first use and stable after', async () => {
    const a = await call(
      'POST',
      '/v1/memories',
      platformKey,
      { content: 'Alice is allergic to peanuts' },
      as('x-memwarden-user-id', 'alice'),
    );
    expect(a.status).toBe(201);
    const alice = a.json.ns as string;
    expect(alice).toMatch(/^user:[0-9a-f]{32}$/);
    expect(alice).not.toBe(platformId);
    const me = await call(
      'GET',
      '/v1/me',
      platformKey,
      undefined,
      as('x-memwarden-user-id', 'alice'),
    );
    expect(me.json.id).toBe(alice);
    const b = await call(
      'POST',
      '/v1/memories',
      platformKey,
      { content: 'Bob is allergic to shellfish' },
      as('x-memwarden-user-id', 'bob'),
    );
    expect(b.json.ns).not.toBe(alice);
    // provisioned once, audited as the platform
    const prov = await mem.storageBackend.listAudit({
      subject: alice,
      actionPrefix: 'platform.',
      limit: 10,
    });
    expect(prov.map((e) => [e.action, e.actor])).toEqual([['platform.provisioned', platformId]]);
  });

  it("isolates users: bob never sees alice's memory, nor does the platform's own scope", async () => {
    const sBob = await call(
      'POST',
      '/v1/memories/search',
      platformKey,
      { query: 'allergic peanuts', limit: 10 },
      as('x-memwarden-user-id', 'bob'),
    );
    expect(sBob.json.results.map((r: Json) => r.memory.content)).toEqual([
      'Bob is allergic to shellfish',
    ]);
    const sAlice = await call(
      'POST',
      '/v1/memories/search',
      platformKey,
      { query: 'allergic', limit: 10 },
      as('x-memwarden-user-id', 'alice'),
    );
    expect(sAlice.json.results.map((r: Json) => r.memory.content)).toEqual([
      'Alice is allergic to peanuts',
    ]);
    const own = await call('GET', '/v1/memories', platformKey);
    expect(own.json.memories).toEqual([]);
  });

  it("another platform's alice is another principal with nothing of the first's", async () => {
    const s = await call(
      'POST',
      '/v1/memories/search',
      otherPlatformKey,
      { query: 'allergic', limit: 10 },
      as('x-memwarden-user-id', 'alice'),
    );
    expect(s.status).toBe(200);
    expect(s.json.results).toEqual([]);
  });

  it('agent_id and run_id name agent principals; the user ceiling holds (no OPERATOR memory)', async () => {
    const ag = await call(
      'GET',
      '/v1/me',
      platformKey,
      undefined,
      as('x-memwarden-agent-id', 'planner'),
    );
    expect(ag.json.kind).toBe('agent');
    const run = await call(
      'GET',
      '/v1/me',
      platformKey,
      undefined,
      as('x-memwarden-run-id', 'run-42'),
    );
    expect(run.json.kind).toBe('agent');
    expect(run.json.id).not.toBe(ag.json.id);
    const op = await call(
      'POST',
      '/v1/memories',
      platformKey,
      { content: 'policy: wire anything', tier: 'OPERATOR' },
      as('x-memwarden-user-id', 'alice'),
    );
    expect(op.status).toBeGreaterThanOrEqual(400);
    expect(op.status).toBeLessThan(500);
  });

  it('only a platform key may name an end user; bad names are coded errors that change nothing', async () => {
    const before = (await mem.storageBackend.listPrincipals()).length;
    const plain = await call(
      'GET',
      '/v1/me',
      plainKey,
      undefined,
      as('x-memwarden-user-id', 'alice'),
    );
    expect(plain.status).toBe(403);
    expect(code(plain)).toBe('AUTH_FORBIDDEN');
    const both = await call('GET', '/v1/me', platformKey, undefined, {
      'x-memwarden-user-id': 'a',
      'x-memwarden-run-id': 'b',
    });
    expect(code(both)).toBe('INPUT_INVALID');
    const long = await call(
      'GET',
      '/v1/me',
      platformKey,
      undefined,
      as('x-memwarden-user-id', 'x'.repeat(129)),
    );
    expect(code(long)).toBe('INPUT_INVALID');
    // an end user acting through the platform cannot administer anything
    const adm = await call(
      'GET',
      '/v1/admin/principals',
      platformKey,
      undefined,
      as('x-memwarden-user-id', 'alice'),
    );
    expect(code(adm)).toBe('AUTH_FORBIDDEN');
    expect((await mem.storageBackend.listPrincipals()).length).toBe(before);
  });

  it('the same in the library: Memory.actFor gives the principal HTTP used', async () => {
    const viaHttp = (
      await call('GET', '/v1/me', platformKey, undefined, as('x-memwarden-user-id', 'alice'))
    ).json.id;
    expect(await mem.actFor(platformId, { userId: 'alice' })).toBe(viaHttp);
    const r = await mem.search('peanuts', {
      principal: await mem.actFor(platformId, { userId: 'alice' }),
    });
    expect(r.results.map((h) => h.memory.content)).toEqual(['Alice is allergic to peanuts']);
  });

  it('is the same principal after a restart (derived, not remembered)', async () => {
    const d = mkdtempSync(join(tmpdir(), 'mw-plat-'));
    try {
      let m = await Memory.open({ dataDir: d, embedder: 'deterministic' });
      const p = await m.createPrincipal('agent', 'app', { scope: 'platform' });
      const first = await m.actFor(p.id, { userId: 'alice' });
      await m.add('Alice likes tea', { principal: first });
      await m.close();
      m = await Memory.open({ dataDir: d, embedder: 'deterministic' });
      const again = await m.actFor(p.id, { userId: 'alice' });
      expect(again).toBe(first);
      expect((await m.getAll({ principal: again })).map((r) => r.content)).toEqual([
        'Alice likes tea',
      ]);
      await m.close();
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  }, 60_000);
});
