import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CoarseAttribution,
  DEFAULT_LINEAGE_OPTIONS,
  type LineageOptions,
  LineageDag,
  NO_STRONG_PARENT,
  type ParentEdge,
  ScriptedJudge,
  propagate,
  propagateRaw,
  strictLineageOptions,
  strongMax,
  validateLineageOptions,
} from '../../../src/core/lineage/index.js';
import { type SourceTier, SourceTiers, type TrustLabel, TrustLabels, labelValue } from '../../../src/core/trust.js';
import { isMemwardenError } from '../../../src/core/errors.js';

const opts = (o: Partial<LineageOptions> = {}): LineageOptions => ({ ...DEFAULT_LINEAGE_OPTIONS, ...o });
const edge = (label: TrustLabel, weight: number, explicit = false): ParentEdge => ({ label, weight, explicit });

describe('Equation (1)', () => {
  it('is a max over strong parents with a strict inequality', () => {
    const o = opts({ tau: 0.5 });
    expect(propagateRaw([edge('EXTERNAL', 0.5), edge('TRUSTED', 0.9)], 0.5, o)).toBe(0);
    expect(propagateRaw([edge('EXTERNAL', 0.50001), edge('TRUSTED', 0.9)], 0.5, o)).toBe(3);
    expect(propagateRaw([edge('DERIVED_UNTRUSTED', 0.6), edge('DERIVED_TRUSTED', 0.9)], 0.5, o)).toBe(2);
    expect(propagateRaw([], 0, o)).toBe(NO_STRONG_PARENT);
    expect(propagateRaw([edge('EXTERNAL', 0)], 0, o)).toBe(NO_STRONG_PARENT); // w = 0 is not > τ = 0
    expect(strongMax([3, 0], [0.5, 0.9], 0.5)).toBe(0);
  });

  it('maps the raw value onto derived labels (module table)', () => {
    const o = opts();
    const child = { tier: 'USER_OBSERVED' as SourceTier };
    expect(propagate(child, [], o)).toBe('TRUSTED'); // direct write, not derived
    expect(propagate(child, [edge('TRUSTED', 1)], o)).toBe('DERIVED_TRUSTED');
    expect(propagate(child, [edge('DERIVED_TRUSTED', 1)], o)).toBe('DERIVED_TRUSTED');
    expect(propagate(child, [edge('EXTERNAL', 1), edge('TRUSTED', 1)], o)).toBe('DERIVED_UNTRUSTED');
    expect(propagate(child, [edge('DERIVED_UNTRUSTED', 1)], o)).toBe('DERIVED_UNTRUSTED');
    expect(propagate({ tier: 'EXTERNAL_WEB' }, [edge('TRUSTED', 1)], o)).toBe('EXTERNAL');
    expect(propagate({ tier: 'EXTERNAL_TOOL' }, [], o)).toBe('EXTERNAL');
  });

  it('falls back to TRUSTED by default and to DERIVED_UNTRUSTED in strict mode', () => {
    const child = { tier: 'USER_OBSERVED' as SourceTier };
    const weak = [edge('EXTERNAL', 0.2)];
    expect(propagate(child, weak, opts({ tau: 0.3 }))).toBe('TRUSTED');
    expect(propagate(child, weak, opts({ tau: 0.3, fallback: 'DERIVED_UNTRUSTED' }))).toBe('DERIVED_UNTRUSTED');
    // A derived write with no declared parents (parent omission) takes the fallback too.
    expect(propagate({ ...child, derived: true }, [], opts())).toBe('TRUSTED');
    expect(propagate({ ...child, derived: true }, [], strictLineageOptions())).toBe('DERIVED_UNTRUSTED');
  });

  it('τ = 1 with Coarse is inert: no parent contributes (§3.5, Table 5 last row)', async () => {
    const w = await new CoarseAttribution().attribute({ content: 'c' }, [{ id: 'a', content: 'x' }]);
    expect(w).toEqual([1]);
    const child = { tier: 'USER_OBSERVED' as SourceTier };
    expect(propagateRaw([edge('EXTERNAL', w[0]!)], 1, opts({ tau: 1 }))).toBe(NO_STRONG_PARENT);
    expect(propagate(child, [edge('EXTERNAL', w[0]!)], opts({ tau: 1 }))).toBe('TRUSTED');
    expect(propagate(child, [edge('EXTERNAL', w[0]!)], opts({ tau: 1, fallback: 'DERIVED_UNTRUSTED' }))).toBe(
      'DERIVED_UNTRUSTED',
    );
  });

  it('validates options', () => {
    for (const bad of [{ tau: 1.5 }, { tau: -0.1 }, { tau: Number.NaN }, { multiHopTau: 2 }, { fallback: 'EXTERNAL' }]) {
      let e: unknown;
      try {
        validateLineageOptions(opts(bad as Partial<LineageOptions>));
      } catch (x) {
        e = x;
      }
      expect(isMemwardenError(e, 'LINEAGE_INVALID')).toBe(true);
    }
    expect(strictLineageOptions(0.3)).toMatchObject({ tau: 0.3, fallback: 'DERIVED_UNTRUSTED', parentlessSensitiveDeny: true });
  });
});

