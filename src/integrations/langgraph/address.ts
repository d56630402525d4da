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

const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);

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
      default:
        return false;
    }
  });
}

/**
 * LangGraph's filter: every filter field must match the value's field (exact JSON equality, or
 * the `$eq/$ne/$gt/$gte/$lt/$lte/$in/$nin` operators LangGraph's InMemoryStore accepts).
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
