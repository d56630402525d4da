/**
 * @module testing/doubles
 * Shipped test doubles: an in-memory KeySource and deterministic clock / randomness, so
 * tests of the layers above are fast and repeatable.
 */
import { createHash } from 'node:crypto';
import { MemwardenError } from '../core/errors.js';
import type { Clock, RandomSource } from '../ports/clock.js';
import type { KeySource } from '../ports/keysource.js';

/** A KeySource kept in a Map; never overwrites, like the real ones. */
export class MemoryKeySource implements KeySource {
  private readonly keys = new Map<string, Uint8Array>();
  async get(name: string): Promise<Uint8Array | undefined> {
    const k = this.keys.get(name);
    return k === undefined ? undefined : k.slice();
  }
  async put(name: string, secret: Uint8Array): Promise<void> {
    if (this.keys.has(name)) throw new MemwardenError('STORAGE_CONFLICT', `key ${name} exists`);
    this.keys.set(name, secret.slice());
  }
  async list(): Promise<string[]> {
    return [...this.keys.keys()];
  }
  async replace(name: string, value: Uint8Array): Promise<void> {
    this.keys.set(name, value.slice());
  }
}

/** A clock that only moves when told to (or by `stepNs` on every read). */
export class ManualClock implements Clock {
  constructor(
    private now: bigint = 1_700_000_000_000_000_000n,
    private readonly stepNs: bigint = 1_000n,
  ) {}
  nowNs(): bigint {
    const t = this.now;
    this.now += this.stepNs;
    return t;
  }
  advance(ns: bigint): void {
    this.now += ns;
  }
}

/** Deterministic bytes from a seed (SHA-256 in counter mode). Not for production keys. */
export class SeededRandom implements RandomSource {
  private counter = 0;
  constructor(private readonly seed: string = 'memwarden') {}
  randomBytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let o = 0; o < n; o += 32) {
      const block = createHash('sha256').update(`${this.seed}:${this.counter++}`).digest();
      out.set(block.subarray(0, Math.min(32, n - o)), o);
    }
    return out;
  }
}
