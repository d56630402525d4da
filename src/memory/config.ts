/**
 * @module memory/config
 * Retention and flood-control settings (article Pattern 5) and the write path's input limits.
 *
 * The TTLs are the article's table. The quotas are NOT: the article allows 50 USER_OBSERVED and
 * 10 USER_VERIFIED writes per principal per day (a chat assistant's human user); an agent
 * platform writes far more, so the defaults are 1,000× that table (and ours for the tiers the
 * article does not name). Deployments set their own (`retentionConfig({ quotaPerDay })`,
 * `memwarden serve --quota TIER=N` or `--config FILE`; `ARTICLE_QUOTAS` is the article's table).
 * docs/adr/0031-write-limits-ttl-ceilings-and-quotas.md has the reasoning and the figures.
 */
import { MemwardenError } from '../core/errors.js';
import { SourceTiers, type SourceTier } from '../core/trust.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Bounds on every caller-supplied string of a write, in Unicode code points AND in UTF-8
 * bytes (storage limits are in bytes: the database's B-tree index on `uri` overflows at about
 * 2,700 bytes, and one such row would fail a whole group commit). Over a bound:
 * `INPUT_TOO_LARGE` with `{ field, limit, unit }`; NUL or a lone surrogate: `INPUT_INVALID`.
 */
export interface WriteLimits {
  /** Content (the signed text): UTF-8 bytes (code points are never more). */
  readonly contentBytes: number;
  /** Source URI: code points and bytes (well below the `uri` index's ~2,700 bytes). */
  readonly sourceCodePoints: number;
  readonly sourceBytes: number;
  /** Entry kind. */
  readonly kindCodePoints: number;
  readonly kindBytes: number;
  /** Thread id (lineage auto-attribution key). */
  readonly threadIdCodePoints: number;
  readonly threadIdBytes: number;
  /** Reasons (update, delete, review decisions). */
  readonly reasonCodePoints: number;
  readonly reasonBytes: number;
  /** Names: graph entity names and types, relation types. */
  readonly nameCodePoints: number;
  readonly nameBytes: number;
  /** One graph observation's text. */
  readonly observationCodePoints: number;
  readonly observationBytes: number;
  /** Nesting depth of structured (JSON) values: request bodies, store values. */
  readonly jsonDepth: number;
  /** Graph objects one knowledge-graph tool call may write (the rest of the call is refused). */
  readonly graphObjectsPerCall: number;
}

export const DEFAULT_WRITE_LIMITS: WriteLimits = {
  contentBytes: 64 * 1024,
  sourceCodePoints: 2048,
  sourceBytes: 2048,
  kindCodePoints: 64,
  kindBytes: 256,
  threadIdCodePoints: 256,
  threadIdBytes: 1024,
  reasonCodePoints: 512,
  reasonBytes: 2048,
  nameCodePoints: 256,
  nameBytes: 1024,
  observationCodePoints: 4096,
  observationBytes: 16 * 1024,
  jsonDepth: 32,
  graphObjectsPerCall: 256,
};

