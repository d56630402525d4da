/**
 * @module memory/write/limits
 * The write path's input limits (issue 17): every caller-supplied string of a write — content,
 * source URI, kind, thread id, reasons, names, parent ids — is bounded in Unicode code points
 * AND in UTF-8 bytes (storage limits are bytes: a ~2,000-CJK-character URI passed a character
 * limit and overflowed the `uri` index, failing a whole group commit), and refused when it holds
 * U+0000 (PostgreSQL text cannot) or a lone surrogate (not Unicode; not encodable as UTF-8).
 * Structured values are bounded in nesting depth.
 *
 * Codes: over a bound `INPUT_TOO_LARGE` with `details: { field, limit, unit }`; a malformed
 * value `INPUT_INVALID` with `details: { field, reason }`. The same codes on every channel: the
 * channels' own schemas are looser sanity bounds, so this module decides.
 */
import { MemwardenError } from '../../core/errors.js';
import type { WriteLimits } from '../config.js';

/** The fields the limits name (also the `field` of an error's details). */
export type LimitedField =
  'content' | 'source' | 'kind' | 'threadId' | 'reason' | 'name' | 'observation' | 'parent';

/** A field's bounds. */
export interface FieldBound {
  readonly codePoints: number;
  readonly bytes: number;
}

/** The bounds of each field under `limits`. */
export function boundOf(field: LimitedField, l: WriteLimits): FieldBound {
  switch (field) {
    case 'content':
      return { codePoints: l.contentBytes, bytes: l.contentBytes };
    case 'source':
      return { codePoints: l.sourceCodePoints, bytes: l.sourceBytes };
    case 'kind':
      return { codePoints: l.kindCodePoints, bytes: l.kindBytes };
    case 'threadId':
      return { codePoints: l.threadIdCodePoints, bytes: l.threadIdBytes };
    case 'reason':
      return { codePoints: l.reasonCodePoints, bytes: l.reasonBytes };
    case 'name':
      return { codePoints: l.nameCodePoints, bytes: l.nameBytes };
    case 'observation':
      return { codePoints: l.observationCodePoints, bytes: l.observationBytes };
    case 'parent':
      return { codePoints: 256, bytes: 256 };
  }
}

/** No lone surrogate (`String.prototype.isWellFormed`, Node ≥ 20; not in the ES2023 lib types). */
export function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** UTF-8 length of a well-formed string, without allocating. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4; // a surrogate pair (well-formedness checked before)
      i++;
    } else n += 3;
  }
  return n;
}

/** Code points of a well-formed string. */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      n--;
      i++;
    }
  }
  return n;
}

/**
 * Check one caller-supplied string: a non-empty string, no U+0000, no lone surrogate, within
 * its code-point and byte bounds. `label` names it in errors (e.g. `observations[3]`).
 */
export function checkString(
  value: unknown,
  field: LimitedField,
  limits: WriteLimits,
  label: string = field,
): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new MemwardenError('INPUT_INVALID', `${label} must be a non-empty string`, {
      details: { field: label, reason: 'empty_or_not_a_string' },
    });
  if (value.includes('\u0000'))
    throw new MemwardenError('INPUT_INVALID', `${label} must not contain U+0000`, {
      details: { field: label, reason: 'nul' },
    });
  if (!isWellFormed(value))
    throw new MemwardenError('INPUT_INVALID', `${label} must not contain a lone surrogate`, {
      details: { field: label, reason: 'lone_surrogate' },
    });
  const b = boundOf(field, limits);
  // Cheap first: UTF-16 units bound code points from above, and UTF-8 uses ≤ 3 bytes per unit.
  if (value.length <= b.codePoints && value.length * 3 <= b.bytes) return value;
  if (value.length > b.codePoints && codePoints(value) > b.codePoints)
    throw tooLarge(label, b.codePoints, 'code points');
  if (utf8Length(value) > b.bytes) throw tooLarge(label, b.bytes, 'bytes');
  return value;
}

/** {@link checkString} when the value is present. */
export function checkOptional(
  value: unknown,
  field: LimitedField,
  limits: WriteLimits,
  label: string = field,
): string | undefined {
  return value === undefined ? undefined : checkString(value, field, limits, label);
}

function tooLarge(field: string, limit: number, unit: 'bytes' | 'code points'): MemwardenError {
  return new MemwardenError('INPUT_TOO_LARGE', `${field} is over ${limit} ${unit}`, {
    details: { field, limit, unit },
  });
}

/**
 * The nesting depth of a JSON-like value, stopping once it exceeds `max` (an explicit stack: a
 * value nested 100,000 deep costs no recursion). A scalar has depth 0.
 */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (d + 1 > max) return true;
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'object' && x !== null) stack.push([x, d + 1]);
    } else
      for (const k in v) {
        const x = (v as Record<string, unknown>)[k];
        if (typeof x === 'object' && x !== null) stack.push([x, d + 1]);
      }
  }
  return false;
}

/** `INPUT_INVALID` (reason `nesting`) when a structured value nests deeper than `max`. */
export function checkJsonDepth(value: unknown, max: number, field = 'value'): void {
  if (jsonDepthExceeds(value, max))
    throw new MemwardenError('INPUT_INVALID', `${field} nests deeper than ${max} levels`, {
      details: { field, reason: 'nesting', limit: max },
    });
}

/**
 * A structured value bounded like a string field: nesting within `max`, and no key or string
 * holding U+0000 or a lone surrogate (JSON text would carry them escaped, but they are the same
 * hostile input the other channels refuse). `INPUT_INVALID` otherwise.
 */
export function checkStructured(value: unknown, max: number, field = 'value'): void {
  checkJsonDepth(value, max, field);
  const bad = (s: string): string | undefined =>
    s.includes('\u0000') ? 'nul' : isWellFormed(s) ? undefined : 'lone_surrogate';
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    let reason: string | undefined;
    if (typeof v === 'string') reason = bad(v);
    else if (Array.isArray(v)) for (const x of v) stack.push(x);
    else if (typeof v === 'object' && v !== null)
      for (const k in v) {
        reason ??= bad(k);
        stack.push((v as Record<string, unknown>)[k]);
      }
    if (reason !== undefined)
      throw new MemwardenError(
        'INPUT_INVALID',
        `${field} holds ${reason === 'nul' ? 'U+0000' : 'a lone surrogate'}`,
        {
          details: { field, reason },
        },
      );
  }
}

/**
 * Nesting depth of raw JSON text, by scanning brackets outside strings: decides before
 * `JSON.parse` and before any recursive schema validation sees the value (a valid document
 * nested 1,500 deep overflowed a recursive validator's stack: HTTP 500). True when deeper
 * than `max`.
 */
export function jsonTextDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped unit
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
