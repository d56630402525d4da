/**
 * @module memory/scope
 * The caller-facing inputs of issue 20, checked once before anything is written or read:
 * metadata (a JSON object, normalised the way `JSON.stringify` would: `undefined` properties
 * dropped, −0 as 0; anything else outside JSON is `INPUT_INVALID`), the event time, the run /
 * agent scope ids, and the filters of search and getAll (`core/filter`, with the `runId` /
 * `agentId` shortcuts AND-ed in).
 */
import { MemwardenError } from '../core/errors.js';
import { utf8Length } from '../core/codec/wire.js';
import { type JsonObject, type JsonValue, META_LIMITS, encodeMeta } from '../core/entry/meta.js';
import { type EntryFilter, andFilters, parseFilter, parseInstant } from '../core/filter/index.js';

function invalid(message: string, field: string): never {
  throw new MemwardenError('INPUT_INVALID', message, { details: { field } });
}

function normalise(v: unknown, field: string, depth: number): JsonValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) invalid('metadata numbers must be finite', field);
    return Object.is(v, -0) ? 0 : v;
  }
  if (depth > 16)
    throw new MemwardenError('INPUT_INVALID', 'metadata nested too deeply', {
      details: { field, reason: 'nesting', limit: META_LIMITS.depth },
    });
  if (Array.isArray(v))
    return v.map((x) => normalise(x === undefined ? null : x, field, depth + 1));
  if (typeof v === 'object') {
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null)
      invalid(
        'metadata values must be JSON (plain objects, arrays, strings, numbers, booleans, null)',
        field,
      );
    const out: [string, JsonValue][] = [];
    for (const [k, x] of Object.entries(v))
      if (x !== undefined) out.push([k, normalise(x, field, depth + 1)]);
    return Object.fromEntries(out);
  }
  return invalid('metadata values must be JSON', field);
}

/**
 * Caller metadata as it will be signed: undefined when absent or empty; `INPUT_INVALID` (with
 * the codec's reason) when it cannot be (not an object, a non-JSON value, too large, too deep,
 * an empty key, a lone surrogate).
 */
export function checkMetadata(meta: unknown): JsonObject | undefined {
  if (meta === undefined || meta === null) return undefined;
  if (typeof meta !== 'object' || Array.isArray(meta))
    invalid('metadata must be an object', 'metadata');
  const out = normalise(meta, 'metadata', 0) as JsonObject;
  if (Object.keys(out).length === 0) return undefined;
  try {
    encodeMeta(out);
  } catch (e) {
    if (e instanceof MemwardenError) {
      // Over the signed record's bounds: the write path's codes (INPUT_TOO_LARGE over a size
      // bound, INPUT_INVALID reason `nesting` over the depth bound; ADR 0031).
      if (e.code === 'CODEC_OVERSIZE' && /deeply/.test(e.message))
        throw new MemwardenError('INPUT_INVALID', `metadata: ${e.message}`, {
          details: { field: 'metadata', reason: 'nesting', limit: META_LIMITS.depth },
        });
      if (e.code === 'CODEC_OVERSIZE')
        throw new MemwardenError('INPUT_TOO_LARGE', `metadata: ${e.message}`, {
          details: /object/.test(e.message)
            ? { field: 'metadata', limit: META_LIMITS.items, unit: 'items' }
            : { field: 'metadata', limit: META_LIMITS.bytes, unit: 'bytes' },
        });
      throw new MemwardenError('INPUT_INVALID', `metadata: ${e.message}`, {
        details: { field: 'metadata', reason: e.code },
      });
    }
    throw e;
  }
  return out;
}

/** An event time (ISO 8601 text, epoch milliseconds or a Date) as ns since the epoch. */
export function checkEventAt(v: unknown): bigint | undefined {
  if (v === undefined || v === null) return undefined;
  const ns = parseInstant(v instanceof Date ? v.getTime() : v, 'eventAt');
  if (ns < 0n) invalid('eventAt must not be before 1970', 'eventAt');
  return ns;
}

/** A run or agent scope id: 1..256 characters, no U+0000. */
export function checkScopeId(v: unknown, field: 'runId' | 'agentId'): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (
    typeof v !== 'string' ||
    v.length === 0 ||
    [...v].length > 256 ||
    v.includes('\u0000') ||
    utf8Length(v) < 0
  )
    invalid(`${field} must be 1..256 characters`, field);
  return v;
}

/** The filter of a search or getAll: the caller's filters, AND the scope shortcuts. */
export function readFilter(opts: {
  readonly filters?: unknown;
  readonly runId?: unknown;
  readonly agentId?: unknown;
}): EntryFilter | undefined {
  const runId = checkScopeId(opts.runId, 'runId');
  const agentId = checkScopeId(opts.agentId, 'agentId');
  return andFilters(
    parseFilter(opts.filters),
    runId === undefined ? undefined : parseFilter({ runId }),
    agentId === undefined ? undefined : parseFilter({ agentId }),
  );
}