export interface RetentionConfig {
  /** Default TTL per tier in ms; null = never expires. */
  readonly ttlMs: Readonly<Record<SourceTier, number | null>>;
  /**
   * The longest TTL a write of each tier may carry, in ms; null = no ceiling (a caller may ask
   * for `ttlMs: null`, never expires). Untrusted tiers have one by default: no immortal
   * untrusted memory unless an operator's configuration removes it. A longer (or null) TTL is
   * refused (`INPUT_INVALID`, reason `ttl_ceiling`), never silently shortened.
   */
  readonly ttlCeilingMs: Readonly<Record<SourceTier, number | null>>;
  /** Renew-on-use: a retrieved entry's expiry moves to now + its tier TTL (failure-mode table). */
  readonly renewOnUse: boolean;
  /** Writes per principal per tier per UTC day; null = unlimited. */
  readonly quotaPerDay: Readonly<Record<SourceTier, number | null>>;
  /** Largest accepted content, in UTF-8 bytes (= `limits.contentBytes`). */
  readonly maxContentBytes: number;
  /** Bounds on every caller-supplied string of a write. */
  readonly limits: WriteLimits;
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

/** The article's Pattern 5 rate limits (USER_* only; the other tiers unlimited). */
export const ARTICLE_QUOTAS: Readonly<Record<SourceTier, number | null>> = {
  OPERATOR: null,
  USER_VERIFIED: 10,
  USER_OBSERVED: 50,
  EXTERNAL_TOOL: null,
  EXTERNAL_WEB: null,
};

/**
 * The defaults: the article's TTL table; quotas 1,000× the article's (see the module comment);
 * TTL ceilings on the untrusted tiers only.
 */
export const DEFAULT_RETENTION: RetentionConfig = {
  ttlMs: {
    OPERATOR: null,
    USER_VERIFIED: 365 * DAY,
    USER_OBSERVED: 30 * DAY,
    EXTERNAL_TOOL: 7 * DAY,
    EXTERNAL_WEB: HOUR,
  },
  ttlCeilingMs: {
    OPERATOR: null,
    USER_VERIFIED: null,
    USER_OBSERVED: null,
    EXTERNAL_TOOL: 30 * DAY,
    EXTERNAL_WEB: 7 * DAY,
  },
  renewOnUse: true,
  quotaPerDay: {
    OPERATOR: null,
    USER_VERIFIED: 10_000,
    USER_OBSERVED: 50_000,
    EXTERNAL_TOOL: 50_000,
    EXTERNAL_WEB: 20_000,
  },
  maxContentBytes: DEFAULT_WRITE_LIMITS.contentBytes,
  limits: DEFAULT_WRITE_LIMITS,
  nearDuplicateThreshold: 0.97,
  shortFactChars: 500,
};

/** What a deployment may override (every field optional; see {@link retentionConfig}). */
export interface RetentionOverrides {
  ttlMs?: Partial<Record<SourceTier, number | null>>;
  ttlCeilingMs?: Partial<Record<SourceTier, number | null>>;
  quotaPerDay?: Partial<Record<SourceTier, number | null>>;
  renewOnUse?: boolean;
  maxContentBytes?: number;
  limits?: Partial<WriteLimits>;
  nearDuplicateThreshold?: number | null;
  shortFactChars?: number;
}

/**
 * Merge a partial override into the defaults, checked: quotas are non-negative integers or
 * null, TTLs positive integers of ms (≤ {@link MAX_TTL_MS}) or null, every tier's default TTL
 * within its ceiling, limits positive integers. A bad setting is `INPUT_INVALID` naming it.
 */
export function retentionConfig(over?: RetentionOverrides): RetentionConfig {
  const limits: WriteLimits = {
    ...DEFAULT_WRITE_LIMITS,
    ...(over?.maxContentBytes === undefined ? {} : { contentBytes: over.maxContentBytes }),
    ...over?.limits,
  };
  for (const [k, v] of Object.entries(limits))
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
      bad(`limits.${k}`, 'a positive integer');
  const r: RetentionConfig = {
    ttlMs: { ...DEFAULT_RETENTION.ttlMs, ...over?.ttlMs },
    ttlCeilingMs: { ...DEFAULT_RETENTION.ttlCeilingMs, ...over?.ttlCeilingMs },
    quotaPerDay: { ...DEFAULT_RETENTION.quotaPerDay, ...over?.quotaPerDay },
    renewOnUse: over?.renewOnUse ?? DEFAULT_RETENTION.renewOnUse,
    maxContentBytes: limits.contentBytes,
    limits,
    nearDuplicateThreshold:
      over?.nearDuplicateThreshold === undefined
        ? DEFAULT_RETENTION.nearDuplicateThreshold
        : over.nearDuplicateThreshold,
    shortFactChars: over?.shortFactChars ?? DEFAULT_RETENTION.shortFactChars,
  };
  for (const t of SourceTiers) {
    const q = r.quotaPerDay[t];
    if (q !== null && (typeof q !== 'number' || !Number.isSafeInteger(q) || q < 0))
      bad(`quotaPerDay.${t}`, 'a non-negative integer or null');
    const ttl = r.ttlMs[t];
    const ceiling = r.ttlCeilingMs[t];
    if (ttl !== null) checkTtlMs(ttl, false, `ttlMs.${t}`);
    if (ceiling !== null) checkTtlMs(ceiling, false, `ttlCeilingMs.${t}`);
    if (ceiling !== null && (ttl === null || ttl > ceiling))
      bad(`ttlMs.${t}`, `within ttlCeilingMs.${t} (${ceiling} ms)`);
  }
  const nd = r.nearDuplicateThreshold;
  if (nd !== null && (typeof nd !== 'number' || !(nd > 0 && nd <= 1)))
    bad('nearDuplicateThreshold', 'a number in (0, 1] or null');
  if (!Number.isSafeInteger(r.shortFactChars) || r.shortFactChars < 0)
    bad('shortFactChars', 'a non-negative integer');
  return r;
}

function bad(field: string, what: string): never {
  throw new MemwardenError('INPUT_INVALID', `retention setting ${field} must be ${what}`, {
    details: { field },
  });
}

/**
 * A retention override from JSON (a config file: `{ "retention": { … } }`'s inner object, or
 * `serve` flags): every key checked, unknown keys refused, durations in ms. `INPUT_INVALID`
 * naming the field otherwise. The result still goes through {@link retentionConfig}.
 */
export function parseRetentionOverrides(json: unknown): RetentionOverrides {
  const obj = (v: unknown, field: string): Record<string, unknown> => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) bad(field, 'an object');
    return v as Record<string, unknown>;
  };
  const tiers = (v: unknown, field: string): Partial<Record<SourceTier, number | null>> => {
    const o = obj(v, field);
    const out: Partial<Record<SourceTier, number | null>> = {};
    for (const [k, x] of Object.entries(o)) {
      if (!(SourceTiers as readonly string[]).includes(k)) bad(`${field}.${k}`, 'a source tier');
      if (x !== null && typeof x !== 'number') bad(`${field}.${k}`, 'a number or null');
      out[k as SourceTier] = x as number | null;
    }
    return out;
  };
  const o = obj(json, 'retention');
  const out: RetentionOverrides = {};
  for (const [k, v] of Object.entries(o)) {
    switch (k) {
      case 'ttlMs':
      case 'ttlCeilingMs':
      case 'quotaPerDay':
        out[k] = tiers(v, k);
        break;
      case 'renewOnUse':
        if (typeof v !== 'boolean') bad(k, 'a boolean');
        out.renewOnUse = v;
        break;
      case 'maxContentBytes':
      case 'shortFactChars':
        if (typeof v !== 'number') bad(k, 'a number');
        out[k] = v;
        break;
      case 'nearDuplicateThreshold':
        if (v !== null && typeof v !== 'number') bad(k, 'a number or null');
        out.nearDuplicateThreshold = v;
        break;
      case 'limits': {
        const l = obj(v, 'limits');
        const lim: Partial<Record<keyof WriteLimits, number>> = {};
        for (const [lk, lv] of Object.entries(l)) {
          if (!Object.hasOwn(DEFAULT_WRITE_LIMITS, lk)) bad(`limits.${lk}`, 'a known limit');
          if (typeof lv !== 'number') bad(`limits.${lk}`, 'a number');
          lim[lk as keyof WriteLimits] = lv;
        }
        out.limits = lim;
        break;
      }
      default:
        bad(k, 'a known setting');
    }
  }
  retentionConfig(out); // checked as a whole now, so a bad file fails at start-up
  return out;
}

