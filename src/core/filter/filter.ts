/**
 * @module core/filter/filter
 * Mem0-style filters over memories (issue 20): equality, `in`, ranges, substring and
 * existence on metadata keys and on the entry's own fields, combined with AND / OR / NOT.
 * `parseFilter` turns the caller's JSON into a checked tree (`INPUT_INVALID` with the field
 * otherwise); `matchFilter` evaluates it over one row. The SQL backends translate the same
 * tree into a WHERE clause (`adapters/sql/filter-sql.ts`) with exactly these semantics, and a
 * differential test holds them together.
 *
 * Input shape (the keys of one object are AND-ed):
 * ```
 * { <field>: <value> | '*' | { eq | ne | in | nin | gt | gte | lt | lte | contains | icontains: v, … },
 *   AND: [f, …], OR: [f, …], NOT: f | [f, …] }
 * ```
 * Fields: `tier`, `kind`, `source`, `runId`, `agentId` (text), `createdAt`, `eventAt` (time:
 * an ISO 8601 string or epoch milliseconds), `metadata.<a>.<b>` (a metadata path), and any
 * other name — a top-level metadata key, as Mem0 does. Operators may carry a `$` (`$gte`),
 * logical keys may be `AND` / `and` / `$and`. A bare value is `eq`, `'*'` is "the field exists".
 *
 * Semantics (two-valued; a missing field is never an error):
 * - `eq` / `in`: JSON equality (numbers by value, objects by keys, arrays in order);
 *   `ne` / `nin` are their negations, so a row without the field matches them (as in MongoDB);
 * - `gt` `gte` `lt` `lte`: a number against a number field, a string against a string field
 *   (code point order); time fields compare instants; anything else does not match;
 * - `contains`: a substring of a string field, or an element (JSON-equal) of an array field;
 *   `icontains`: substring after folding ASCII letters to lower case (the same on every backend);
 * - `exists` (`'*'`): the field is present (a metadata key holding `null` is present).
 */
import { MemwardenError } from '../errors.js';
import { utf8Length } from '../codec/wire.js';
import { type JsonValue, jsonEqual } from '../entry/meta.js';

/** Text columns of an entry. */
export const TEXT_FIELDS = ['tier', 'kind', 'source', 'runId', 'agentId'] as const;
export type TextField = (typeof TEXT_FIELDS)[number];
/** Time columns of an entry (ns since the epoch). */
export const TIME_FIELDS = ['createdAt', 'eventAt'] as const;
export type TimeField = (typeof TIME_FIELDS)[number];

export type FieldRef =
  | { readonly kind: 'text'; readonly name: TextField }
  | { readonly kind: 'time'; readonly name: TimeField }
  | { readonly kind: 'meta'; readonly path: readonly string[] };

export type CompareOp = 'gt' | 'gte' | 'lt' | 'lte';

export type Condition =
  | { readonly op: 'eq' | 'ne'; readonly value: JsonValue }
  | { readonly op: 'in' | 'nin'; readonly values: readonly JsonValue[] }
  | { readonly op: CompareOp; readonly value: number | string }
  | { readonly op: 'contains'; readonly value: JsonValue }
  | { readonly op: 'icontains'; readonly value: string }
  | { readonly op: 'exists' };

/** A time condition: values are instants in ns. */
export type TimeCondition =
  | { readonly op: 'eq' | 'ne'; readonly value: bigint }
  | { readonly op: 'in' | 'nin'; readonly values: readonly bigint[] }
  | { readonly op: CompareOp; readonly value: bigint }
  | { readonly op: 'exists' };

/** A checked filter tree. */
export type EntryFilter =
  | { readonly and: readonly EntryFilter[] }
  | { readonly or: readonly EntryFilter[] }
  | { readonly not: EntryFilter }
  | {
      readonly field: { readonly kind: 'text'; readonly name: TextField };
      readonly cond: Condition;
    }
  | {
      readonly field: { readonly kind: 'meta'; readonly path: readonly string[] };
      readonly cond: Condition;
    }
  | {
      readonly field: { readonly kind: 'time'; readonly name: TimeField };
      readonly cond: TimeCondition;
    };