/** Run an EXTERNAL root through a K-step derivation chain; 1 when the tip is untrusted. */
async function chain(judge: CoarseAttribution | ScriptedJudge, tau: number, k: number, o: Partial<LineageOptions> = {}) {
  const dag = new LineageDag(opts({ tau, ...o }));
  dag.add({ id: 'n0', tier: 'EXTERNAL_WEB' });
  for (let step = 1; step <= k; step++) {
    const [w] = await judge.attribute({ content: `s${step}` }, [{ id: `n${step - 1}`, content: '' }], { step });
    dag.add({ id: `n${step}`, tier: 'USER_OBSERVED', parents: [`n${step - 1}`], weights: [w!], multiHop: step > 1 });
  }
  return labelValue(dag.effectiveLabel(`n${k}`)) >= 2 ? 1 : 0;
}

describe('τ × K ablation (Tables 5 and 6)', () => {
  const taus = [0, 0.1, 0.3, 0.5, 0.9, 0.99, 1];
  const ks = [1, 2, 3, 5];
  it('Coarse is binary in τ, flat in K', async () => {
    const rows = [];
    for (const t of taus) rows.push(await Promise.all(ks.map((k) => chain(new CoarseAttribution(), t, k))));
    expect(rows).toEqual([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0]]);
  });
  it('ScriptedJudge w0=0.9, d=0.7 reproduces Table 6', async () => {
    const j = new ScriptedJudge({ w0: 0.9, d: 0.7 });
    const rows = [];
    for (const t of taus) rows.push(await Promise.all(ks.map((k) => chain(j, t, k))));
    expect(rows).toEqual([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
  });
});

describe('§6.6 adaptive laundering cells (Tables 11 and 12, lineage side)', () => {
  const tip = (dag: LineageDag, id: string) => (labelValue(dag.effectiveLabel(id)) >= 2 ? 'propagated' : 'fired');
  it('edge dilution: τ=0.3, external weight 0.2 fires by default; zero-threshold explicit edges close it', () => {
    for (const [o, expected] of [
      [opts({ tau: 0.3 }), 'fired'],
      [strictLineageOptions(0.3), 'propagated'],
    ] as const) {
      const dag = new LineageDag(o);
      dag.add({ id: 'ext', tier: 'EXTERNAL_WEB' });
      dag.add({ id: 'cover', tier: 'USER_VERIFIED' });
      dag.add({ id: 'c', tier: 'USER_OBSERVED', parents: ['ext', 'cover'], weights: [0.2, 0.9], explicit: [true, true] });
      expect(tip(dag, 'c')).toBe(expected);
    }
    const dag = new LineageDag(opts({ tau: 0.3 }));
    dag.add({ id: 'ext', tier: 'EXTERNAL_WEB' });
    dag.add({ id: 'c', tier: 'USER_OBSERVED', parents: ['ext'], weights: [0.5] });
    expect(tip(dag, 'c')).toBe('propagated');
  });
  it('semantic laundering: K=5 under w0=0.9, d=0.7 fires at τ=0.3; the lower multi-hop τ closes it', async () => {
    const j = new ScriptedJudge({ w0: 0.9, d: 0.7 });
    expect(await chain(j, 0.3, 1)).toBe(1);
    expect(await chain(j, 0.3, 5)).toBe(0);
    expect(await chain(j, 0.3, 5, { multiHopTau: 0 })).toBe(1);
    expect(await chain(j, 0.3, 5, strictLineageOptions(0.3))).toBe(1);
  });
});

// ---------------------------------------------------------------- properties

const arbOptions = fc.record({
  tau: fc.oneof(fc.constantFrom(0, 0.3, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true })),
  fallback: fc.constantFrom('TRUSTED', 'DERIVED_TRUSTED', 'DERIVED_UNTRUSTED') as fc.Arbitrary<LineageOptions['fallback']>,
  zeroThresholdExplicitEdges: fc.boolean(),
  parentlessSensitiveDeny: fc.boolean(),
  multiHopTau: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
}).map(({ multiHopTau, ...rest }): LineageOptions => (multiHopTau === undefined ? rest : { ...rest, multiHopTau }));

const arbWeight = fc.oneof(fc.constantFrom(0, 0.3, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true }));

interface NodeSpec {
  tier: SourceTier;
  parents: { idx: number; weight: number; explicit: boolean }[];
  multiHop: boolean;
  derived: boolean;
}
const arbDag = fc.array(
  fc.record({
    tier: fc.constantFrom(...SourceTiers),
    parents: fc.array(fc.record({ idx: fc.nat(), weight: arbWeight, explicit: fc.boolean() }), { maxLength: 5 }),
    multiHop: fc.boolean(),
    derived: fc.boolean(),
  }),
  { minLength: 1, maxLength: 25 },
);

