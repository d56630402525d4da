/* global WebAssembly, URL */
/**
 * ADR 0089 experiment (not shipped): the certified push's two relaxation kernels in WebAssembly
 * (`push.wat`: scalar `relax`, and `relaxPair` with G and G_A in the two f64x2 lanes of each
 * node), timed against the TypeScript kernels of `dist/core/graph/push.js` on the bench graph's
 * eight attacked queries, at the first relaxation level. Every WebAssembly state is first
 * checked bit for bit against the TypeScript one.
 *
 *   npm run build && npm i --no-save wabt@1.0.39 && node bench/experiments/wasm-push/run.mjs
 *
 * Prints per query the median CPU µs of each kernel (interleaved rounds) and the two ratios
 * pair/relax. `wabt` is not a dependency of the project: install it only to run this.
 */
import { readFileSync } from 'node:fs';
import { setup } from '../../graph.mjs';

const M = await import('../../../dist/core/graph/index.js');
const P = await import('../../../dist/core/graph/push.js');
let wabt;
try {
  wabt = await (await import('wabt')).default();
} catch {
  console.error('needs wabt: npm i --no-save wabt@1.0.39');
  process.exit(2);
}
const wat = readFileSync(new URL('./push.wat', import.meta.url), 'utf8');
const parsed = wabt.parseWat('push.wat', wat, { simd: true });
parsed.validate();
const mod = new WebAssembly.Module(parsed.toBinary({}).buffer);

/** Both views, the taint mask, paired states and seeds in one linear memory. */
function layout(views, n) {
  let off = 0;
  const al = (b) => {
    off = (off + 15) & ~15;
    const o = off;
    off += b;
    return o;
  };
  const vs = views.map((v) => ({
    v,
    off: al(4 * (n + 1)),
    tgt: al(4 * v.targets.length),
    wt: al(8 * v.targets.length),
    str: al(8 * n),
    inv: al(8 * n),
  }));
  const L = {
    vs,
    mask: al(n),
    p: al(16 * n),
    r: al(16 * n),
    sn: al(4 * n),
    sw: al(8 * n),
    out: al(16),
  };
  const mem = new WebAssembly.Memory({ initial: Math.ceil(off / 65536) + 1 });
  L.ex = new WebAssembly.Instance(mod, { env: { memory: mem } }).exports;
  L.b = mem.buffer;
  for (const x of vs) {
    new Int32Array(L.b, x.off, n + 1).set(x.v.offsets);
    new Int32Array(L.b, x.tgt, x.v.targets.length).set(x.v.targets);
    new Float64Array(L.b, x.wt, x.v.targets.length).set(x.v.weights);
    new Float64Array(L.b, x.str, n).set(x.v.strength);
    new Float64Array(L.b, x.inv, n).set(x.v.invStrength);
  }
  return L;
}

function compare(fns, rounds = 25, per = 8) {
  const names = Object.keys(fns);
  const t = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) for (let i = 0; i < 30; i++) fns[n]();
  for (let r = 0; r < rounds; r++)
    for (const n of names) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < per; i++) fns[n]();
      const c = process.cpuUsage(c0);
      t[n].push((c.user + c.system) / per);
    }
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  return Object.fromEntries(names.map((n) => [n, Math.round(med(t[n]))]));
}

const { attacked } = setup(M);
const d = 0.5;
for (let i = 0; i < attacked.length; i++) {
  const { g, q } = attacked[i];
  const full = g.view('full');
  const auth = g.view('auth');
  const n = full.n;
  const s = P.sparseReset(n, q.seeds);
  const eps = P.startLevel(full);
  const tainted = g.taintedNodes();
  const L = layout([full, auth], n);
  const [F, A] = L.vs;
  for (const t of tainted) new Uint8Array(L.b, L.mask, n)[t] = 1;
  new Int32Array(L.b, L.sn, s.nodes.length).set(s.nodes);
  new Float64Array(L.b, L.sw, s.nodes.length).set(s.weights);
  const p1 = new Float64Array(L.b, L.p, n);
  const r1 = new Float64Array(L.b, L.r, n);
  const p2 = new Float64Array(L.b, L.p, 2 * n);
  const r2 = new Float64Array(L.b, L.r, 2 * n);
  const init = () => {
    const p = new Float64Array(n);
    const r = new Float64Array(n);
    for (let j = 0; j < s.nodes.length; j++) r[s.nodes[j]] = s.weights[j];
    return [p, r];
  };
  const wRelax = () => {
    p1.fill(0);
    r1.fill(0);
    for (let j = 0; j < s.nodes.length; j++) r1[s.nodes[j]] = s.weights[j];
    return L.ex.relax(
      n,
      F.off,
      F.tgt,
      F.wt,
      F.str,
      F.inv,
      L.p,
      L.r,
      d,
      eps,
      L.sn,
      L.sw,
      s.nodes.length,
    );
  };
  const wPair = () => {
    p2.fill(0);
    r2.fill(0);
    for (let j = 0; j < s.nodes.length; j++) {
      r2[2 * s.nodes[j]] = s.weights[j];
      r2[2 * s.nodes[j] + 1] = s.weights[j];
    }
    L.ex.relaxPair(
      n,
      F.off,
      F.tgt,
      F.wt,
      F.str,
      F.inv,
      A.off,
      A.tgt,
      A.wt,
      A.str,
      A.inv,
      L.mask,
      L.p,
      L.r,
      d,
      eps,
      L.sn,
      L.sw,
      s.nodes.length,
      L.out,
    );
  };
  // Bit for bit against the TypeScript kernels.
  const [pj, rj] = init();
  const wj = P.relax(full, pj, rj, d, eps, s);
  let same = wj === wRelax();
  for (let v = 0; v < n; v++)
    if (!Object.is(pj[v], p1[v]) || !Object.is(rj[v], r1[v])) same = false;
  const [pG, rG] = init();
  const [pA, rA] = init();
  const wp = P.relaxPair(full, auth, tainted, pG, rG, pA, rA, d, eps, s);
  wPair();
  for (let v = 0; v < n; v++)
    if (
      pG[v] !== p2[2 * v] ||
      rG[v] !== r2[2 * v] ||
      pA[v] !== p2[2 * v + 1] ||
      rA[v] !== r2[2 * v + 1]
    )
      same = false;
  const wo = new Float64Array(L.b, L.out, 2);
  same = same && wo[0] === wp.g && wo[1] === wp.a;
  if (!same) throw new Error(`query ${i}: WebAssembly state differs from the TypeScript kernel`);
  const res = compare({
    tsRelax: () => {
      const [p, r] = init();
      P.relax(full, p, r, d, eps, s);
    },
    tsPair: () => {
      const [p, r] = init();
      const [pa, ra] = init();
      P.relaxPair(full, auth, tainted, p, r, pa, ra, d, eps, s);
    },
    wasmRelax: wRelax,
    wasmPair: wPair,
  });
  console.log(
    `query ${i}: identical states; CPU µs ${JSON.stringify(res)}; pair/relax TS ${(res.tsPair / res.tsRelax).toFixed(2)}, WASM ${(res.wasmPair / res.wasmRelax).toFixed(2)}; TS relax / WASM relax ${(res.tsRelax / res.wasmRelax).toFixed(2)}`,
  );
}
