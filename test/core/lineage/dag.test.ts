import { describe, expect, it } from 'vitest';
import { DEFAULT_LINEAGE_OPTIONS, LineageDag, strictLineageOptions } from '../../../src/core/lineage/index.js';
import { type ErrorCode, isMemwardenError } from '../../../src/core/errors.js';

function code(fn: () => unknown): ErrorCode | undefined {
  try {
    fn();
  } catch (e) {
    if (isMemwardenError(e)) return e.code;
    throw e;
  }
  return undefined;
}

describe('LineageDag', () => {
  const base = () => {
    const dag = new LineageDag({ ...DEFAULT_LINEAGE_OPTIONS, tau: 0.3 });
    dag.add({ id: 'web', tier: 'EXTERNAL_WEB', ts: 1 });
    dag.add({ id: 'user', tier: 'USER_VERIFIED', ts: 2 });
    return dag;
  };

  it('propagates labels at insertion and walks strong edges only', () => {
    const dag = base();
    expect(dag.add({ id: 's1', tier: 'USER_OBSERVED', parents: ['web', 'user'], weights: [0.9, 0.1], ts: 3 })).toBe(
      'DERIVED_UNTRUSTED',
    );
    expect(dag.add({ id: 's2', tier: 'USER_OBSERVED', parents: ['s1'], weights: [0.3], ts: 4 })).toBe('TRUSTED'); // w = τ: weak
    dag.add({ id: 's3', tier: 'USER_OBSERVED', parents: ['s1', 'user'], weights: [1, 1], ts: 5 });
    expect(dag.effectiveLabel('s3')).toBe('DERIVED_UNTRUSTED');
    expect(dag.ancestors('s3')).toEqual(['s1', 'user', 'web']);
    expect(dag.ancestors('s2')).toEqual([]);
    expect(dag.ancestors('s1')).toEqual(['web']);
    expect(dag.isParentless('user')).toBe(true);
    expect(dag.isParentless('s1')).toBe(false);
    expect(dag.get('s1')?.strong).toEqual([true, false]);
    expect(dag.size).toBe(5);
  });

  it('rejects self-edges and re-adding (which could close a cycle) as LINEAGE_CYCLE', () => {
    const dag = base();
    expect(code(() => dag.add({ id: 'x', tier: 'USER_OBSERVED', parents: ['x'], weights: [1] }))).toBe('LINEAGE_CYCLE');
    dag.add({ id: 'c', tier: 'USER_OBSERVED', parents: ['user'], weights: [1], ts: 9 });
    // Re-adding `user` with `c` as parent would make user → c → user.
    expect(code(() => dag.add({ id: 'user', tier: 'USER_OBSERVED', parents: ['c'], weights: [1] }))).toBe('LINEAGE_CYCLE');
  });

  it('rejects unknown / duplicate parents, bad weights and non-increasing timestamps as LINEAGE_INVALID', () => {
    const dag = base();
    const bad = [
      { id: 'a', tier: 'USER_OBSERVED', parents: ['nope'], weights: [1] },
      { id: 'a', tier: 'USER_OBSERVED', parents: ['web', 'web'], weights: [1, 1] },
      { id: 'a', tier: 'USER_OBSERVED', parents: ['web'], weights: [] },
      { id: 'a', tier: 'USER_OBSERVED', parents: ['web'], weights: [1.5] },
      { id: 'a', tier: 'USER_OBSERVED', parents: ['web'], weights: [Number.NaN] },
      { id: 'a', tier: 'USER_OBSERVED', parents: ['web'], weights: [-0.1] },
      { id: 'a', tier: 'USER_OBSERVED', parents: ['user'], weights: [1], ts: 2 },
      { id: 'a', tier: 'USER_OBSERVED', parents: ['web'], weights: [1], explicit: [] },
      { id: 'a', tier: 'NOPE', parents: [], weights: [] },
      { id: '', tier: 'USER_OBSERVED' },
    ] as const;
    for (const b of bad) expect(code(() => dag.add(b as never))).toBe('LINEAGE_INVALID');
    expect(code(() => dag.effectiveLabel('missing'))).toBe('LINEAGE_INVALID');
    expect(dag.size).toBe(2); // nothing half-added
  });

  it('strict fallback labels a derived entry without strong parents DERIVED_UNTRUSTED', () => {
    const dag = new LineageDag(strictLineageOptions(0.3));
    dag.add({ id: 'u', tier: 'USER_VERIFIED' });
    expect(dag.add({ id: 'd', tier: 'USER_OBSERVED', parents: ['u'], weights: [0.1] })).toBe('DERIVED_UNTRUSTED');
    expect(dag.add({ id: 'direct', tier: 'USER_OBSERVED' })).toBe('TRUSTED');
  });
});
