/**
 * @module memory/context
 * What every part of `Memory` shares: the ledger, the root storage, clock, randomness,
 * metrics and retention, plus the three pieces of plumbing they all use — the principal's
 * storage view (every call names its principal; reads run under row-level security), the
 * audit trail and fresh ids.
 */
import { toHex } from '../core/bytes.js';
import { MemwardenError } from '../core/errors.js';
import type { Clock, RandomSource } from '../ports/clock.js';
import type { MetricsSink } from '../ports/metrics.js';
import type { JsonValue, RootStorage, StorageBackend } from '../ports/storage.js';
import type { RetentionConfig } from './config.js';
import type { Ledger } from './log/ledger.js';
import type { ReadModel } from './read/read-model.js';

export type AuditDetails = { readonly [k: string]: JsonValue };

export class MemoryContext {
  constructor(
    readonly ledger: Ledger,
    readonly storage: RootStorage,
    readonly clock: Clock,
    readonly random: RandomSource,
    readonly metrics: MetricsSink,
    readonly retention: RetentionConfig,
    /** The in-process read model, on an exclusive backend (ADR 0018). */
    readonly readModel?: ReadModel,
  ) {}

  /** The principal's storage view; a missing principal is refused before anything runs. */
  view(principal: string): StorageBackend {
    if (typeof principal !== 'string' || principal.length === 0) {
      throw new MemwardenError('AUTH_REQUIRED', 'every call names its principal');
    }
    return this.storage.asPrincipal(principal);
  }

  newId(): string {
    return toHex(this.random.randomBytes(16));
  }

  async audit(actor: string, action: string, subject: string, details: AuditDetails): Promise<void> {
    await this.storage.appendAudit({
      id: this.newId(),
      atNs: this.clock.nowNs(),
      actor,
      action,
      subject,
      details,
    });
  }
}
