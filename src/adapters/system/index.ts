/**
 * @module adapters/system
 * The real clock and randomness, injected by the edges (CLI, server, Memory.open).
 */
import { randomFillSync } from 'node:crypto';
import type { Clock, RandomSource } from '../../ports/clock.js';

const origin = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/** Nanosecond wall clock: Date.now() anchored, advanced by the monotonic hrtime. */
export const systemClock: Clock = { nowNs: () => origin + process.hrtime.bigint() };

/** Requests up to this size (ids, nonces, seals) are served from the pool; larger go direct. */
const POOLED_MAX = 16;
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let offset = POOL_BYTES; // empty: filled on first use

/**
 * CSPRNG bytes (OpenSSL through node:crypto). Small requests — a search's seal, an audit
 * event's id, an entry's nonce — come from a 4 KiB pool refilled by one `randomFillSync`, as
 * Node's own `randomUUID` does: one native call per ~256 ids instead of one each (~3 µs). Every
 * request gets its own copy and the pooled bytes are zeroed as they are handed out, so the pool
 * never holds a value already used. Key material (32 bytes and up) is drawn directly, never
 * held ahead of use.
 */
export const systemRandom: RandomSource = {
  randomBytes: (n) => {
    if (n > POOLED_MAX) return randomFillSync(new Uint8Array(n));
    if (offset + n > POOL_BYTES) {
      randomFillSync(pool);
      offset = 0;
    }
    const out = pool.slice(offset, offset + n);
    pool.fill(0, offset, offset + n);
    offset += n;
    return out;
  },
};
