/**
 * Driver errors → coded storage errors (adapters/sql/errors): a lost connection or a server
 * shutting down or starting is STORAGE_UNAVAILABLE (retryable: the service answers 503 with
 * Retry-After); integrity and permission failures are not retryable; caller errors pass.
 */
import { describe, expect, it } from 'vitest';
import { MemwardenError } from '../../src/core/errors.js';
import { normaliseDbError, normaliseDriverError } from '../../src/adapters/sql/errors.js';

const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('database error mapping', () => {
  it.each([
    ['57P01', 'STORAGE_UNAVAILABLE', true], // admin_shutdown: the server is restarting
    ['57P02', 'STORAGE_UNAVAILABLE', true],
    ['57P03', 'STORAGE_UNAVAILABLE', true], // cannot_connect_now: still starting up
    ['08006', 'STORAGE_UNAVAILABLE', true],
    ['ECONNREFUSED', 'STORAGE_UNAVAILABLE', true],
    ['ECONNRESET', 'STORAGE_UNAVAILABLE', true],
    ['40001', 'STORAGE_CONFLICT', true],
    ['23505', 'STORAGE_CONFLICT', false],
    ['42501', 'STORAGE_FAILED', false],
    ['XX000', 'STORAGE_FAILED', false],
  ])('%s → %s (retryable %s), cause kept', (state, code, retryable) => {
    const cause = coded(state);
    const e = normaliseDbError(cause);
    expect(e).toBeInstanceOf(MemwardenError);
    expect(e).toMatchObject({ code, details: { retryable }, cause });
  });

  it('an uncoded error thrown by the driver for a query is a lost connection', () => {
    const cause = new Error('Connection terminated unexpectedly');
    expect(normaliseDriverError(cause)).toMatchObject({
      code: 'STORAGE_UNAVAILABLE',
      details: { retryable: true, reason: 'connection' },
      cause,
    });
    expect(normaliseDriverError(coded('23505'))).toMatchObject({ code: 'STORAGE_CONFLICT' });
    // An uncoded error that is not about the connection is a bug, not an outage.
    const bug = new TypeError('Do not know how to serialize a BigInt');
    expect(normaliseDriverError(bug)).toBe(bug);
  });

  it('errors that did not come from the database pass unchanged', () => {
    const mine = new MemwardenError('INPUT_INVALID', 'bad');
    expect(normaliseDbError(mine)).toBe(mine);
    expect(normaliseDriverError(mine)).toBe(mine);
    const plain = new TypeError('caller bug');
    expect(normaliseDbError(plain)).toBe(plain);
  });
});
