/**
 * @module adapters/system
 * The real clock and randomness, injected by the edges (CLI, server, Memory.open).
 */
import { randomBytes } from 'node:crypto';
import type { Clock, RandomSource } from '../../ports/clock.js';

const origin = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/** Nanosecond wall clock: Date.now() anchored, advanced by the monotonic hrtime. */
export const systemClock: Clock = { nowNs: () => origin + process.hrtime.bigint() };

export const systemRandom: RandomSource = {
  randomBytes: (n) => new Uint8Array(randomBytes(n)),
};
