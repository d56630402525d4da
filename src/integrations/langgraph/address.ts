/**
 * @module integrations/langgraph/address
 * Pure helpers for the LangGraph store: the exact (namespace, key) ↔ source-URI mapping,
 * namespace matching and value filters. No I/O.
 */

/** Memory kind of every item the store writes. */
export const LANGGRAPH_KIND = 'langgraph';
const SCHEME = 'langgraph://';

/**
 * `langgraph://<ns labels joined by '/'>/<key>`, each segment percent-encoded so a label or key
 * containing '/' (or '%') cannot alias another address: the mapping is exact both ways.
 */
export function addressUri(namespace: readonly string[], key: string): string {
  return SCHEME + [...namespace, key].map((s) => encodeURIComponent(s)).join('/');
}

/** Inverse of `addressUri`; undefined for anything that is not a well-formed store URI. */
export function parseAddressUri(
  uri: string | undefined,
): { namespace: string[]; key: string } | undefined {
  if (uri === undefined || !uri.startsWith(SCHEME)) return undefined;
  const parts = uri.slice(SCHEME.length).split('/');
  try {
    const decoded = parts.map((p) => decodeURIComponent(p));
    const key = decoded.pop();
    if (key === undefined) return undefined;
    return { namespace: decoded, key };
  } catch {
    return undefined;
  }
}

export function hasPrefix(namespace: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > namespace.length) return false;
  return prefix.every((p, i) => p === '*' || p === namespace[i]);
}

export function hasSuffix(namespace: readonly string[], suffix: readonly string[]): boolean {
  if (suffix.length > namespace.length) return false;
  const off = namespace.length - suffix.length;
  return suffix.every((s, i) => s === '*' || s === namespace[off + i]);
}

/** Canonical JSON (sorted object keys): the same value always yields the same content bytes. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(v: unknown): unknown {
  // What JSON.stringify would write for it (a Date is its ISO string, as LangGraph's
  // Postgres, Redis and SQLite stores round-trip it), then sorted.
  if (
    v !== null &&
    typeof v === 'object' &&
    typeof (v as { toJSON?: unknown }).toJSON === 'function'
  )
    return sortKeys((v as { toJSON: () => unknown }).toJSON());
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .filter((k) => o[k] !== undefined)
        .map((k) => [k, sortKeys(o[k])]),
    );
  }
  return v;
}

// `$exists` is RedisStore's and MongoDB's (a field is present and not undefined), beyond InMemoryStore's.
const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists']);

function isOperatorObject(v: unknown): v is Record<string, unknown> {
  return (
    v !== null &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    Object.keys(v).length > 0 &&
    Object.keys(v).every((k) => OPERATORS.has(k))
  );
}

function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function compare(itemValue: unknown, filterValue: unknown): boolean {
  if (!isOperatorObject(filterValue)) return sameJson(itemValue, filterValue);
  return Object.entries(filterValue).every(([op, v]) => {
    switch (op) {
      case '$eq':
        return sameJson(itemValue, v);
      case '$ne':
        return !sameJson(itemValue, v);
      case '$gt':
        return Number(itemValue) > Number(v);
      case '$gte':
        return Number(itemValue) >= Number(v);
      case '$lt':
        return Number(itemValue) < Number(v);
      case '$lte':
        return Number(itemValue) <= Number(v);
      case '$in':
        return Array.isArray(v) && v.some((x) => sameJson(itemValue, x));
      case '$nin':
        return !Array.isArray(v) || !v.some((x) => sameJson(itemValue, x));
      case '$exists':
        return (itemValue !== undefined) === Boolean(v);
      default:
        return false;
    }
  });
}

/**
 * LangGraph's filter: every filter field must match the value's field (exact JSON equality, or
 * the `$eq/$ne/$gt/$gte/$lt/$lte/$in/$nin` operators LangGraph's InMemoryStore accepts, and
 * `$exists` as RedisStore and MongoDBStore accept it).
 * Dotted keys (`"a.b"`) address nested fields.
 */
export function matchesFilter(
  value: Record<string, unknown>,
  filter: Record<string, unknown> | undefined,
): boolean {
  if (filter === undefined) return true;
  return Object.entries(filter).every(([path, fv]) => compare(at(value, path), fv));
}

function at(value: Record<string, unknown>, path: string): unknown {
  if (Object.prototype.hasOwnProperty.call(value, path)) return value[path];
  let cur: unknown = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * The texts of `value` at a LangGraph index path, with the path language of LangGraph's
 * InMemoryStore: `$` (the whole value), `a.b`, `[i]` / `[-1]` / `[*]` on arrays, `*` on any
 * container, `{a,b.c}` several fields. A string, number or boolean leaf is its text; an object or
 * array leaf is its JSON (indented by 2, as LangGraph embeds it); a missing field has none.
 */
export function textsAtPath(value: unknown, path: string): string[] {
  if (path === '' || path === '$') return [JSON.stringify(value, null, 2)];
  return collectTexts(value, pathTokens(path), 0);
}

function leafText(v: unknown): string[] {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return [String(v)];
  if (v !== null && typeof v === 'object') return [JSON.stringify(v, null, 2)];
  return [];
}

function collectTexts(v: unknown, tokens: readonly string[], i: number): string[] {
  if (i >= tokens.length) return leafText(v);
  const tok = tokens[i]!;
  const isObj = v !== null && typeof v === 'object';
  if (tok.startsWith('[') && tok.endsWith(']')) {
    if (!Array.isArray(v)) return [];
    const ix = tok.slice(1, -1);
    if (ix === '*') return v.flatMap((x) => collectTexts(x, tokens, i + 1));
    const n = Number.parseInt(ix, 10);
    if (Number.isNaN(n)) return [];
    const at = n < 0 ? v.length + n : n;
    return at >= 0 && at < v.length ? collectTexts(v[at], tokens, i + 1) : [];
  }
  if (tok.startsWith('{') && tok.endsWith('}')) {
    if (!isObj) return [];
    const out: string[] = [];
    for (const field of tok.slice(1, -1).split(',')) {
      let cur: unknown = v;
      for (const part of pathTokens(field.trim())) {
        if (cur !== null && typeof cur === 'object' && Object.hasOwn(cur, part))
          cur = (cur as Record<string, unknown>)[part];
        else {
          cur = undefined;
          break;
        }
      }
      if (cur !== undefined) out.push(...leafText(cur));
    }
    return out;
  }
  if (tok === '*') {
    if (!isObj) return [];
    return Object.values(v).flatMap((x) => collectTexts(x, tokens, i + 1));
  }
  if (isObj && !Array.isArray(v) && Object.hasOwn(v, tok))
    return collectTexts((v as Record<string, unknown>)[tok], tokens, i + 1);
  return [];
}

/** `a.b[*].c{x,y}` → ['a', 'b', '[*]', 'c', '{x,y}']: dots split fields outside brackets and braces. */
function pathTokens(path: string): string[] {
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  const flush = (): void => {
    if (cur !== '') out.push(cur);
    cur = '';
  };
  for (const ch of path) {
    if (depth === 0 && (ch === '[' || ch === '{')) {
      flush();
      cur = ch;
      depth++;
    } else if (depth > 0) {
      cur += ch;
      if (ch === ']' || ch === '}') {
        depth--;
        if (depth === 0) flush();
      }
    } else if (ch === '.') flush();
    else cur += ch;
  }
  flush();
  return out;
}
