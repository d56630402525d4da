/**
 * @module test/helpers/outcome
 * What a call came to, as one comparable string: `'OK'`, the `MemwardenError` code (with its
 * message when `withMessage`), or `RAW:…` for anything else — so two paths can be asserted to
 * fail (or not) the same way.
 */
import { isMemwardenError } from '../../src/core/errors.js';

export async function outcome(p: Promise<unknown>, withMessage = false): Promise<string> {
  try {
    await p;
    return 'OK';
  } catch (e) {
    if (!isMemwardenError(e)) return `RAW:${String(e)}`;
    return withMessage ? `${e.code}: ${e.message}` : e.code;
  }
}
