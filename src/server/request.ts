/**
 * @module server/request
 * Reading untrusted request parts: JSON bodies, query strings and path ids. Every failure is a
 * coded error (`INPUT_INVALID`, `INPUT_TOO_LARGE`, `UNSUPPORTED_MEDIA_TYPE`); a raw
 * `SyntaxError` never escapes, and messages name fields, never echo values.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { MemwardenError } from '../core/errors.js';
import { EdgeError } from './errors.js';
import { IdSchema, MAX_BODY_DEPTH, MAX_CONTENT_BYTES } from './schemas.js';
import { jsonTextDepthExceeds } from '../memory/write/limits.js';

/** A short, value-free summary of schema issues: `content: expected string; foo: unknown key`. */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => {
      const at = i.path.length === 0 ? '(body)' : i.path.map(String).join('.');
      const what =
        i.code === 'unrecognized_keys' ? `unknown field(s) ${i.keys.join(', ')}` : i.message;
      return `${at}: ${what}`;
    })
    .join('; ');
}

/** Validate `value` against `schema`, or throw `INPUT_INVALID` describing the fields. */
export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success)
    throw new MemwardenError('INPUT_INVALID', `invalid ${what}: ${describeIssues(r.error)}`);
  return r.data;
}

/**
 * Parse the JSON body against `schema`. An empty body is `{}` when `optional` (DELETE, review
 * decisions); otherwise the body must be `application/json` and parse.
 */
export async function readJson<S extends z.ZodType>(
  c: Context,
  schema: S,
  optional = false,
): Promise<z.output<S>> {
  const text = await c.req.text();
  if (text.length === 0) {
    if (optional) return validate(schema, {}, 'body');
    throw new MemwardenError('INPUT_INVALID', 'a JSON body is required');
  }
  const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json')
    throw new EdgeError('UNSUPPORTED_MEDIA_TYPE', 'the body must be application/json');
  // Nesting decided on the text, before parsing and before any recursive validator sees it.
  if (jsonTextDepthExceeds(text, MAX_BODY_DEPTH))
    throw new MemwardenError(
      'INPUT_INVALID',
      `the body nests deeper than ${MAX_BODY_DEPTH} levels`,
      {
        details: { reason: 'nesting', limit: MAX_BODY_DEPTH },
      },
    );
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new MemwardenError('INPUT_INVALID', 'the body is not valid JSON');
  }
  // A "__proto__" key is dropped by schema parsing: the gate would judge arguments that differ
  // from the ones the caller runs the tool with. Refused everywhere; no field needs it.
  if (hasProtoKey(value))
    throw new MemwardenError('INPUT_INVALID', 'a "__proto__" key is not allowed');
  return validate(schema, value, 'body');
}

/**
 * Whether a parsed JSON value has an object with an own `__proto__` key at any depth
 * (`JSON.parse` defines such a key as an own property; it never sets the prototype). A walk
 * with an explicit stack over the parsed value — a `JSON.parse` reviver did the same check but
 * made parsing a 384-number embedding ~4× slower (the reviver runs for every value).
 */
export function hasProtoKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'object' && x !== null) stack.push(x);
    } else {
      if (Object.hasOwn(v, '__proto__')) return true;
      for (const k in v) {
        const x = (v as Record<string, unknown>)[k];
        if (typeof x === 'object' && x !== null) stack.push(x);
      }
    }
  }
  return false;
}

/** The query string as an object; a repeated parameter is an error, not a silent pick. */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URL(c.req.url).searchParams) {
    if (Object.hasOwn(out, k))
      throw new MemwardenError('INPUT_INVALID', `query parameter ${k} is repeated`);
    out[k] = v;
  }
  return validate(schema, out, 'query');
}

/** The `:id` path parameter, validated. */
export function readId(c: Context): string {
  return validate(IdSchema, c.req.param('id'), 'id');
}

/** `INPUT_TOO_LARGE` when `text` exceeds the content limit in UTF-8 bytes. */
export function assertContentSize(
  text: string,
  field: string,
  limit: number = MAX_CONTENT_BYTES,
): void {
  // Cheap bound first: UTF-8 uses at most 3 bytes per UTF-16 unit.
  if (text.length * 3 <= limit) return;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limit) {
    throw new MemwardenError(
      'INPUT_TOO_LARGE',
      `${field} is ${bytes} bytes; the limit is ${limit}`,
      {
        details: { field, limit },
      },
    );
  }
}

/** Copy `o` without its `undefined` properties (exactOptionalPropertyTypes: absent ≠ undefined). */
export function defined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}