/** What a filter is evaluated over: an entry's filterable fields. */
export interface FilterRow {
  readonly tier: string;
  readonly kind?: string | undefined;
  readonly uri?: string | undefined;
  readonly runId?: string | undefined;
  readonly agentId?: string | undefined;
  readonly createdAtNs?: bigint | undefined;
  readonly eventAtNs?: bigint | undefined;
  readonly metadata?: { readonly [k: string]: JsonValue } | undefined;
}

export const FILTER_LIMITS = { conditions: 64, depth: 8, inValues: 1000, pathSegments: 8 } as const;

const OPS = new Set(['eq', 'ne', 'in', 'nin', 'gt', 'gte', 'lt', 'lte', 'contains', 'icontains']);
const LOGIC: Readonly<Record<string, 'and' | 'or' | 'not'>> = {
  AND: 'and',
  and: 'and',
  $and: 'and',
  OR: 'or',
  or: 'or',
  $or: 'or',
  NOT: 'not',
  not: 'not',
  $not: 'not',
};

function bad(message: string, field?: string): never {
  throw new MemwardenError('INPUT_INVALID', message, {
    details: field === undefined ? { field: 'filters' } : { field: 'filters', key: field },
  });
}

function checkText(s: string, field: string): void {
  if (s.includes('\u0000')) bad('filter values may not contain U+0000', field);
  if (utf8Length(s) < 0) bad('filter text with a lone surrogate', field);
}

function checkJson(v: unknown, field: string, depth = 0): JsonValue {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) bad('filter numbers must be finite', field);
    return Object.is(v, -0) ? 0 : v;
  }
  if (typeof v === 'string') {
    checkText(v, field);
    return v;
  }
  if (depth > 8) bad('filter value nested too deeply', field);
  if (Array.isArray(v)) return v.map((x) => checkJson(x, field, depth + 1));
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: [string, JsonValue][] = [];
    for (const [k, x] of Object.entries(v as object)) {
      checkText(k, field);
      if (x !== undefined) out.push([k, checkJson(x, field, depth + 1)]);
    }
    return Object.fromEntries(out);
  }
  return bad('filter values must be JSON', field);
}

/** An instant: ISO 8601 text or epoch milliseconds → ns. */
export function parseInstant(v: unknown, field: string): bigint {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) bad('a time must be finite epoch milliseconds', field);
    return BigInt(Math.round(v * 1000)) * 1000n;
  }
  if (typeof v === 'string') {
    const ms = Date.parse(v);
    if (!Number.isFinite(ms)) bad('a time must be ISO 8601 text or epoch milliseconds', field);
    // Sub-millisecond digits (ISO allows them): kept to the microsecond.
    const frac = /\.(\d{4,9})/.exec(v);
    const extraUs =
      frac === undefined || frac === null
        ? 0n
        : BigInt((frac[1] as string).padEnd(9, '0').slice(3, 6));
    return BigInt(ms) * 1_000_000n + extraUs * 1000n;
  }
  return bad('a time must be ISO 8601 text or epoch milliseconds', field);
}

function fieldRef(name: string): FieldRef {
  if ((TEXT_FIELDS as readonly string[]).includes(name))
    return { kind: 'text', name: name as TextField };
  if ((TIME_FIELDS as readonly string[]).includes(name))
    return { kind: 'time', name: name as TimeField };
  checkText(name, name);
  if (name.length === 0) bad('empty filter field', name);
  const path = name.startsWith('metadata.') ? name.slice('metadata.'.length).split('.') : [name];
  if (path.length > FILTER_LIMITS.pathSegments || path.some((p) => p.length === 0))
    bad('bad metadata path', name);
  return { kind: 'meta', path };
}

interface Budget {
  n: number;
}

