/**
 * `hasProtoKey`: the `__proto__` refusal of JSON bodies (server/request.ts) as a walk over the
 * parsed value instead of a `JSON.parse` reviver — the same verdict as the reviver for any
 * JSON text, at any depth, without recursion.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasProtoKey } from '../../src/server/request.js';

/** The previous check: a reviver that sees every key. */
function viaReviver(text: string): boolean {
  let found = false;
  JSON.parse(text, (k, v: unknown) => {
    if (k === '__proto__') found = true;
    return v;
  });
  return found;
}

describe('hasProtoKey', () => {
  it('finds an own __proto__ key at any depth, however it was spelled', () => {
    for (const [text, want] of [
      ['{"__proto__":1}', true],
      ['{"a":[1,{"b":{"__proto__":{}}}]}', true],
      ['[{"\\u005f_proto__":null}]', true],
      ['{"a":"__proto__","b":["__proto__"]}', false],
      ['{"constructor":{"prototype":1},"proto":2}', false],
      ['[1,2,3]', false],
      ['"x"', false],
      ['null', false],
    ] as const) {
      expect(hasProtoKey(JSON.parse(text)), text).toBe(want);
      expect(viaReviver(text), text).toBe(want);
    }
  });

  it('walks deep nesting without recursion', () => {
    const deep = `${'['.repeat(20_000)}{"__proto__":0}${']'.repeat(20_000)}`;
    expect(hasProtoKey(JSON.parse(deep))).toBe(true);
    expect(hasProtoKey(JSON.parse(`${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`))).toBe(false);
  });

  it('agrees with the reviver on arbitrary JSON with hostile keys', () => {
    type J = null | number | string | boolean | J[] | { readonly kv: [string, J][] };
    const render = (j: J): string =>
      Array.isArray(j)
        ? `[${j.map(render).join(',')}]`
        : typeof j === 'object' && j !== null
          ? `{${j.kv.map(([k, v]) => `${JSON.stringify(k)}:${render(v)}`).join(',')}}`
          : JSON.stringify(j);
    const key = fc.oneof(
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'a'),
      fc.string({ maxLength: 4 }),
    );
    const { v } = fc.letrec<{ v: J }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.boolean(), fc.constant(null)),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.record({ kv: fc.array(fc.tuple(key, tie('v')), { maxLength: 4 }) }),
      ),
    }));
    fc.assert(
      fc.property(v, (j) => {
        const text = render(j);
        expect(hasProtoKey(JSON.parse(text))).toBe(viaReviver(text));
      }),
      { numRuns: 500 },
    );
  });
});