/** Merge overrides in order (later wins, per tier / per limit). */
export function mergeRetentionOverrides(
  ...os: readonly (RetentionOverrides | undefined)[]
): RetentionOverrides {
  const out: RetentionOverrides = {};
  for (const o of os) {
    if (o === undefined) continue;
    for (const k of ['ttlMs', 'ttlCeilingMs', 'quotaPerDay'] as const)
      if (o[k] !== undefined) out[k] = { ...out[k], ...o[k] };
    if (o.limits !== undefined) out.limits = { ...out.limits, ...o.limits };
    for (const k of [
      'renewOnUse',
      'maxContentBytes',
      'nearDuplicateThreshold',
      'shortFactChars',
    ] as const)
      if (o[k] !== undefined) (out as Record<string, unknown>)[k] = o[k];
  }
  return out;
}

/** The longest TTL a caller may ask for: 100 years, in ms. */
export const MAX_TTL_MS = 100 * 365 * DAY;

/**
 * A caller-given TTL in ms: a positive integer number of ms up to {@link MAX_TTL_MS}, or null
 * (never expires) where `allowNull`. Anything else is `INPUT_INVALID` (nothing has changed yet).
 */
export function checkTtlMs(ttlMs: unknown, allowNull: boolean, field = 'ttlMs'): number | null {
  if (ttlMs === null && allowNull) return null;
  if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_TTL_MS) {
    throw new MemwardenError(
      'INPUT_INVALID',
      `${field} must be a positive integer number of milliseconds up to ${MAX_TTL_MS}${allowNull ? ', or null' : ''}`,
      { details: { field } },
    );
  }
  return ttlMs;
}

/** UTC day key for quotas, e.g. `2026-11-21`. */
export function dayKey(nowNs: bigint): string {
  return new Date(Number(nowNs / 1_000_000n)).toISOString().slice(0, 10);
}