function conditions(ref: FieldRef, spec: unknown, field: string): Condition[] {
  if (spec === '*') return [{ op: 'exists' }];
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    return [{ op: 'eq', value: checkJson(spec, field) }];
  const keys = Object.keys(spec);
  if (keys.length === 0) bad('empty condition', field);
  // An object whose keys are not all operators is a JSON value to compare with (eq).
  if (!keys.every((k) => OPS.has(k.replace(/^\$/, ''))))
    return [{ op: 'eq', value: checkJson(spec, field) }];
  const out: Condition[] = [];
  for (const k of keys) {
    const op = k.replace(/^\$/, '');
    const v = (spec as Record<string, unknown>)[k];
    if (op === 'eq' || op === 'ne') out.push({ op, value: checkJson(v, field) });
    else if (op === 'in' || op === 'nin') {
      if (!Array.isArray(v)) bad(`${op} takes a list`, field);
      if (v.length > FILTER_LIMITS.inValues) bad(`${op} list too long`, field);
      out.push({ op, values: v.map((x) => checkJson(x, field)) });
    } else if (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') {
      if (ref.kind === 'time') {
        out.push({ op, value: v as number }); // converted below
      } else if (typeof v === 'number' || typeof v === 'string') {
        out.push({ op, value: checkJson(v, field) as number | string });
      } else bad(`${op} takes a number or a string`, field);
    } else if (op === 'contains') out.push({ op, value: checkJson(v, field) });
    else {
      if (typeof v !== 'string') bad('icontains takes a string', field);
      checkText(v, field);
      out.push({ op: 'icontains', value: v });
    }
  }
  return out;
}

function timeCondition(c: Condition, field: string): TimeCondition {
  switch (c.op) {
    case 'exists':
      return c;
    case 'eq':
    case 'ne':
      return { op: c.op, value: parseInstant(c.value, field) };
    case 'in':
    case 'nin':
      return { op: c.op, values: c.values.map((x) => parseInstant(x, field)) };
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return { op: c.op, value: parseInstant(c.value, field) };
    default:
      return bad(`${c.op} does not apply to a time`, field);
  }
}

function parseNode(input: unknown, depth: number, budget: Budget): EntryFilter {
  if (depth > FILTER_LIMITS.depth) bad('filter nested too deeply');
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    bad('a filter is an object');
  const parts: EntryFilter[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const logic = LOGIC[key];
    if (logic !== undefined) {
      const list = Array.isArray(value)
        ? value
        : logic === 'not'
          ? [value]
          : bad(`${key} takes a list`, key);
      const subs = list.map((x) => parseNode(x, depth + 1, budget));
      if (logic === 'not')
        parts.push({ not: subs.length === 1 ? (subs[0] as EntryFilter) : { and: subs } });
      else if (subs.length === 0) bad(`${key} needs at least one filter`, key);
      else parts.push(logic === 'and' ? { and: subs } : { or: subs });
      continue;
    }
    if (
      key === 'metadata' &&
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value)
    ) {
      // `{ metadata: { k: v } }`: each key a metadata condition.
      for (const [k, v] of Object.entries(value)) {
        if (v === undefined) continue;
        parts.push(parseNode({ [`metadata.${k}`]: v }, depth + 1, budget));
      }
      continue;
    }
    const ref = fieldRef(key);
    for (const c of conditions(ref, value, key)) {
      if (++budget.n > FILTER_LIMITS.conditions) bad('too many filter conditions');
      if (ref.kind === 'time') parts.push({ field: ref, cond: timeCondition(c, key) });
      else if (ref.kind === 'text') {
        if (c.op === 'icontains' || c.op === 'contains') {
          if (typeof c.value !== 'string') bad(`${c.op} on ${key} takes a string`, key);
        }
        parts.push({ field: ref, cond: c });
      } else parts.push({ field: ref, cond: c });
    }
  }
  if (parts.length === 1) return parts[0] as EntryFilter;
  return { and: parts };
}

/**
 * Check and normalise a caller's filter (see the module comment). `undefined` / `{}` give
 * undefined (no filter). Coded `INPUT_INVALID` on anything malformed; nothing is evaluated.
 */