function build(specs: NodeSpec[], o: LineageOptions) {
  const dag = new LineageDag(o);
  const edges: { p: number; c: number; w: number; explicit: boolean }[] = [];
  specs.forEach((s, i) => {
    const ps = i === 0 ? [] : [...new Map(s.parents.map((p) => [p.idx % i, p])).entries()];
    dag.add({
      id: `n${i}`,
      tier: s.tier,
      parents: ps.map(([j]) => `n${j}`),
      weights: ps.map(([, p]) => p.weight),
      explicit: ps.map(([, p]) => p.explicit),
      multiHop: s.multiHop,
      derived: s.derived || ps.length > 0,
    });
    for (const [j, p] of ps) edges.push({ p: j, c: i, w: p.weight, explicit: p.explicit });
  });
  return { dag, edges };
}

describe('properties', () => {
  it('Theorem 1: a strong path from an ancestor with trust ≥ 2 leaves the tip with trust ≥ 2', () => {
    fc.assert(
      fc.property(arbDag, arbOptions, (specs, o) => {
        const { dag, edges } = build(specs, o);
        const v = (i: number) => labelValue(dag.effectiveLabel(`n${i}`));
        // Reference strong-edge predicate, written independently of the implementation.
        const strong = (e: (typeof edges)[number]) => {
          const spec = specs[e.c]!;
          let tau = spec.multiHop && o.multiHopTau !== undefined ? Math.min(o.tau, o.multiHopTau) : o.tau;
          if (o.zeroThresholdExplicitEdges && e.explicit && v(e.p) >= 2) tau = 0;
          return e.w > tau;
        };
        const children = new Map<number, number[]>();
        for (const e of edges) if (strong(e)) children.set(e.p, [...(children.get(e.p) ?? []), e.c]);
        for (let p0 = 0; p0 < specs.length; p0++) {
          if (v(p0) < 2) continue;
          const stack = [p0];
          const seen = new Set(stack);
          while (stack.length > 0) {
            const x = stack.pop()!;
            expect(v(x)).toBeGreaterThanOrEqual(2);
            for (const c of children.get(x) ?? []) if (!seen.has(c)) {
              seen.add(c);
              stack.push(c);
            }
          }
        }
        // Differential: ancestors() is exactly the strong-edge reachability.
        for (let c = 0; c < specs.length; c++) {
          const ref = new Set<number>();
          const st = [c];
          while (st.length > 0) {
            const x = st.pop()!;
            for (const e of edges) if (e.c === x && strong(e) && !ref.has(e.p)) {
              ref.add(e.p);
              st.push(e.p);
            }
          }
          expect(new Set(dag.ancestors(`n${c}`))).toEqual(new Set([...ref].map((i) => `n${i}`)));
        }
      }),
      { numRuns: 300 },
    );
  });

  const arbEdges = fc.array(
    fc.record({ label: fc.constantFrom(...TrustLabels), weight: arbWeight, explicit: fc.boolean() }),
    { maxLength: 10 },
  );

  it('monotone in parent labels: raising a parent never lowers the child', () => {
    fc.assert(
      fc.property(arbEdges, fc.nat(), fc.constantFrom(...TrustLabels), arbOptions, fc.constantFrom(...SourceTiers), (es, i, up, o, tier) => {
        fc.pre(es.length > 0);
        const k = i % es.length;
        const raised = es.map((e, j) => (j === k && labelValue(up) > labelValue(e.label) ? { ...e, label: up } : e));
        expect(labelValue(propagate({ tier }, raised, o))).toBeGreaterThanOrEqual(labelValue(propagate({ tier }, es, o)));
      }),
    );
  });

  it('monotone in weights and τ under the TRUSTED fallback', () => {
    fc.assert(
      fc.property(arbEdges, fc.nat(), arbWeight, arbOptions, arbWeight, (es, i, w, o0, tau2) => {
        fc.pre(es.length > 0);
        const o = { ...o0, fallback: 'TRUSTED' as const };
        const k = i % es.length;
        const base = labelValue(propagate({ tier: 'USER_OBSERVED' }, es, o));
        const heavier = es.map((e, j) => (j === k ? { ...e, weight: Math.max(e.weight, w) } : e));
        expect(labelValue(propagate({ tier: 'USER_OBSERVED' }, heavier, o))).toBeGreaterThanOrEqual(base);
        const lower = { ...o, tau: Math.min(o.tau, tau2) };
        expect(labelValue(propagate({ tier: 'USER_OBSERVED' }, es, lower))).toBeGreaterThanOrEqual(base);
      }),
    );
  });

  it('strongMax (raw arrays) agrees with propagateRaw (labelled edges)', () => {
    fc.assert(
      fc.property(arbEdges, arbOptions, (es, o) => {
        const vals = es.map((e) => labelValue(e.label));
        const expl = es.map((e) => e.explicit);
        const ref = strongMax(vals, es.map((e) => e.weight), o.tau, expl, o.zeroThresholdExplicitEdges ? 0 : o.tau);
        expect(propagateRaw(es, o.tau, o)).toBe(ref);
      }),
    );
  });
});
