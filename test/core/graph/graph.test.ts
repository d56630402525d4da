import { describe, expect, it } from 'vitest';
import {
  GraphIndex,
  PPR_DAMPING,
  authSelect,
  authSelectPpr,
  communitySelect,
  divergenceAuthority,
  mulberry32,
  nodeDistanceRerank,
  personalizedPageRank,
  pprSelect,
  reciprocalRankFusion,
  resetVector,
  sameOrder,
  sameSet,
  topK,
} from '../../../src/core/graph/index.js';
import { decideByAuthority } from '../../../src/core/gate/index.js';

/** A random passage–entity graph (all authenticated) for differential tests. */
function randomGraph(seed: number, passages = 60, entities = 140, edges = 500): GraphIndex {
  const rnd = mulberry32(seed);
  const g = new GraphIndex();
  for (let i = 0; i < passages; i++) g.addNode(`p${i}`, 'passage', 'A');
  for (let i = 0; i < entities; i++) g.addNode(`e${i}`, 'entity', 'A');
  for (let i = 0; i < edges; i++) {
    const a = rnd() < 0.5 ? `p${Math.floor(rnd() * passages)}` : `e${Math.floor(rnd() * entities)}`;
    const b = `e${Math.floor(rnd() * entities)}`;
    if (a === b) continue;
    g.addEdge({ id: `c${i}`, a, b, weight: 0.5 + rnd(), authority: 'A' });
  }
  return g;
}

/** Naive dense PPR: explicit column-stochastic matrix, many iterations (the reference). */
function naivePpr(g: GraphIndex, which: 'full' | 'auth', seeds: number[], d = 0.5): number[] {
  const n = g.size;
  const W = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (const e of g.allEdges()) {
    if (which === 'auth' && !(e.authority === 'A' || e.authority === 'T')) continue;
    if (e.a === e.b) continue;
    W[e.a]![e.b]! += e.weight;
    W[e.b]![e.a]! += e.weight;
  }
  const s = new Array<number>(n).fill(0);
  for (const x of seeds) s[x]! += 1 / seeds.length;
  let p = [...s];
  for (let it = 0; it < 200; it++) {
    const q = s.map((x) => (1 - d) * x);
    for (let u = 0; u < n; u++) {
      const str = W[u]!.reduce((a, b) => a + b, 0);
      if (str === 0) for (let v = 0; v < n; v++) q[v]! += d * p[u]! * s[v]!;
      else for (let v = 0; v < n; v++) q[v]! += (d * p[u]! * W[u]![v]!) / str;
    }
    p = q;
  }
  return p;
}

