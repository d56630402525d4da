/**
 * @module ports/clock
 * Time and randomness are injected so core rules stay deterministic under test.
 */

/** Wall clock in nanoseconds since the Unix epoch. */
export interface Clock {
  nowNs(): bigint;
}

/** Cryptographically secure random bytes (nonces, key generation, UUIDv7 random bits). */
export interface RandomSource {
  randomBytes(n: number): Uint8Array;
}
