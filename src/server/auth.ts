/**
 * @module server/auth
 * Bearer API keys. The service never compares a presented secret with a stored one byte by
 * byte: it hashes the presented token with SHA-256 and looks the hash up, so the time taken
 * depends on the hash (unpredictable to the caller), not on how much of a real key was
 * guessed. The in-memory authenticator compares hashes in constant time and always scans
 * every key.
 */
import { hash } from 'node:crypto';
import { constantTimeEqual, toHex, utf8 } from '../core/bytes.js';
import { sha256 } from '../core/crypto/sha256.js';

/** Resolves a bearer token to a principal id, or `undefined` when it is unknown. */
export interface Authenticator {
  /**
   * @returns the principal id, or `undefined` for an unknown token. May throw a coded
   * MemwardenError (`KEY_REVOKED`, `KEY_EXPIRED`) to say why a known key is refused.
   */
  authenticate(bearerToken: string): Promise<string | undefined>;
}

/** The stored form of an API key: lowercase hex SHA-256 of its UTF-8 bytes. */
export function hashApiKey(token: string): string {
  return toHex(sha256(utf8.encode(token)));
}

/** Longest token accepted; anything longer is refused before hashing. */
export const MAX_BEARER_TOKEN_LENGTH = 512;
const TOKEN_RE = /^[\x21-\x7e]+$/;

/**
 * The token of an `Authorization: Bearer <token>` header, or `undefined` when the header is
 * absent or malformed (scheme case-insensitive per RFC 7235 §2.1; visible ASCII only).
 */
export function parseBearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer +(\S+) *$/i.exec(header);
  const token = m?.[1];
  if (token === undefined || token.length > MAX_BEARER_TOKEN_LENGTH || !TOKEN_RE.test(token))
    return undefined;
  return token;
}

/**
 * An authenticator over a lookup by key hash — what the storage-backed key table offers
 * (`SELECT principal FROM api_keys WHERE key_sha256 = $1 AND NOT revoked`).
 */
export function createHashedKeyAuthenticator(
  lookupByHash: (keySha256Hex: string) => Promise<string | undefined>,
): Authenticator {
  return { authenticate: (token) => lookupByHash(hashApiKey(token)) };
}

/**
 * A fixed set of keys, held only as hashes (development, tests, a single-tenant deployment).
 * Every stored hash is compared, in constant time, whatever matches.
 */
export function createStaticKeyAuthenticator(
  keys: Readonly<Record<string, string>>,
): Authenticator {
  const table = Object.entries(keys).map(([principal, key]) => ({
    principal,
    hash: sha256(utf8.encode(key)),
  }));
  return {
    authenticate: async (token) => {
      const h = sha256(utf8.encode(token));
      let found: string | undefined;
      for (const k of table)
        if (constantTimeEqual(k.hash, h) && found === undefined) found = k.principal;
      return found;
    },
  };
}

/** How long `serve` reuses a successful key lookup by default (ms). */
export const DEFAULT_AUTH_CACHE_TTL_MS = 5_000;

export interface CachedAuthenticatorOptions {
  /** How long a successful lookup is reused, in ms (default 5,000; 0 disables the cache). */
  readonly ttlMs?: number;
  /** Most keys remembered (default 10,000); the oldest is dropped first. */
  readonly maxEntries?: number;
  /** Monotonic milliseconds (tests inject a fake). */
  readonly now?: () => number;
}

/**
 * Reuse successful key lookups for a short time, so a busy client does not cost a database
 * round trip per request. Safe by construction:
 * - only successes are cached — an unknown, revoked or expired key goes to `inner` every
 *   time, so guessing fills nothing and a refusal is never remembered as an acceptance;
 * - entries are keyed by SHA-256 of the token (node:crypto), never the token itself;
 * - a key revoked in storage stops working after at most `ttlMs` (also on other processes
 *   sharing the database); call `forget()` to drop everything at once (e.g. after revoking
 *   through this process).
 */
export function createCachedAuthenticator(
  inner: Authenticator,
  opts: CachedAuthenticatorOptions = {},
): Authenticator & { forget(): void } {
  const ttl = opts.ttlMs ?? DEFAULT_AUTH_CACHE_TTL_MS;
  const max = opts.maxEntries ?? 10_000;
  const now = opts.now ?? (() => performance.now());
  const cache = new Map<string, { principal: string; until: number }>();
  return {
    authenticate: async (token) => {
      if (ttl <= 0) return inner.authenticate(token);
      const k = hash('sha256', token, 'base64'); // one-shot: no Hash object per request
      const hit = cache.get(k);
      const t = now();
      if (hit !== undefined) {
        if (hit.until > t) return hit.principal;
        cache.delete(k);
      }
      const principal = await inner.authenticate(token);
      if (principal !== undefined) {
        if (cache.size >= max) {
          const oldest = cache.keys().next();
          if (oldest.done !== true) cache.delete(oldest.value);
        }
        cache.set(k, { principal, until: now() + ttl });
      }
      return principal;
    },
    forget: () => cache.clear(),
  };
}
