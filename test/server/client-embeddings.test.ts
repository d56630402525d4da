/**
 * Client-supplied embeddings over HTTP (ADR 0012): refused unless the server opts in; when on,
 * the vector is checked (dimension, finite, non-zero) before anything is written, and it is
 * what ranks the search.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Memory } from '../../src/open.js';
import { createApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-vec-'));
let mem: Memory;
let key = '';
let alice = '';
const apps: Record<'on' | 'off', ReturnType<typeof createApp>> = {} as never;

/** A unit vector along axis `i` (plus a small constant so it is not too sparse). */
function axis(i: number, dims = 384): number[] {
  const v = Array.from({ length: dims }, () => 0.01);
  v[i] = 1;
  return v;
}

beforeAll(async () => {
  mem = await Memory.open({ dataDir: dir, ephemeral: true, embedder: 'deterministic' });
  const p = await mem.createPrincipal('user', 'alice');
  key = p.apiKey;
  alice = p.id;
  for (const mode of ['on', 'off'] as const) {
    const metrics = new Metrics();
    apps[mode] = createApp({
      memory: mem,
      auth: { authenticate: (t) => mem.authenticate(t) },
      metrics,
      logger: createLogger({ level: 'silent' }),
      clientEmbeddings: mode === 'on',
    });
  }
}, 60_000);
afterAll(async () => {
  await mem.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(mode: 'on' | 'off', path: string, body: unknown) {
  const res = await apps[mode].request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}
const count = async () => (await mem.getAll({ principal: alice })).length;

describe('client embeddings over HTTP', () => {
  it('are refused by default, and nothing is written', async () => {
    const before = await count();
    const add = await call('off', '/v1/memories', { content: 'Alice likes tea', embedding: axis(3) });
    expect(add.status).toBe(400);
    expect(add.json.error.code).toBe('INPUT_INVALID');
    const s = await call('off', '/v1/memories/search', { query: 'tea', embedding: axis(3) });
    expect(s.status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('when accepted, a wrong dimension or a zero vector changes nothing', async () => {
    const before = await count();
    for (const embedding of [axis(3, 383), axis(3, 385), Array.from({ length: 384 }, () => 0)]) {
      const add = await call('on', '/v1/memories', { content: 'Alice likes green tea', embedding });
      expect(add.status).toBe(400);
      expect(add.json.error.code).toBe('INPUT_INVALID');
      const s = await call('on', '/v1/memories/search', { query: 'tea', embedding });
      expect(s.status).toBe(400);
    }
    const notNumbers = await call('on', '/v1/memories', { content: 'x', embedding: ['a'] });
    expect(notNumbers.status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('when accepted, the sent vectors are stored and rank the search', async () => {
    const a = await call('on', '/v1/memories', { content: 'Alice parks on level 3', embedding: axis(10) });
    const b = await call('on', '/v1/memories', { content: 'Alice swims on Tuesdays', embedding: axis(200) });
    expect([a.status, b.status]).toEqual([201, 201]);
    // The query text says "parks"; the vector points at the swimming entry: the vector ranks.
    const s = await call('on', '/v1/memories/search', { query: 'where does Alice park', limit: 1, ranking: 'vector', embedding: axis(200) });
    expect(s.status).toBe(200);
    expect(s.json.results.map((r: any) => r.memory.id)).toEqual([b.json.id]);
    const s2 = await call('on', '/v1/memories/search', { query: 'where does Alice park', limit: 1, ranking: 'vector', embedding: axis(10).map((x) => x * 7) });
    expect(s2.json.results.map((r: any) => r.memory.id)).toEqual([a.json.id]);
    expect(s2.json.results[0].score).toBeGreaterThan(0.99); // normalised before ranking
  });
});
