/**
 * Shared test fixtures for entry and tombstone records: a valid example, fast-check
 * arbitraries for valid records, the wire (generic CBOR) view used with the cbor2 oracle, and a
 * helper that writes maps in any key order.
 */
import fc from 'fast-check';
import { encodeCanonical } from '../../../src/core/codec/cbor.js';
import { MemwardenError, type ErrorCode } from '../../../src/core/errors.js';
import { PrincipalKinds, SourceTiers, TrustLabels } from '../../../src/core/trust.js';
import type { SignedEntry, SignedTombstone } from '../../../src/core/entry/types.js';
import { parseUuid, uuidv7 } from '../../../src/core/entry/uuidv7.js';

export const bytes = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);
export const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

export function codeOf(f: () => unknown): ErrorCode | 'OK' {
  try {
    f();
    return 'OK';
  } catch (e) {
    if (e instanceof MemwardenError) return e.code;
    throw e; // a raw error escaped
  }
}

let counter = 0;
/** A fresh deterministic UUIDv7. */
export function newId(ms = 1_700_000_000_000): string {
  counter++;
  return uuidv7(ms, Uint8Array.from([counter & 0xff, counter >> 8, 3, 4, 5, 6, 7, 8, 9, 10]));
}

export const WRITER = `agent:${'ab'.repeat(16)}`;
export const REVIEWER = `user:${'cd'.repeat(16)}`;

/** A typical valid signed entry (~300 chars of content, 2 parents, every optional field). */
export function sampleEntry(): SignedEntry {
  return {
    t: 'entry',
    v: 1,
    id: newId(),
    ns: 'tenant-42/agent-7',
    writer: WRITER,
    kid: '0123456789abcdef',
    kind: 'fact',
    content: 'The user prefers window seats on long-haul flights. '.repeat(6).slice(0, 300),
    tier: 'USER_OBSERVED',
    label: 'TRUSTED',
    src: bytes(32, 1),
    ctx: bytes(32, 2),
    uri: 'https://example.com/chat/123',
    parents: [newId(), newId()],
    weights: [1, 0.5],
    ts: 1_700_000_000_000_000_000n,
    exp: 1_800_000_000_000_000_000n,
    rev: REVIEWER,
    sup: newId(),
    nonce: bytes(16, 3),
    sig: bytes(64, 4),
  };
}

/** Just the required fields. */
export function minimalEntry(): SignedEntry {
  const { uri: _u, exp: _e, rev: _r, sup: _s, ...rest } = sampleEntry();
  return rest;
}

export function sampleTombstone(): SignedTombstone {
  return {
    t: 'tombstone',
    v: 1,
    id: newId(),
    target: newId(),
    reason: 'user asked to forget',
    writer: WRITER,
    kid: '0123456789abcdef',
    ts: 1_700_000_000_000_000_001n,
    nonce: bytes(16, 5),
    sig: bytes(64, 6),
  };
}

/** The generic CBOR value of a record, as cbor2 would encode it (ids as 16-byte bstr). */
export function wireView(r: object): Record<string, unknown> {
  const o: Record<string, unknown> = { ...r };
  for (const k of ['id', 'sup', 'target'])
    if (typeof o[k] === 'string') o[k] = parseUuid(o[k] as string);
  if (Array.isArray(o.parents)) o.parents = (o.parents as string[]).map(parseUuid);
  return o;
}

/** A value already encoded, spliced verbatim by `rawMap`. */
export class Raw {
  constructor(readonly bytes: Uint8Array) {}
}

/** A CBOR map with keys in the given order (possibly non-canonical). */
export function rawMap(entries: readonly (readonly [unknown, unknown])[]): Uint8Array {
  const n = entries.length;
  const parts: number[] = n < 24 ? [0xa0 | n] : [0xb8, n];
  for (const [k, v] of entries) {
    parts.push(...(k instanceof Raw ? k.bytes : encodeCanonical(k)));
    parts.push(...(v instanceof Raw ? v.bytes : encodeCanonical(v)));
  }
  return Uint8Array.from(parts);
}

// ---- fast-check arbitraries -------------------------------------------------------------

