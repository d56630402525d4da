/**
 * Issue 19 over HTTP: "`POST /v1/memories/search` … never smooth[s] and return[s] no
 * certificate". On the real memory (PGlite, real signatures): a smoothed search returns the
 * ablated sealed contexts and the certificate; the vote route gives the certified outcome from
 * the server's own arithmetic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSegments } from '../../src/core/render/sentinel.js';
import { certificate } from '../../src/core/smsr/index.js';
import { Memory } from '../../src/open.js';
import { createApp } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';

const dir = mkdtempSync(join(tmpdir(), 'mw-http-smsr-'));
let mem: Memory;
let app: ReturnType<typeof createApp>;
let key = '';

const FACTS = Array.from(
  { length: 24 },
  (_, i) =>
    `${['Alice', 'Bob', 'Carol', 'Dan', 'Erin', 'Frank'][i % 6]} owns ${['a red bike', 'two cats', 'a blue car', 'a boat', 'a violin', 'a garden'][Math.floor(i / 4) % 6]} number ${i}`,
);

beforeAll(async () => {
  mem = await Memory.open({
    dataDir: dir,
    ephemeral: true,
    embedder: 'deterministic',
    metrics: new Metrics(),
  });
  const p = await mem.createPrincipal('user', 'alice');
  key = p.apiKey;
  for (const f of FACTS) {
    const r = await mem.add(f, { principal: p.id });
    if (r.status !== 'stored') throw new Error('fixture held');
  }
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

async function post(path: string, body: unknown) {
  const res = await app.request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };  
}

describe('POST /v1/memories/search with smoothing (issue 19)', () => {
  it('returns the ablated contexts, their seals and the certificate', async () => {
    const r = await post('/v1/memories/search', {
      query: 'who owns a boat',
      smoothing: { m: 21, k: 5, runs: 5 },
    });
    expect(r.status).toBe(200);
    const s = r.json.smoothing;
    expect(s).toBeDefined();
    expect(r.json.results).toHaveLength(21);
    expect(r.json.context).toBe('');
    expect(s.poolSize).toBe(21);
    expect(s.contexts).toHaveLength(5);
    for (const c of s.contexts as { ids: string[]; context: string; seal: string }[]) {
      expect(c.ids).toHaveLength(5);
      expect(parseSegments(c.context, c.seal).map((x) => x.id)).toEqual(c.ids);
    }
    const want = certificate(1, 21, 5, 5);
    expect(s.certificate.delta).toBe(want.delta);
    expect(s.certificate.exact.den).toBe(want.exact.den.toString());
    expect(s.certified).toBe(true);

    // The vote route: the server recomputes the certificate from the parameters.
    const v = await post('/v1/memories/search/vote', {
      t: s.t,
      poolSize: s.poolSize,
      k: s.k,
      runs: s.runs,
      verdicts: ['correct', 'malicious', 'correct', 'neither', 'malicious'],
    });
    expect(v.status).toBe(200);
    expect(v.json.verdict).toBe('correct');
    expect(v.json.safe).toBe(true);
    expect(v.json.index).toBe(0);
    expect(v.json.certificate.delta).toBe(want.delta);
    const bad = await post('/v1/memories/search/vote', {
      t: 1,
      poolSize: 21,
      k: 5,
      runs: 5,
      verdicts: ['malicious', 'malicious', 'malicious', 'correct', 'correct'],
    });
    expect(bad.json.verdict).toBe('malicious');
    expect(bad.json.safe).toBe(false);
  });

  it('plans m from delta and t', async () => {
    const r = await post('/v1/memories/search', {
      query: 'who owns a violin',
      smoothing: { delta: 0.3, t: 1, k: 3, runs: 5 },
    });
    expect(r.status).toBe(200);
    expect(r.json.smoothing.target).toBe(0.3);
    expect(r.json.smoothing.certificate.delta).toBeLessThanOrEqual(0.3);
  });

  it('refuses malformed smoothing and verdicts with INPUT_INVALID (400)', async () => {
    for (const smoothing of [
      { m: 0 },
      { m: 5, k: 6 },
      { delta: 0.1 },
      { m: 5, delta: 0.1, t: 1 },
      { m: 5, extra: 1 },
    ]) {
      const r = await post('/v1/memories/search', { query: 'boat', smoothing });
      expect(r.status, JSON.stringify(smoothing)).toBe(400);
      expect(r.json.error.code).toBe('INPUT_INVALID');
    }
    for (const body of [
      { t: 1, poolSize: 21, k: 5, runs: 5, verdicts: ['correct'] },
      { t: 1, poolSize: 21, k: 5, runs: 5, verdicts: ['yes', 'no', 'x', 'y', 'z'] },
      { t: 1, poolSize: 0, k: 5, runs: 1, verdicts: ['correct'] },
    ]) {
      const r = await post('/v1/memories/search/vote', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.code).toBe('INPUT_INVALID');
    }
  });
});
