/**
 * @module adapters/sql/filter-sql
 * A checked filter tree (`core/filter`) as a WHERE clause over `entries`, with exactly the
 * semantics of `matchFilter` (a differential test runs both over the same rows): every atom
 * is a non-NULL boolean (two-valued logic, so NOT of a missing field is true like in code),
 * type tests guard every cast inside a CASE (SQL does not promise the order of AND), strings
 * compare by code point (`COLLATE "C"`), `icontains` folds ASCII letters only, and JSON values
 * compare as `jsonb` (numbers by value, objects by keys, arrays in order). Equality on metadata
 * adds the containment test `metadata @> {path: value}` — implied by equality — so the GIN
 * index on `metadata` can serve it.
 *
 * Used by every entry query that takes a filter (search — the pgvector, in-process and
 * lexical rankings alike — and listing); its own module so the vector paths share it.
 */
import type { Condition, EntryFilter, TimeCondition } from '../../core/filter/index.js';
import type { JsonValue } from '../../core/entry/meta.js';
import { bigIn } from './codec.js';

/** Where the clause's parameters go (`./entries.js` `Where`). */
export interface ParamSink {
  param(v: unknown): string;
}

const TEXT_COLUMN = {
  tier: 'tier',
  kind: 'kind',
  source: 'uri',
  runId: 'run_id',
  agentId: 'agent_id',
} as const;

const TIME_COLUMN = { createdAt: 'created_ns', eventAt: 'event_ns' } as const;

const CMP = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const fold = (x: string): string => `translate(${x}, '${UPPER}', '${LOWER}')`;

/**
 * An atom as a boolean, always two-valued (`COALESCE(expr, false)`): a NULL (a missing key or
 * column) is false, so a NOT over it is true — SQL three-valued logic would drop the row where
 * the in-code filter (core/filter) keeps it. The conformance case holds the two to one verdict.
 */
const atom = (expr: string): string => `COALESCE(${expr}, false)`;
/** Always two-valued (the operand of an operator's own negation: `ne`, `nin`). */
const never = atom;

const json = (v: JsonValue): string => JSON.stringify(v);

/** `{a: {b: v}}` for path [a, b]: the containment implied by `metadata #> path = v`. */
function nest(path: readonly string[], v: JsonValue): JsonValue {
  let out: JsonValue = v;
  for (let i = path.length - 1; i >= 0; i--) out = { [path[i] as string]: out };
  return out;
}

function metaAtom(w: ParamSink, path: readonly string[], c: Condition): string {
  const p = w.param([...path]);
  const x = `(metadata #> ${p}::text[])`;
  switch (c.op) {
    case 'exists':
      return `(${x} IS NOT NULL)`;
    case 'eq':
      return atom(
        `metadata @> ${w.param(json(nest(path, c.value)))}::jsonb AND ${x} = ${w.param(json(c.value))}::jsonb`,
      );
    case 'ne':
      return `NOT ${never(`${x} = ${w.param(json(c.value))}::jsonb`)}`;
    case 'in':
      return atom(`${x} = ANY(${w.param(c.values.map(json))}::jsonb[])`);
    case 'nin':
      return `NOT ${never(`${x} = ANY(${w.param(c.values.map(json))}::jsonb[])`)}`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (typeof c.value === 'number')
        return atom(
          `CASE WHEN jsonb_typeof(${x}) = 'number' THEN ${x}::numeric ${CMP[c.op]} ${w.param(String(c.value))}::numeric END`,
        );
      return atom(
        `CASE WHEN jsonb_typeof(${x}) = 'string' THEN (${x} #>> '{}') COLLATE "C" ${CMP[c.op]} ${w.param(c.value)}::text COLLATE "C" END`,
      );
    case 'contains': {
      const arr = `EXISTS (SELECT 1 FROM jsonb_array_elements(${x}) AS el(v) WHERE el.v = ${w.param(json(c.value))}::jsonb)`;
      const str =
        typeof c.value === 'string'
          ? `strpos(${x} #>> '{}', ${w.param(c.value)}::text) > 0`
          : 'false';
      return atom(
        `CASE jsonb_typeof(${x}) WHEN 'string' THEN ${str} WHEN 'array' THEN ${arr} ELSE false END`,
      );
    }
    case 'icontains':
      return atom(
        `CASE WHEN jsonb_typeof(${x}) = 'string' THEN strpos(${fold(`(${x} #>> '{}')`)}, ${fold(`${w.param(c.value)}::text`)}) > 0 END`,
      );
  }
}

function textAtom(w: ParamSink, col: string, c: Condition): string {
  const strs = (vs: readonly JsonValue[]): string[] =>
    vs.filter((v): v is string => typeof v === 'string');
  switch (c.op) {
    case 'exists':
      return `(${col} IS NOT NULL)`;
    case 'eq':
      return typeof c.value === 'string' ? atom(`${col} = ${w.param(c.value)}::text`) : 'false';
    case 'ne':
      return typeof c.value === 'string'
        ? `NOT ${never(`${col} = ${w.param(c.value)}::text`)}`
        : 'true';
    case 'in':
      return atom(`${col} = ANY(${w.param(strs(c.values))}::text[])`);
    case 'nin':
      return `NOT ${never(`${col} = ANY(${w.param(strs(c.values))}::text[])`)}`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return typeof c.value === 'string'
        ? atom(`${col} COLLATE "C" ${CMP[c.op]} ${w.param(c.value)}::text COLLATE "C"`)
        : 'false';
    case 'contains':
      return typeof c.value === 'string'
        ? atom(`strpos(${col}, ${w.param(c.value)}::text) > 0`)
        : 'false';
    case 'icontains':
      return atom(`strpos(${fold(col)}, ${fold(`${w.param(c.value)}::text`)}) > 0`);
  }
}

function timeAtom(w: ParamSink, col: string, c: TimeCondition): string {
  switch (c.op) {
    case 'exists':
      return `(${col} IS NOT NULL)`;
    case 'eq':
      return atom(`${col} = ${w.param(bigIn(c.value))}::bigint`);
    case 'ne':
      return `NOT ${never(`${col} = ${w.param(bigIn(c.value))}::bigint`)}`;
    case 'in':
      return atom(`${col} = ANY(${w.param(c.values.map((v) => v.toString()))}::bigint[])`);
    case 'nin':
      return `NOT ${never(`${col} = ANY(${w.param(c.values.map((v) => v.toString()))}::bigint[])`)}`;
    default:
      return atom(`${col} ${CMP[c.op]} ${w.param(bigIn(c.value))}::bigint`);
  }
}

/** The filter as one parenthesised boolean SQL expression (never NULL). */
export function filterSql(f: EntryFilter, w: ParamSink): string {
  if ('and' in f)
    return f.and.length === 0 ? 'true' : `(${f.and.map((x) => filterSql(x, w)).join(' AND ')})`;
  if ('or' in f)
    return f.or.length === 0 ? 'false' : `(${f.or.map((x) => filterSql(x, w)).join(' OR ')})`;
  if ('not' in f) return `(NOT ${filterSql(f.not, w)})`;
  const ref = f.field;
  if (ref.kind === 'time') return timeAtom(w, TIME_COLUMN[ref.name], f.cond as TimeCondition);
  if (ref.kind === 'text') return textAtom(w, TEXT_COLUMN[ref.name], f.cond as Condition);
  return metaAtom(w, ref.path, f.cond as Condition);
}
