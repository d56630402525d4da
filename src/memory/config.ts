/**
 * @module memory/config
 * Retention and flood-control settings (article Pattern 5) with the article's defaults.
 */
import { MemwardenError } from '../core/errors.js';
import type { SourceTier } from '../core/trust.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface RetentionConfig {
  /** Default TTL per tier in ms; null = never expires. */
  readonly ttlMs: Readonly<Record<SourceTier, number | null>>;
  /** Renew-on-use: a retrieved entry's expiry moves to now + its tier TTL (failure-mode table). */
  readonly renewOnUse: boolean;
  /** Writes per principal per tier per UTC day; null = unlimited. */
  readonly quotaPerDay: Readonly<Record<SourceTier, number | null>>;
  /** Largest accepted content, in UTF-8 bytes. */
  readonly maxContentBytes: number;
  /**
   * SMSR §VIII: a non-OPERATOR write whose embedding has cosine ≥ this to one of the writer's
   * own verified memories is refused (`STORAGE_CONFLICT`, reason `near_duplicate`); null disables.
   */
  readonly nearDuplicateThreshold: number | null;
  /**
   * Untrusted (EXTERNAL_*) content up to this many characters and free of markers may be stored
   * as is when no extractor is configured; longer content is held (`extraction_required`).
   */
  readonly shortFactChars: number;
}

/** The article's Pattern 5 table; EXTERNAL_* quotas are ours (the article names only USER_*). */
export const DEFAULT_RETENTION: RetentionConfig = {
  ttlMs: {
    OPERATOR: null,
    USER_VERIFIED: 365 * DAY,
    USER_OBSERVED: 30 * DAY,
    EXTERNAL_TOOL: 7 * DAY,
    EXTERNAL_WEB: HOUR,
  },
  renewOnUse: true,
  quotaPerDay: {
    OPERATOR: null,
    USER_VERIFIED: 10_000,
    USER_OBSERVED: 50_000,
    EXTERNAL_TOOL: 50_000,
    EXTERNAL_WEB: 20_000,
  },
  maxContentBytes: 64 * 1024,
  nearDuplicateThreshold: 0.97,
  shortFactChars: 500,
};

/** Merge a partial override into the defaults. */
export function retentionConfig(over?: {
  ttlMs?: Partial<Record<SourceTier, number | null>>;
  quotaPerDay?: Partial<Record<SourceTier, number | null>>;
  renewOnUse?: boolean;
  maxContentBytes?: number;
  nearDuplicateThreshold?: number | null;
  shortFactChars?: number;
}): RetentionConfig {
  return {
    ttlMs: { ...DEFAULT_RETENTION.ttlMs, ...over?.ttlMs },
    quotaPerDay: { ...DEFAULT_RETENTION.quotaPerDay, ...over?.quotaPerDay },
    renewOnUse: over?.renewOnUse ?? DEFAULT_RETENTION.renewOnUse,
    maxContentBytes: over?.maxContentBytes ?? DEFAULT_RETENTION.maxContentBytes,
    nearDuplicateThreshold:
      over?.nearDuplicateThreshold === undefined
        ? DEFAULT_RETENTION.nearDuplicateThreshold
        : over.nearDuplicateThreshold,
    shortFactChars: over?.shortFactChars ?? DEFAULT_RETENTION.shortFactChars,
  };
}

/** The longest TTL a caller may ask for: 100 years, in ms. */
export const MAX_TTL_MS = 100 * 365 * DAY;

/**
 * A caller-given TTL in ms: a positive integer number of ms up to {@link MAX_TTL_MS}, or null
 * (never expires) where `allowNull`. Anything else is `INPUT_INVALID` (nothing has changed yet).
 */
export function checkTtlMs(ttlMs: unknown, allowNull: boolean): number | null {
  if (ttlMs === null && allowNull) return null;
  if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_TTL_MS) {
    throw new MemwardenError(
      'INPUT_INVALID',
      `ttlMs must be a positive integer number of milliseconds up to ${MAX_TTL_MS}${allowNull ? ', or null' : ''}`,
      { details: { field: 'ttlMs' } },
    );
  }
  return ttlMs;
}

/** UTC day key for quotas, e.g. `2026-11-21`. */
export function dayKey(nowNs: bigint): string {
  return new Date(Number(nowNs / 1_000_000n)).toISOString().slice(0, 10);
}