describe('Personalized PageRank (AuthSelect App. C convention)', () => {
  it('pins damping 0.5 and matches a naive dense reference', () => {
    expect(PPR_DAMPING).toBe(0.5);
    for (const seed of [1, 2, 3]) {
      const g = randomGraph(seed);
      const seeds = [g.index('e3')!, g.index('e7')!];
      const r = personalizedPageRank(
        g.view('full'),
        resetVector(
          g.size,
          seeds.map((node) => ({ node, weight: 1 })),
        ),
      );
      const ref = naivePpr(g, 'full', seeds);
      let l1 = 0;
      for (let i = 0; i < g.size; i++) l1 += Math.abs(r.scores[i]! - ref[i]!);
      expect(l1).toBeLessThan(1e-7);
      expect(r.scores.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
      // The teleport floor (1 − d)·s cannot be lowered by any edge (App. C).
      for (const x of seeds) expect(r.scores[x]!).toBeGreaterThanOrEqual(0.5 * 0.5 - 1e-12);
    }
  });

  it('topK returns the k best and the margin to the next', () => {
    const s = Float64Array.from([0.1, 0.5, 0.3, 0.3, 0.05]);
    const r = topK(s, [0, 1, 2, 3, 4], 2);
    expect(r.nodes).toEqual([1, 2]);
    expect(r.gap).toBe(0);
    expect(topK(s, [0, 1], 5).gap).toBe(Infinity);
  });
});

describe('write provenance (Definition 1)', () => {
  it('an unauthenticated edge between authenticated nodes stays out of G_A', () => {
    const g = new GraphIndex();
    g.addNode('a', 'entity', 'A');
    g.addNode('b', 'entity', 'T');
    g.addEdge({ id: 'x', a: 'a', b: 'b', weight: 1, authority: 'U' });
    expect(g.view('full').targets.length).toBe(2);
    expect(g.view('auth').targets.length).toBe(0);
    expect(g.unauthenticatedCount).toBe(1);
    g.removeEdge('x');
    expect(g.unauthenticatedCount).toBe(0);
  });

  it('a clean index serves G as G_A and an unauthenticated write leaves G_A built', () => {
    const g = randomGraph(4);
    expect(g.view('auth')).toBe(g.view('full'));
    g.addEdge({ id: 'u1', a: 'e1', b: 'e2', weight: 1, authority: 'U' });
    const a1 = g.view('auth');
    g.addEdge({ id: 'u2', a: 'e3', b: 'e4', weight: 1, authority: 'U' });
    expect(g.view('auth')).toBe(a1); // incremental: no rebuild for an unauthenticated write
  });
});

describe('AuthSelect over PPR', () => {
  it('clean queries pay no replay', () => {
    const g = randomGraph(5);
    const r = authSelectPpr(g, {
      seeds: [{ node: g.index('e1')!, weight: 1 }],
      candidates: g.nodesOfKind('passage'),
      k: 5,
    });
    expect(r.mode).toBe('clean');
    expect(r.replayIterations).toBe(0);
    expect(r.diverged).toBe(false);
  });

  it('replay selects exactly what an independent PPR on G_A selects (differential, 60 graphs)', () => {
    let replayed = 0;
    let diverged = 0;
    for (let t = 0; t < 60; t++) {
      const rnd = mulberry32(100 + t);
      const g = randomGraph(200 + t);
      const seeds = [{ node: g.index(`e${Math.floor(rnd() * 140)}`)!, weight: 1 }];
      const q = { seeds, candidates: g.nodesOfKind('passage'), k: 5, ordered: t % 2 === 0 };
      const nU = 1 + Math.floor(rnd() * 8);
      for (let i = 0; i < nU; i++) {
        const b = rnd() < 0.5 ? `p${Math.floor(rnd() * 60)}` : `e${Math.floor(rnd() * 140)}`;
        const a = g.id(seeds[0]!.node);
        if (a !== b)
          g.addEdge({
            id: `u${i}`,
            a,
            b,
            weight: 1 + 4 * rnd(),
            authority: rnd() < 0.5 ? 'U' : 'BOTTOM',
          });
      }
      const r = authSelectPpr(g, q);
      const ref = pprSelect(g.view('auth'), q, { tol: 1e-13 });
      const same = q.ordered ? sameOrder : sameSet;
      expect(same(r.auth, ref.nodes)).toBe(true);
      const refFull = pprSelect(g.view('full'), q, { tol: 1e-13 });
      expect(same(r.full, refFull.nodes)).toBe(true);
      expect(r.diverged).toBe(!same(refFull.nodes, ref.nodes));
      if (r.mode === 'replayed') replayed++;
      if (r.diverged) diverged++;
    }
    expect(replayed).toBeGreaterThan(0);
    expect(diverged).toBeGreaterThan(0);
  });

  it('the degree-weighted certificate agrees with independent PPR on skewed graphs with isolated nodes', () => {
    for (let t = 0; t < 12; t++) {
      const rnd = mulberry32(900 + t);
      const g = new GraphIndex();
      for (let i = 0; i < 150; i++) g.addNode(`p${i}`, 'passage', 'A');
      for (let i = 0; i < 450; i++) g.addNode(`e${i}`, 'entity', 'A');
      const skew = (): number => Math.floor(450 * rnd() ** 2);
      let id = 0;
      for (let p = 0; p < 150; p++)
        for (let m = 0; m < 4; m++)
          g.addEdge({
            id: `c${id++}`,
            a: `p${p}`,
            b: `e${skew()}`,
            weight: 0.5 + rnd(),
            authority: 'A',
          });
      for (let r = 0; r < 900; r++) {
        const a = skew();
        const b = Math.floor(450 * rnd());
        if (a !== b)
          g.addEdge({
            id: `c${id++}`,
            a: `e${a}`,
            b: `e${b}`,
            weight: 0.5 + rnd(),
            authority: 'A',
          });
      }
      const seed = g.index(`e${Math.floor(450 * rnd())}`)!;
      const q = {
        seeds: [{ node: seed, weight: 1 }],
        candidates: g.nodesOfKind('passage'),
        k: 5,
        ordered: t % 2 === 1,
      };
      const ranked = pprSelect(g.view('full'), { ...q, k: 25 }).nodes;
      const victim = ranked[20 + (t % 5)]!;
      for (let i = 0; i < 4; i++)
        g.addEdge({
          id: `u${i}`,
          a: g.id(seed),
          b: g.id(victim),
          weight: 1 + 3 * rnd(),
          authority: 'U',
        });
      const r = authSelectPpr(g, q);
      const same = q.ordered ? sameOrder : sameSet;
      expect(same(r.auth, pprSelect(g.view('auth'), q, { tol: 1e-13 }).nodes)).toBe(true);
      expect(same(r.full, pprSelect(g.view('full'), q, { tol: 1e-13 }).nodes)).toBe(true);
    }
  });

  it('an oracle write diverges, AuthSelect restores the clean selection, and the gate routes it', () => {
    const g = randomGraph(9);
    const q = {
      seeds: [{ node: g.index('e5')!, weight: 1 }],
      candidates: g.nodesOfKind('passage'),
      k: 3,
    };
    const clean = pprSelect(g.view('full'), q).nodes;
    const wrong = pprSelect(g.view('full'), { ...q, k: 30 }).nodes[29]!;
    for (let i = 0; i < 6; i++)
      g.addEdge({ id: `atk${i}`, a: 'e5', b: g.id(wrong), weight: 10, authority: 'U' });
    const r = authSelectPpr(g, q);
    expect(r.full).toContain(wrong);
    expect(r.diverged).toBe(true);
    expect(sameSet(r.auth, clean)).toBe(true);
    const have = divergenceAuthority(g, r.full, r.diverged);
    expect(have).toBe('U');
    expect(decideByAuthority('U', have).kind).toBe('allow'); // advisory: substitution is the caller's
    expect(decideByAuthority('A', have, { mode: 'require_user' }).kind).toBe('require_user');
    expect(
      decideByAuthority('A', have, {
        mode: 'repair_and_retry',
        repairedArguments: { target: r.auth[0] },
      }).kind,
    ).toBe('repair_and_retry');
    expect(divergenceAuthority(g, r.auth, false)).toBe('A');
  });
});

describe('other selectors and the criterion', () => {
  it('community selection is deterministic and AuthSelect replays it on G_A', () => {
    const g = new GraphIndex();
    // two cliques of entities, each with passages; seed in clique A
    for (const c of ['a', 'b'])
      for (let i = 0; i < 6; i++) {
        g.addNode(`${c}e${i}`, 'entity', 'A');
        g.addNode(`${c}p${i}`, 'passage', 'A');
      }
    let id = 0;
    for (const c of ['a', 'b'])
      for (let i = 0; i < 6; i++) {
        g.addEdge({ id: `m${id++}`, a: `${c}p${i}`, b: `${c}e${i}`, weight: 1, authority: 'A' });
        for (let j = i + 1; j < 6; j++)
          g.addEdge({ id: `r${id++}`, a: `${c}e${i}`, b: `${c}e${j}`, weight: 1, authority: 'A' });
      }
    g.addEdge({ id: 'bridge', a: 'ae0', b: 'be0', weight: 0.2, authority: 'A' });
    const seed = g.index('ae1')!;
    const cands = g.nodesOfKind('passage');
    const sel = (view: ReturnType<GraphIndex['view']>) =>
      communitySelect(view, seed, cands, 6, { seed: 3 });
    const clean = sel(g.view('full'));
    expect(sel(g.view('full')).nodes).toEqual(clean.nodes);
    expect(clean.nodes.every((v) => g.id(v).startsWith('ap'))).toBe(true);
    // A dense unauthenticated write pulls the seed into clique B.
    for (let i = 0; i < 6; i++)
      g.addEdge({ id: `u${i}`, a: 'ae1', b: `be${i}`, weight: 6, authority: 'U' });
    const r = authSelect(g, (view) => sel(view));
    expect(r.diverged).toBe(true);
    expect(sameSet([...r.auth.nodes], [...clean.nodes])).toBe(true);
  });

  it('RRF has no structural term; node-distance rerank never leaves its content pool', () => {
    expect(
      reciprocalRankFusion([
        ['x', 'y', 'z'],
        ['y', 'x'],
      ]).map((r) => r.item),
    ).toEqual(['x', 'y', 'z']);
    const g = randomGraph(12);
    const pool = [0, 1, 2, 3, 4].map((node, i) => ({ node, contentScore: 1 - i * 0.1 }));
    const before = nodeDistanceRerank(g.view('full'), pool, g.index('e1')!, 3).nodes;
    for (let i = 0; i < 10; i++)
      g.addEdge({ id: `u${i}`, a: 'e1', b: `p${10 + i}`, weight: 9, authority: 'U' });
    const after = nodeDistanceRerank(g.view('full'), pool, g.index('e1')!, 3).nodes;
    expect(after.every((v) => v <= 4)).toBe(true);
    expect(after).toEqual(before); // content margins (0.1) above the cap (0.05)
  });
});