export function parseFilter(input: unknown): EntryFilter | undefined {
  if (input === undefined || input === null) return undefined;
  const f = parseNode(input, 0, { n: 0 });
  if ('and' in f && f.and.length === 0) return undefined;
  return f;
}

/** `a AND b`, either possibly absent. */
export function andFilters(...fs: (EntryFilter | undefined)[]): EntryFilter | undefined {
  const list = fs.filter((f): f is EntryFilter => f !== undefined);
  if (list.length === 0) return undefined;
  return list.length === 1 ? list[0] : { and: list };
}

// ---- evaluation ------------------------------------------------------------------------------

/** Compare strings by code point (what `COLLATE "C"` does on UTF-8). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** Fold ASCII letters to lower case only (every backend does exactly this for icontains). */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

function textValue(row: FilterRow, name: TextField): string | undefined {
  switch (name) {
    case 'tier':
      return row.tier;
    case 'kind':
      return row.kind;
    case 'source':
      return row.uri;
    case 'runId':
      return row.runId;
    case 'agentId':
      return row.agentId;
  }
}

function metaValue(row: FilterRow, path: readonly string[]): JsonValue | undefined {
  let cur: JsonValue | undefined = row.metadata;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    const o = cur as { readonly [k: string]: JsonValue };
    if (!Object.hasOwn(o, p)) return undefined;
    cur = o[p];
  }
  return cur;
}

function compare(op: CompareOp, c: number): boolean {
  return op === 'gt' ? c > 0 : op === 'gte' ? c >= 0 : op === 'lt' ? c < 0 : c <= 0;
}

function matchJson(v: JsonValue | undefined, c: Condition): boolean {
  switch (c.op) {
    case 'exists':
      return v !== undefined;
    case 'eq':
      return v !== undefined && jsonEqual(v, c.value);
    case 'ne':
      return !(v !== undefined && jsonEqual(v, c.value));
    case 'in':
      return v !== undefined && c.values.some((x) => jsonEqual(v, x));
    case 'nin':
      return !(v !== undefined && c.values.some((x) => jsonEqual(v, x)));
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (typeof c.value === 'number')
        return typeof v === 'number' && compare(c.op, v < c.value ? -1 : v > c.value ? 1 : 0);
      return typeof v === 'string' && compare(c.op, compareCodePoints(v, c.value));
    case 'contains':
      if (typeof v === 'string') return typeof c.value === 'string' && v.includes(c.value);
      if (Array.isArray(v)) return v.some((x: JsonValue) => jsonEqual(x, c.value));
      return false;
    case 'icontains':
      return typeof v === 'string' && asciiLower(v).includes(asciiLower(c.value));
  }
}

function matchTime(v: bigint | undefined, c: TimeCondition): boolean {
  switch (c.op) {
    case 'exists':
      return v !== undefined;
    case 'eq':
      return v !== undefined && v === c.value;
    case 'ne':
      return !(v !== undefined && v === c.value);
    case 'in':
      return v !== undefined && c.values.includes(v);
    case 'nin':
      return !(v !== undefined && c.values.includes(v));
    default:
      return v !== undefined && compare(c.op, v < c.value ? -1 : v > c.value ? 1 : 0);
  }
}

/** Does `row` satisfy `f`? (No filter: yes.) */
export function matchFilter(f: EntryFilter | undefined, row: FilterRow): boolean {
  if (f === undefined) return true;
  if ('and' in f) return f.and.every((x) => matchFilter(x, row));
  if ('or' in f) return f.or.some((x) => matchFilter(x, row));
  if ('not' in f) return !matchFilter(f.not, row);
  const ref = f.field;
  if (ref.kind === 'time')
    return matchTime(
      ref.name === 'createdAt' ? row.createdAtNs : row.eventAtNs,
      f.cond as TimeCondition,
    );
  const v = ref.kind === 'text' ? textValue(row, ref.name) : metaValue(row, ref.path);
  return matchJson(v, f.cond as Condition);
}
