/**
 * @module test/memory/helpers-registrystore
 * A tiny Map-based RegistryStore fake for registry tests, keeping the port's rules: inserts
 * never overwrite (`STORAGE_CONFLICT`), `closeKey` only sets unset fields (`STORAGE_CONFLICT`
 * otherwise), returned records are copies. Not the real in-memory backend.
 */
import { MemwardenError } from '../../src/core/errors.js';
import type { KeyRecord, PrincipalRecord, RegistryStore } from '../../src/ports/storage.js';

type Patch = Parameters<RegistryStore['closeKey']>[1];

function copyKey(k: KeyRecord): KeyRecord {
  return { ...k, publicKey: new Uint8Array(k.publicKey) };
}

export class FakeRegistryStore implements RegistryStore {
  readonly principals = new Map<string, PrincipalRecord>();
  readonly keys = new Map<string, KeyRecord>();
  /** Counts store reads, to check caching. */
  reads = 0;

  async insertPrincipal(p: PrincipalRecord, firstKey: KeyRecord): Promise<void> {
    if (this.principals.has(p.id) || this.keys.has(firstKey.kid)) {
      throw new MemwardenError('STORAGE_CONFLICT', 'exists');
    }
    this.principals.set(p.id, { ...p });
    this.keys.set(firstKey.kid, copyKey(firstKey));
  }

  async getPrincipal(id: string): Promise<PrincipalRecord | undefined> {
    this.reads++;
    const p = this.principals.get(id);
    return p === undefined ? undefined : { ...p };
  }

  async listPrincipals(): Promise<PrincipalRecord[]> {
    return [...this.principals.values()].map((p) => ({ ...p }));
  }

  async insertKey(k: KeyRecord): Promise<void> {
    if (this.keys.has(k.kid)) throw new MemwardenError('STORAGE_CONFLICT', 'exists');
    this.keys.set(k.kid, copyKey(k));
  }

  async closeKey(kid: string, patch: Patch): Promise<void> {
    const k = this.keys.get(kid);
    if (k === undefined) throw new MemwardenError('STORAGE_NOT_FOUND', 'no such key');
    for (const f of Object.keys(patch) as (keyof Patch)[]) {
      if (patch[f] !== undefined && k[f] !== undefined)
        throw new MemwardenError('STORAGE_CONFLICT', `${f} set`);
    }
    this.keys.set(kid, { ...k, ...patch } as KeyRecord);
  }

  async getKey(kid: string): Promise<KeyRecord | undefined> {
    this.reads++;
    const k = this.keys.get(kid);
    return k === undefined ? undefined : copyKey(k);
  }

  async keysOf(principalId: string): Promise<KeyRecord[]> {
    return [...this.keys.values()].filter((k) => k.principalId === principalId).map(copyKey);
  }
}

/** A settable clock. */
export class FakeClock {
  constructor(public now: bigint = 1_000_000_000_000n) {}
  nowNs(): bigint {
    return this.now;
  }
}
