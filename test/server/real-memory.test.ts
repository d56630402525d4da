/**
 * The HTTP service in front of the real Memory (PGlite, real signatures and log): the routes
 * and shapes the checks name, end to end, in-process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64 } from '../../src/core/bytes.js';
import { leafHash, parseCheckpoint, verifyConsistency, verifyInclusion } from '../../src/core/merkle/index.js';
import { Memory } from '../../src/open.js';
import { createApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-http-'));
let mem: Memory;
let app: ReturnType<typeof createApp>;
let aliceKey = '';
let bobKey = '';
const metrics = new Metrics();

beforeAll(async () => {
  mem = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic', metrics });
  aliceKey = (await mem.createPrincipal('user', 'alice')).apiKey;
  bobKey = (await mem.createPrincipal('user', 'bob')).apiKey;
  app = createApp({
    memory: mem,
    auth: { authenticate: (t) => mem.authenticate(t) },
    metrics,
    logger: createLogger({ level: 'silent' }),
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
  return { status: res.status, json: text.length > 0 && text.startsWith('{') ? (JSON.parse(text) as Record<string, any>) : {}, text };
}

describe('HTTP API on the real memory', () => {
  let id = '';

  it('adds and searches a memory; the record carries what recomputes its leaf', async () => {
    const add = await call('POST', '/v1/memories', aliceKey, { content: 'Alice takes her coffee black', source: 'chat:1:2' });
    expect(add.status).toBe(201);
    id = add.json.id as string;
    expect(typeof add.json.leafIndex).toBe('number');
    const lh = Buffer.from(leafHash(fromBase64(add.json.leafData as string))).toString('base64');
    const proof = await call('GET', `/v1/memories/${id}/proof`, aliceKey);
    expect(proof.status).toBe(200);
    expect(proof.json.leafHash).toBe(lh);
    const cp = parseCheckpoint((proof.json.checkpoint.note as string).split('\n\n')[0] + '\n');
    expect(
      verifyInclusion(proof.json.leafIndex, proof.json.treeSize, fromBase64(proof.json.leafHash), (proof.json.hashes as string[]).map(fromBase64), cp.root),
    ).toBe(true);
    const s = await call('POST', '/v1/memories/search', aliceKey, { query: 'coffee', limit: 3 });
    expect(s.status).toBe(200);
    expect((s.json.results as { memory: { id: string } }[])[0]?.memory.id).toBe(id);
    expect(s.json.context).toContain(`[BEGIN MEMORY entry_id=${id}`);
  });

  it('isolates principals, by search and by id', async () => {
    expect((await call('GET', `/v1/memories/${id}`, bobKey)).status).toBe(404);
    expect((await call('GET', `/v1/memories/${id}/proof`, bobKey)).status).toBe(404);
    const s = await call('POST', '/v1/memories/search', bobKey, { query: 'coffee' });
    expect(s.json.results).toEqual([]);
    expect((await call('DELETE', `/v1/memories/${id}`, bobKey)).status).toBe(404);
  });

  it('refuses unauthenticated and malformed requests with coded 4xx and writes nothing', async () => {
    const size = mem.ledger.size;
    expect((await call('POST', '/v1/memories', null, { content: 'x' })).status).toBe(401);
    expect((await call('POST', '/v1/memories', 'mwk_wrong_key_123', { content: 'x' })).status).toBe(401);
    expect((await call('POST', '/v1/memories', aliceKey, { content: 'x', extra: 1 })).status).toBe(400);
    expect((await call('POST', '/v1/memories', aliceKey, { content: 'x'.repeat(70_000) })).status).toBe(413);
    const op = await call('POST', '/v1/memories', aliceKey, { content: 'policy', tier: 'OPERATOR' });
    expect(op.status).toBe(403);
    expect(op.json.error.code).toBe('AUTH_FORBIDDEN');
    expect(mem.ledger.size).toBe(size);
  });

  it('serves checkpoints and consistency proofs that verify', async () => {
    const c1 = await call('GET', '/v1/log/checkpoint', aliceKey);
    expect(c1.status).toBe(200);
    await call('POST', '/v1/memories', aliceKey, { content: 'Alice is learning Portuguese' });
    const c2 = await call('GET', '/v1/log/checkpoint', aliceKey);
    expect(c2.json.size).toBe(c1.json.size + 1);
    const cons = await call('GET', `/v1/log/consistency?from=${c1.json.size}&to=${c2.json.size}`, aliceKey);
    expect(cons.status).toBe(200);
    expect(
      verifyConsistency(c1.json.size, c2.json.size, (cons.json.hashes as string[]).map(fromBase64), fromBase64(c1.json.root), fromBase64(c2.json.root)),
    ).toBe(true);
  });

  it('deletes with a tombstone and exposes metrics with the article names', async () => {
    expect((await call('DELETE', `/v1/memories/${id}`, aliceKey)).status).toBe(200);
    expect((await call('GET', `/v1/memories/${id}`, aliceKey)).status).toBe(404);
    const m = await call('GET', '/metrics', null);
    for (const name of ['memory_writes_total', 'memory_writes_rejected_total', 'memory_reads_total', 'memory_entries_current']) {
      expect(m.text).toContain(name);
    }
  });
});
