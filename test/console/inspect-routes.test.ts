/**
 * The console's read routes on the real Memory (PGlite, real signatures, the real gate):
 * principal scoping of gate decisions and lineage, the verifier key, the report tickets and
 * the console's static files and security headers.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatVerifierKey } from '../../src/core/merkle/index.js';
import { Memory } from '../../src/open.js';
import { createApp } from '../../src/server/app.js';
import { CONSOLE_CSP, REPORT_CSP } from '../../src/server/console.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';
import { ReportLibrary } from '../../src/server/reports.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-inspect-'));
const reportsDir = join(dir, 'reports');
let mem: Memory;
let app: ReturnType<typeof createApp>;
const keys = { alice: '', bob: '', ops: '' };
const who = { alice: '', bob: '', ops: '' };

beforeAll(async () => {
  mem = await Memory.open({ dataDir: join(dir, 'data'), ephemeral: true, embedder: 'deterministic' });
  for (const [name, kind] of [['alice', 'user'], ['bob', 'user'], ['ops', 'operator']] as const) {
    const p = await mem.createPrincipal(kind, name);
    keys[name] = p.apiKey;
    who[name] = p.id;
  }
  mkdirSync(join(reportsDir, 'memlineage'), { recursive: true });
  writeFileSync(join(reportsDir, 'memlineage', 'report.html'), '<!doctype html><title>MemLineage evaluation</title><h1>r</h1>');
  mkdirSync(join(reportsDir, 'no-report'));
  mkdirSync(join(reportsDir, 'linked'));
  symlinkSync('/etc/hostname', join(reportsDir, 'linked', 'report.html'));
  app = createApp({
    memory: mem,
    auth: { authenticate: (t) => mem.authenticate(t) },
    metrics: new Metrics(),
    logger: createLogger({ level: 'silent' }),
    console: { dir: resolve('dist/console'), reportsDir },
  });
}, 60_000);
afterAll(async () => {
  await mem.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, key: string | null, body?: unknown) {
  const headers: Record<string, string> = {};
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text.startsWith('{') ? (JSON.parse(text) as Record<string, any>) : {} };
}

describe('console read routes', () => {
  it('/v1/me names the principal and its kind; no key is 401', async () => {
    expect((await call('GET', '/v1/me', keys.ops)).json).toEqual({ id: who.ops, kind: 'operator', name: 'ops' });
    expect((await call('GET', '/v1/me', keys.alice)).json.kind).toBe('user');
    expect((await call('GET', '/v1/me', null)).status).toBe(401);
    expect((await call('GET', '/v1/me?x=1', keys.alice)).status).toBe(400);
  });

  it('gate decisions: each principal sees its own, an operator sees all, newest first', async () => {
    const s = await call('POST', '/v1/memories/search', keys.alice, { query: 'anything' });
    for (const [key, tool] of [[keys.alice, 'send_email'], [keys.alice, 'lookup'], [keys.bob, 'write_file']] as const) {
      const ctx = key === keys.alice ? s.json : (await call('POST', '/v1/memories/search', key, { query: 'x' })).json;
      const r = await call('POST', '/v1/actions/check', key, { call: { tool, arguments: {} }, context: ctx.context, seal: ctx.seal });
      expect(r.status).toBe(200);
    }
    const mine = (await call('GET', '/v1/gate/decisions', keys.alice)).json.decisions as any[];
    expect(mine.map((d) => d.tool)).toEqual(['lookup', 'send_email']);
    expect(mine.every((d) => d.principal === who.alice)).toBe(true);
    expect(mine[0]).toMatchObject({ verdict: 'allow', sensitive: false, audit: { tool: 'lookup', verdict: 'allow' } });
    expect(mine[1].sensitive).toBe(true);
    const bobs = (await call('GET', '/v1/gate/decisions', keys.bob)).json.decisions as any[];
    expect(bobs.map((d) => d.tool)).toEqual(['write_file']);
    const all = (await call('GET', '/v1/gate/decisions?limit=2', keys.ops)).json.decisions as any[];
    expect(all.map((d) => d.tool)).toEqual(['write_file', 'lookup']);
    expect((await call('GET', '/v1/gate/decisions?limit=-1', keys.ops)).status).toBe(400);
    expect((await call('GET', '/v1/gate/decisions?limit=1001', keys.ops)).status).toBe(400);
  });

  it("lineage: the verified ancestor DAG, deleted parents marked, another principal's entry is 404", async () => {
    const add = async (content: string, extra: Record<string, unknown> = {}) => (await call('POST', '/v1/memories', keys.alice, { content, ...extra })).json.id as string;
    const a = await add('Dana manages the finance team', { tier: 'USER_VERIFIED' });
    const b = await add('The budget review is on Friday', { tier: 'EXTERNAL_WEB', source: 'https://x.test' });
    const c = await add('Dana runs the Friday budget review', { parents: [a, b], weights: [0.9, 0.5], derived: true });
    const d = await add('Remind Dana before Friday', { parents: [c], weights: [1], derived: true });
    expect((await call('DELETE', `/v1/memories/${a}`, keys.alice)).status).toBe(200);
    const g = (await call('GET', `/v1/memories/${d}/lineage`, keys.alice)).json;
    expect(g.root).toBe(d);
    expect(g.truncated).toBe(false);
    const byId = new Map((g.nodes as any[]).map((n) => [n.id, n]));
    expect([...byId.keys()].sort()).toEqual([a, b, c, d].sort());
    expect(byId.get(d)).toMatchObject({ depth: 0, state: 'verified', status: 'live' });
    expect(byId.get(a)).toMatchObject({ depth: 2, state: 'verified', status: 'deleted' });
    expect(byId.get(b).memory.label).toBe('EXTERNAL');
    expect(byId.get(c).memory.label).toBe('DERIVED_UNTRUSTED');
    expect(g.edges).toEqual(expect.arrayContaining([
      { child: d, parent: c, weight: 1 },
      // A named parent weighs at least what the attribution algorithm gives (Coarse: 1; ADR 0030).
      { child: c, parent: a, weight: 1 },
      { child: c, parent: b, weight: 1 },
    ]));
    expect((await call('GET', `/v1/memories/${d}/lineage`, keys.bob)).status).toBe(404);
    expect((await call('GET', `/v1/memories/${d}/lineage`, keys.ops)).status).toBe(404);
    expect((await call('GET', '/v1/memories/not%20an%20id/lineage', keys.alice)).status).toBe(400);
  });

  it('/v1/log/vkey is the checkpoint verifier key', async () => {
    const r = await call('GET', '/v1/log/vkey', keys.bob);
    expect(r.json.vkey).toBe(formatVerifierKey(mem.ledger.origin, mem.ledger.checkpointPublicKey));
  });

  it('reports: listed when they are regular report files; a ticket opens one once, under a no-script policy', async () => {
    const list = (await call('GET', '/v1/reports', keys.bob)).json.reports as any[];
    expect(list.map((r) => r.name)).toEqual(['memlineage']);
    expect(list[0].title).toBe('MemLineage evaluation');
    expect((await call('POST', '/v1/reports/memlineage/ticket', null)).status).toBe(401);
    expect((await call('POST', '/v1/reports/linked/ticket', keys.bob)).status).toBe(404);
    expect((await call('POST', '/v1/reports/..%2Fdata/ticket', keys.bob)).status).toBe(400);
    const t = await call('POST', '/v1/reports/memlineage/ticket', keys.bob);
    expect(t.status).toBe(200);
    expect(t.json.url).toMatch(/^\/console\/report\/[A-Za-z0-9_-]{32}$/);
    const r = await call('GET', t.json.url as string, null);
    expect(r.status).toBe(200);
    expect(r.text).toContain('<h1>r</h1>');
    expect(r.headers.get('content-security-policy')).toBe(REPORT_CSP);
    expect(REPORT_CSP).toContain('sandbox');
    expect(REPORT_CSP).not.toContain('script-src');
    expect((await call('GET', t.json.url as string, null)).status).toBe(404); // single use
    expect((await call('GET', '/console/report/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', null)).status).toBe(404);
  });

  it('a ticket expires after a minute', async () => {
    let now = 1_000_000;
    const lib = new ReportLibrary(reportsDir, () => now);
    const { ticket } = await lib.ticket('memlineage');
    now += 60_001;
    expect(await lib.redeem(ticket)).toBeUndefined();
    const again = await lib.ticket('memlineage');
    expect(await lib.redeem(again.ticket)).toContain('<h1>r</h1>');
  });

  it('serves the built console with a strict policy; nothing else under /console', async () => {
    const redirect = await call('GET', '/console', null);
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/console/');
    const page = await call('GET', '/console/', null);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toMatch(/script-src 'self'(;|$)/);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-(inline|eval)/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.text).toContain('<script type="module" src="app.js"></script>');
    const js = await call('GET', '/console/app.js', null);
    expect(js.headers.get('content-type')).toContain('text/javascript');
    expect(js.text).not.toMatch(/\.innerHTML\s*=|insertAdjacentHTML|outerHTML\s*=|document\.write/);
    for (const p of ['/console/../package.json', '/console/main.ts', '/console/%2e%2e/x', '/console/report/x'])
      expect((await call('GET', p, null)).status, p).toBe(404);
    const unbuilt = createApp({ memory: mem, auth: { authenticate: async () => undefined }, metrics: new Metrics(), logger: createLogger({ level: 'silent' }), console: { dir: dir } });
    const r = await unbuilt.request('/console/');
    expect(r.status).toBe(404);
    expect(((await r.json()) as any).error.code).toBe('ROUTE_NOT_FOUND');
  });

  it('/v1/investigate: an operator lists across principals newest first by cursor; anyone else its own scope; a cross-principal filter is 403', async () => {
    const add = async (key: string, content: string) => (await call('POST', '/v1/memories', key, { content, tier: 'USER_VERIFIED', kind: 'note' })).json.id as string;
    const a1 = await add(keys.alice, 'investigate: alice first');
    const b1 = await add(keys.bob, 'investigate: bob first');
    const a2 = await add(keys.alice, 'investigate: alice second');
    const page1 = await call('GET', '/v1/investigate?q=investigate%3A&limit=2', keys.ops);
    expect(page1.status).toBe(200);
    expect(page1.json.scope).toBe('all');
    expect(page1.json.rows.map((r: any) => r.id)).toEqual([a2, b1]);
    expect(page1.json.rows[0]).toMatchObject({ verified: true, status: 'live', memory: { ns: who.alice } });
    const page2 = await call('GET', `/v1/investigate?q=investigate%3A&limit=2&cursor=${page1.json.nextCursor}`, keys.ops);
    expect(page2.json.rows.map((r: any) => r.id)).toEqual([a1]);
    expect(page2.json.nextCursor).toBeUndefined();
    const bobsOnly = await call('GET', `/v1/investigate?owner=${encodeURIComponent(who.bob)}&kind=note&status=live,expired&tier=USER_VERIFIED,USER_OBSERVED`, keys.ops);
    expect(bobsOnly.json.rows.map((r: any) => r.id)).toEqual([b1]);
    const own = await call('GET', '/v1/investigate?q=investigate%3A', keys.alice);
    expect(own.json.scope).toBe('own');
    expect(own.json.rows.map((r: any) => r.id)).toEqual([a2, a1]);
    const forbidden = await call('GET', `/v1/investigate?owner=${encodeURIComponent(who.bob)}`, keys.alice);
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.error.code).toBe('AUTH_FORBIDDEN');
    // One entry: the operator opens alice's (the review link after an approval); bob cannot.
    const opened = await call('GET', `/v1/investigate/${a1}`, keys.ops);
    expect(opened.status).toBe(200);
    expect(opened.json).toMatchObject({ scope: 'all', row: { id: a1, verified: true }, proof: { leafIndex: opened.json.row.leafIndex } });
    expect((await call('GET', `/v1/memories/${a1}`, keys.ops)).status).toBe(404);
    expect((await call('GET', `/v1/investigate/${a1}`, keys.bob)).status).toBe(404);
    for (const bad of ['tier=ROOT', 'status=gone', 'label=NOPE', 'cursor=x', 'limit=201', 'limit=0', 'from=yesterday', 'semantic=yes', 'nope=1', 'q=a&q=b', 'q='])
      expect((await call('GET', `/v1/investigate?${bad}`, keys.ops)).status, bad).toBe(400);
  });

  it('an entry that fails verification is named, not dropped: GET /v1/memories lists it in unverified; the investigation shows its code', async () => {
    const victim = (await call('POST', '/v1/memories', keys.bob, { content: 'bob keeps the spare key in the blue pot', tier: 'USER_VERIFIED' })).json.id as string;
    const before = await call('GET', '/v1/memories', keys.bob);
    expect(before.json.memories.map((m: any) => m.id)).toContain(victim);
    expect(before.json.unverified).toEqual([]);
    // Alter the signed bytes at rest, as whoever holds the database.
    const db = (mem as any).storageBackend.s.db as { query(sql: string, p: unknown[]): Promise<unknown> };
    await db.query(`UPDATE entries SET bytes = overlay(bytes placing '\\x58'::bytea from 40 for 1) WHERE id = $1`, [victim]);
    const after = await call('GET', '/v1/memories', keys.bob);
    expect(after.json.memories.map((m: any) => m.id)).not.toContain(victim);
    expect(after.json.unverified).toEqual([{ id: victim, code: 'MAC_INVALID', stage: 'mac' }]);
    const rows = (await call('GET', `/v1/investigate?owner=${encodeURIComponent(who.bob)}`, keys.ops)).json.rows as any[];
    expect(rows.find((r) => r.id === victim)).toMatchObject({ verified: false, failure: { code: 'MAC_INVALID' }, stored: { owner: who.bob, content: 'bob keeps the spare key in the blue pot' } });
    const mine = (await call('GET', '/v1/investigate', keys.bob)).json.rows as any[];
    expect(mine.find((r) => r.id === victim)).toMatchObject({ verified: false, failure: { code: 'MAC_INVALID' } });
    expect(mine.find((r) => r.id === victim).stored).toBeUndefined();
  });
});