const hexChars = (n: number): fc.Arbitrary<string> =>
  fc.uint8Array({ minLength: n / 2, maxLength: n / 2 }).map((b) => toHex(b));
export const arbId = fc
  .tuple(fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.uint8Array({ minLength: 10, maxLength: 10 }))
  .map(([ms, r]) => uuidv7(ms, r));
const arbPrincipal = fc
  .tuple(fc.constantFrom(...PrincipalKinds), hexChars(32))
  .map(([k, h]) => `${k}:${h}`);
const arbText = (min: number, max: number): fc.Arbitrary<string> =>
  fc.string({ unit: 'grapheme', minLength: min, maxLength: max }).filter((s) => {
    const cp = [...s].length;
    return cp >= min && cp <= max;
  });
const arbWeight = fc.oneof(
  fc.constantFrom(0, 1, 0.5, 0.25, 0.1, 1 / 3),
  fc.double({ min: 0, max: 1, noNaN: true }).filter((w) => !Object.is(w, -0)),
);
const UINT64_MAX = 2n ** 64n - 1n;

export const arbSignedEntry: fc.Arbitrary<SignedEntry> = fc
  .record(
    {
      id: arbId,
      ns: arbText(1, 40),
      writer: arbPrincipal,
      kid: hexChars(16),
      kind: fc.stringMatching(/^[a-z_]{1,64}$/),
      content: fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 400 }),
        fc.string({ maxLength: 400 }).filter((s) => !/\p{Cs}/u.test(s)),
      ),
      tier: fc.constantFrom(...SourceTiers),
      label: fc.constantFrom(...TrustLabels),
      src: fc.uint8Array({ minLength: 32, maxLength: 32 }),
      ctx: fc.uint8Array({ minLength: 32, maxLength: 32 }),
      uri: arbText(1, 60),
      edges: fc.uniqueArray(fc.tuple(arbId, arbWeight), { maxLength: 6, selector: ([id]) => id }),
      ts: fc.bigInt({ min: 0n, max: UINT64_MAX - 1n }),
      expDelta: fc.bigInt({ min: 1n, max: 1n << 62n }),
      rev: arbPrincipal,
      sup: arbId,
      nonce: fc.uint8Array({ minLength: 16, maxLength: 16 }),
      sig: fc.uint8Array({ minLength: 64, maxLength: 64 }),
    },
    {
      requiredKeys: [
        'id',
        'ns',
        'writer',
        'kid',
        'kind',
        'content',
        'tier',
        'label',
        'src',
        'ctx',
        'edges',
        'ts',
        'nonce',
        'sig',
      ],
    },
  )
  .filter((r) => r.sup !== r.id && r.edges.every(([p]) => p !== r.id))
  .map((r) => {
    const e: { -readonly [K in keyof SignedEntry]: SignedEntry[K] } = {
      t: 'entry',
      v: 1,
      id: r.id,
      ns: r.ns,
      writer: r.writer,
      kid: r.kid,
      kind: r.kind,
      content: r.content,
      tier: r.tier,
      label: r.label,
      src: r.src,
      ctx: r.ctx,
      parents: r.edges.map(([p]) => p),
      weights: r.edges.map(([, w]) => w),
      ts: r.ts,
      nonce: r.nonce,
      sig: r.sig,
    };
    if (r.uri !== undefined) e.uri = r.uri;
    if (r.expDelta !== undefined && r.ts + r.expDelta <= UINT64_MAX) e.exp = r.ts + r.expDelta;
    if (r.rev !== undefined) e.rev = r.rev;
    if (r.sup !== undefined) e.sup = r.sup;
    return e;
  });

export const arbSignedTombstone: fc.Arbitrary<SignedTombstone> = fc
  .record({
    id: arbId,
    target: arbId,
    reason: arbText(1, 80),
    writer: arbPrincipal,
    kid: hexChars(16),
    ts: fc.bigInt({ min: 0n, max: UINT64_MAX }),
    nonce: fc.uint8Array({ minLength: 16, maxLength: 16 }),
    sig: fc.uint8Array({ minLength: 64, maxLength: 64 }),
  })
  .filter((r) => r.id !== r.target)
  .map((r) => ({ t: 'tombstone' as const, v: 1 as const, ...r }));
