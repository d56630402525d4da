/**
 * Issue 19: smoothed retrieval on the product's read path. "`Memory.search` … never smooth[s]
 * and return[s] no certificate": `Memory.search(q, { smoothing })` returns the ablated contexts,
 * their seals and the Theorem 2 certificate of the pool actually retrieved; `voteSmoothed`
 * aggregates the caller's verdicts with the strict majority rule.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/adapters/memory/index.js';
import { isMemwardenError } from '../../src/core/errors.js';
import { parseSegments } from '../../src/core/render/sentinel.js';
import { certificate, planPoolSize, type Verdict } from '../../src/core/smsr/index.js';
import type { Memory } from '../../src/memory/memory.js';
import { withReadModel } from '../../src/memory/read/read-model.js';
import { voteSmoothed } from '../../src/memory/read/smoothing.js';
import { testMemory } from './helpers-memory.js';

const FACTS = [
  'The office opens at eight in the morning',
  'Invoices above five thousand dollars need the CFO',
  'The VPN gateway is vpn.example.com',
  'Alice prefers tea over coffee',
  'The quarterly review is in March',
  'Bob manages the Berlin warehouse',
  'The wifi password rotates every month',
  'Parking permits are issued by facilities',
  'The build server runs on Debian',
  'Expense reports are due by the fifth',
  'The cafeteria closes at three',
  'Security badges must be worn visibly',
  'The staging database is refreshed nightly',
  'Travel must be booked through the portal',
  'The support rota changes on Mondays',
  'Contracts are stored in the legal vault',
  'New hires get a laptop on day one',
  'The London office has twelve desks',
  'Backups are kept for ninety days',
  'The fire drill is on the first Friday',
  'Printing in colour needs approval',
  'The design team uses Figma',
  'The API rate limit is one hundred per second',
  'Holiday requests go to the line manager',
  'The main branch is protected',
];

let open: Memory | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function memoryWithFacts(): Promise<{ mem: Memory; principal: string; ids: string[] }> {
  const { mem } = await testMemory(withReadModel(await MemoryBackend.open()), 'smoothed-search');
  open = mem;
  const { id: principal } = await mem.createPrincipal('user', 'alice');
  const ids: string[] = [];
  for (const f of FACTS) {
    const r = await mem.add(f, { principal });
    if (r.status !== 'stored') throw new Error(`fixture write held: ${r.reasons.join(',')}`);
    ids.push(r.memory.id);
  }
  return { mem, principal, ids };
}

describe('Memory.search with smoothing (issue 19)', () => {
  it('returns the verified pool, runs ablated sealed contexts of k distinct pool members, and the certificate', async () => {
    const { mem, principal, ids } = await memoryWithFacts();
    const r = await mem.search('who approves invoices', {
      principal,
      smoothing: { m: 21, k: 5, runs: 5 },
    });
    const s = r.smoothing;
    expect(s).toBeDefined();
    if (s === undefined) return;
    expect(r.results).toHaveLength(21);
    expect(r.context).toBe(''); // never the unsmoothed pool in one prompt
    expect(s.poolSize).toBe(21);
    expect(s.contexts).toHaveLength(5);
    const pool = new Set(r.results.map((h) => h.memory.id));
    const seals = new Set<string>();
    for (const c of s.contexts) {
      expect(c.ids).toHaveLength(5);
      expect(new Set(c.ids).size).toBe(5);
      for (const id of c.ids) expect(pool.has(id)).toBe(true);
      for (const id of c.ids) expect(ids).toContain(id);
      // Each context parses under its own seal and holds exactly its ids.
      expect(parseSegments(c.context, c.seal).map((x) => x.id)).toEqual(c.ids);
      seals.add(c.seal);
    }
    expect(seals.size).toBe(5);
    const want = certificate(1, 21, 5, 5);
    expect(s.certificate?.delta).toBe(want.delta);
    expect(s.certificate?.exact).toEqual({
      num: want.exact.num.toString(),
      den: want.exact.den.toString(),
    });
    expect(s.certified).toBe(true);
  });

  it('plans m from a target delta and budget t, and certifies against the pool it got', async () => {
    const { mem, principal } = await memoryWithFacts();
    const plan = planPoolSize(1, 0.25, 3, 5);
    const r = await mem.search('office hours', {
      principal,
      smoothing: { delta: 0.25, t: 1, k: 3, runs: 5 },
    });
    expect(r.smoothing?.m).toBe(plan.m);
    expect(r.smoothing?.target).toBe(0.25);
    expect(r.smoothing?.certificate?.delta).toBeLessThanOrEqual(0.25);
    expect(r.smoothing?.certified).toBe(true);
    // A target the 25-entry pool cannot reach: the plan wants more than the store holds, and the
    // certificate for the smaller pool does not meet the target — reported, never claimed.
    const strict = await mem.search('office hours', {
      principal,
      smoothing: { delta: 0.001, t: 2, k: 5, runs: 7 },
    });
    const s = strict.smoothing;
    expect(s?.m).toBeGreaterThan(FACTS.length);
    expect(s?.poolSize).toBe(FACTS.length);
    expect(s?.certificate?.delta).toBeGreaterThan(0.001);
    expect(s?.certified).toBe(false);
  });

  it('draws uniform subsets: every pool member is drawn about k·runs/m times', async () => {
    const { mem, principal } = await memoryWithFacts();
    const counts = new Map<string, number>();
    const searches = 160;
    for (let i = 0; i < searches; i++) {
      const r = await mem.search('policies of the company', {
        principal,
        smoothing: { m: 10, k: 2, runs: 5 },
      });
      for (const c of r.smoothing?.contexts ?? [])
        for (const id of c.ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect(counts.size).toBe(10);
    const expected = (searches * 5 * 2) / 10; // 160
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(expected * 0.7);
      expect(n).toBeLessThan(expected * 1.3);
    }
  });

  it('refuses bad smoothing options with INPUT_INVALID and changes nothing', async () => {
    const { mem, principal } = await memoryWithFacts();
    for (const smoothing of [
      { m: 3, k: 5 },
      { m: 0 },
      { m: 501 },
      { m: 21, runs: 0 },
      { m: 21, k: 2.5 },
      { delta: 0, t: 1 },
      { delta: 1.5, t: 1 },
      { delta: 0.1, t: -1 },
      { delta: 1e-300, t: 5 },
      { m: 21, delta: 0.1, t: 1 },
    ]) {
      const e = await mem.search('office', { principal, smoothing: smoothing as never }).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(isMemwardenError(e) && e.code, JSON.stringify(smoothing)).toBe('INPUT_INVALID');
    }
    expect((await mem.getAll({ principal })).length).toBe(FACTS.length);
  });

  it('an empty pool has no certificate and is not certified', async () => {
    const { mem } = await testMemory(withReadModel(await MemoryBackend.open()), 'smoothed-empty');
    open = mem;
    const { id: principal } = await mem.createPrincipal('user', 'bob');
    const r = await mem.search('anything', { principal, smoothing: { m: 21 } });
    expect(r.smoothing?.poolSize).toBe(0);
    expect(r.smoothing?.certificate).toBeUndefined();
    expect(r.smoothing?.certified).toBe(false);
    expect(r.smoothing?.contexts).toEqual([]);
    expect(voteSmoothed(r.smoothing!, []).safe).toBe(false);
  });
});

describe('voteSmoothed (strict majority, issue 19)', () => {
  it('returns the certified outcome of the caller verdicts', async () => {
    const { mem, principal } = await memoryWithFacts();
    const r = await mem.search('who approves invoices', {
      principal,
      smoothing: { m: 21, k: 5, runs: 5 },
    });
    const s = r.smoothing!;
    const v = (xs: Verdict[]) => voteSmoothed(s, xs);
    const bad = v(['malicious', 'malicious', 'malicious', 'correct', 'neither']);
    expect(bad.verdict).toBe('malicious');
    expect(bad.safe).toBe(false);
    expect(bad.index).toBe(0);
    const good = v(['malicious', 'correct', 'malicious', 'correct', 'correct']);
    expect(good.verdict).toBe('correct');
    expect(good.safe).toBe(true);
    expect(good.index).toBe(1);
    expect(good.ids).toEqual(s.contexts[1]!.ids);
    expect(good.certificate?.delta).toBe(s.certificate?.delta);
    // A malicious plurality below ⌈n/2⌉ does not win (2 of 5 against 1 + 2).
    expect(v(['malicious', 'malicious', 'neither', 'neither', 'correct']).verdict).toBe('neither');
    for (const wrong of [[], ['correct'], ['correct', 'correct', 'correct', 'correct', 'maybe']]) {
      let code: string | undefined;
      try {
        voteSmoothed(s, wrong as Verdict[]);
      } catch (e) {
        code = isMemwardenError(e) ? e.code : 'not coded';
      }
      expect(code).toBe('INPUT_INVALID');
    }
  });
});
