/**
 * Issue 19 over HTTP: "No HTTP route … runs PPR, community selection or AuthSelect".
 * `POST /v1/graph/search` on the real memory: a clean selection is allowed; a compromised peer
 * agent's edges derived from tool content diverge from the authenticated replay and the gate
 * does not allow the sensitive action.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSegments } from '../../src/core/render/sentinel.js';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import type { Ledger } from '../../src/memory/log/ledger.js';
import type { Memory } from '../../src/memory/memory.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import { testMemory } from '../memory/helpers-memory.js';
import { createApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';
import { PAYEE_QUESTION, graphWriter, payeeAttack, payeeGraph } from '../helpers/graph-attack.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-http-graph-'));
let mem: Memory;
let ledger: Ledger;
let app: ReturnType<typeof createApp>;
let aliceKey = '';
let bobKey = '';
let agent = '';
let alice = '';

beforeAll(async () => {
  ({ mem: mem, ledger } = await testMemory(
    withReadModel(await MemoryBackend.open()),
    'graph-search-edge',
  ));
  ({ id: alice, apiKey: aliceKey } = await mem.createPrincipal('user', 'alice'));
  bobKey = (await mem.createPrincipal('user', 'bob')).apiKey;
  agent = (await mem.createPrincipal('agent', 'peer')).id;
  await payeeGraph(graphWriter(ledger, alice), alice);
  app = createApp({
    memory: mem,
    auth: { authenticate: (t) => mem.authenticate(t) },
    metrics: new Metrics(),
    logger: createLogger({ level: 'silent' }),
  });
}, 60_000);
afterAll(async () => {
  await mem.close();
  rmSync(dir, { recursive: true, force: true });
});

async function post(body: unknown, key = aliceKey) {
  const res = await app.request('/v1/graph/search', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

describe('POST /v1/graph/search (issue 19)', () => {
  it('clean: PPR selection, sealed and scored, the gate allows', async () => {
    const r = await post({ query: PAYEE_QUESTION, k: 3, action: 'send_money' });
    expect(r.status).toBe(200);
    expect(r.json.results.map((h: { name: string }) => h.name)).toContain('GoodIBAN');
    expect(r.json.authSelect).toMatchObject({ diverged: false, mode: 'clean' });
    expect(r.json.verdict.kind).toBe('allow');
    expect(parseSegments(r.json.context, r.json.seal)).toHaveLength(r.json.results.length);
  });

  it('another principal sees none of it', async () => {
    const r = await post({ query: PAYEE_QUESTION }, bobKey);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('INPUT_INVALID');
  });

  it('a compromised peer agent (edges derived from tool content): divergence, not allowed, authenticated selection returned', async () => {
    await payeeAttack(graphWriter(ledger, alice), agent, 'USER_OBSERVED', 'DERIVED_UNTRUSTED');
    const r = await post({ query: PAYEE_QUESTION, k: 3, action: 'send_money' });
    expect(r.status).toBe(200);
    expect(r.json.results.map((h: { name: string }) => h.name)).toContain('EvilIBAN');
    expect(r.json.authSelect.diverged).toBe(true);
    expect(r.json.verdict.kind).not.toBe('allow');
    const names = r.json.authSelect.authenticated.results.map((h: { name: string }) => h.name);
    expect(names).not.toContain('EvilIBAN');
    expect(names).toContain('GoodIBAN');
    // Every selector is reachable.
    for (const selector of ['community', 'rrf']) {
      const s = await post({ query: PAYEE_QUESTION, selector });
      expect(s.status, selector).toBe(200);
      expect(s.json.selector).toBe(selector);
    }
  });

  it('malformed bodies are 400 INPUT_INVALID', async () => {
    for (const body of [
      { query: '' },
      { query: 'x', k: 0 },
      { query: 'x', selector: 'bfs' },
      { query: 'x', extra: 1 },
    ]) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.code).toBe('INPUT_INVALID');
    }
  });
});
