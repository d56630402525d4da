/**
 * @module memory/identity/principals
 * Principals and bearer API keys for `Memory`: registration (the Ed25519 key is held by the
 * host), key issuance (the secret is returned once; only its SHA-256 is stored), authentication
 * by exact hash lookup, the operator's administration of principals and keys, and platform keys
 * that act for end users named by a string (issue 24, ADR 0058).
 *
 * Decisions made here:
 * - A key's scope is part of its secret: `mwk_…` acts as its own principal, `mwp_…` (a platform
 *   key) may also act for end users it names. Only the SHA-256 of the whole token is stored, so
 *   a holder cannot turn one kind into the other; the scope is read from the token the caller
 *   presents after its hash was found.
 * - An end user of a platform is a principal of its own whose signing key is derived from the
 *   host's secret, the platform's id, the id's kind and the string (HostKeys.derivedSigningKey):
 *   the same string under the same platform is the same principal on every process, another
 *   platform's "alice" is another principal, and provisioning on first use needs no lookup
 *   table. It is registered like any other principal (RLS isolates it, the tier ceiling of its
 *   kind applies) and audited once as `platform.provisioned`.
 * - Administration (create principals, issue / list / rotate / revoke keys, re-issue a lost one)
 *   is for operator principals only (`AUTH_FORBIDDEN` otherwise). Every key change is a signed
 *   registry statement in the log (`apikey`, `apikey-revoke`, ADR 0070) — what authentication
 *   and the key list decide on — and an audit event (`apikey.issued`, `apikey.revoked`); the
 *   `api_keys` table is a cache `memwarden audit` compares with the statements.
 */
import { toHex, utf8 } from '../../core/bytes.js';
import { keyIdFor, principalIdFor } from '../../core/crypto/ids.js';
import { sha256 } from '../../core/crypto/sha256.js';
import { MemwardenError } from '../../core/errors.js';
import { type PrincipalKind, isPrincipalKind } from '../../core/trust.js';
import type { MemoryContext } from '../context.js';
import type { ViewApiKey } from './registry-view.js';

/** What an API key may do: act as its own principal, or also for a platform's end users. */
export type ApiKeyScope = 'principal' | 'platform';

/** The end user a platform key acts for: exactly one of the three (Mem0's names). */
export interface ActFor {
  readonly userId?: string;
  readonly agentId?: string;
  readonly runId?: string;
}

/** An issued key as listed (never its secret). */
export interface ApiKeyInfo {
  /** Hex SHA-256 of the secret: names the key in list / rotate / revoke. */
  readonly keyId: string;
  readonly principal: string;
  readonly scope: ApiKeyScope;
  /** ISO 8601 issue time. */
  readonly createdAt: string;
  readonly revoked: boolean;
}

/** A newly issued key: the secret, shown once. */
export interface IssuedApiKey extends ApiKeyInfo {
  readonly apiKey: string;
}

/** A principal as the admin API shows it. */
export interface AdminPrincipal {
  readonly id: string;
  readonly kind: PrincipalKind;
  readonly name: string;
  readonly createdAt: string;
}

const PREFIX: Record<ApiKeyScope, string> = { principal: 'mwk_', platform: 'mwp_' };
/** Longest end-user id a platform may name (characters). */
export const MAX_EXTERNAL_ID = 128;
const EXTERNAL_ID_RE = /^[^\p{Cc}\p{Cs}]+$/u;
const KEY_ID_RE = /^[0-9a-f]{64}$/;
/** Shortest and longest operator key accepted from the environment (bootstrap). */
const MIN_GIVEN_KEY = 32;
const MAX_GIVEN_KEY = 256;
const GIVEN_KEY_RE = /^[\x21-\x7e]+$/;
const MAX_CACHED = 10_000;

/** The scope of a presented token (by its prefix; only meaningful once its hash was found). */
export function apiKeyScopeOf(token: string): ApiKeyScope {
  return token.startsWith(PREFIX.platform) ? 'platform' : 'principal';
}

const iso = (ns: bigint): string => new Date(Number(ns / 1_000_000n)).toISOString();
/** The id of a key: hex SHA-256 of its secret (what the admin API names it by). */
export const apiKeyIdOf = (token: string): string => toHex(sha256(utf8.encode(token)));

/** `ActFor` validated: which kind of id, and the string. `INPUT_INVALID` otherwise. */
export function parseActFor(who: ActFor): { tag: 'user' | 'agent' | 'run'; id: string } {
  const given = (
    [
      ['user', who.userId],
      ['agent', who.agentId],
      ['run', who.runId],
    ] as const
  ).filter(([, v]) => v !== undefined);
  if (given.length !== 1) {
    throw new MemwardenError(
      'INPUT_INVALID',
      'name exactly one of user_id, agent_id, run_id to act for',
    );
  }
  const [tag, id] = given[0]!;
  if (
    typeof id !== 'string' ||
    id.length === 0 ||
    id.length > MAX_EXTERNAL_ID ||
    !EXTERNAL_ID_RE.test(id)
  ) {
    throw new MemwardenError(
      'INPUT_INVALID',
      `${tag}_id must be 1..${MAX_EXTERNAL_ID} characters without control characters`,
      { details: { field: `${tag}_id` } },
    );
  }
  return { tag, id };
}

/** Channels that carry the end user in headers (HTTP, MCP over HTTP) use these names. */
/** The headers naming the end user a platform key acts for (Mem0's user_id / agent_id / run_id). */
export const ACT_FOR_HEADERS = {
  userId: 'x-memwarden-user-id',
  agentId: 'x-memwarden-agent-id',
  runId: 'x-memwarden-run-id',
} as const;

/** The end user named by the request's headers, or undefined when it names none. */
export function actForHeaders(get: (name: string) => string | undefined): ActFor | undefined {
  const who: { -readonly [K in keyof ActFor]: string } = {};
  for (const [k, h] of Object.entries(ACT_FOR_HEADERS) as [keyof ActFor, string][]) {
    const v = get(h);
    if (v !== undefined) who[k] = v;
  }
  return Object.keys(who).length === 0 ? undefined : who;
}

/**
 * The principal a request acts as: the key's own, or — when the request names an end user —
 * that user's, which only a platform key (`mwp_…`) may do (`AUTH_FORBIDDEN` otherwise).
 */
export async function actingPrincipal(
  memory: { actFor(platform: string, who: ActFor): Promise<string> },
  token: string,
  keyPrincipal: string,
  who: ActFor | undefined,
): Promise<string> {
  if (who === undefined) return keyPrincipal;
  if (apiKeyScopeOf(token) !== 'platform') {
    throw new MemwardenError(
      'AUTH_FORBIDDEN',
      'only a platform key may act for a user_id / agent_id / run_id',
    );
  }
  return memory.actFor(keyPrincipal, who);
}

export class Principals {
  /** (platform, tag, id) → principal id, for end users already provisioned. */
  private readonly actors = new Map<string, string>();
  private readonly provisioning = new Map<string, Promise<string>>();

  constructor(private readonly ctx: MemoryContext) {}

  async create(
    kind: PrincipalKind,
    name: string,
    opts: { by?: string; scope?: ApiKeyScope; apiKey?: string } = {},
  ): Promise<{ id: string; kid: string; apiKey: string; keyId: string; scope: ApiKeyScope }> {
    if (!isPrincipalKind(kind))
      throw new MemwardenError('PRINCIPAL_INVALID', 'unknown principal kind');
    if (typeof name !== 'string' || name.trim().length === 0)
      throw new MemwardenError('INPUT_INVALID', 'a principal needs a name');
    // Names are unique (issue 24: two principals named alike could not be told apart).
    if ((await this.ctx.storage.listPrincipals()).some((p) => p.name === name)) {
      throw new MemwardenError('PRINCIPAL_ALREADY_REGISTERED', 'a principal has this name', {
        details: { name },
      });
    }
    const p = await this.ctx.ledger.registerPrincipal(kind, name);
    await this.ctx.audit(opts.by ?? p.id, 'principal.created', p.id, { kind, name });
    const key = await this.issue(p.id, {
      by: opts.by ?? p.id,
      scope: opts.scope ?? 'principal',
      ...(opts.apiKey === undefined ? {} : { given: opts.apiKey }),
    });
    return { id: p.id, kid: p.kid, apiKey: key.apiKey, keyId: key.keyId, scope: key.scope };
  }

  async issueApiKey(principalId: string): Promise<string> {
    return (await this.issue(principalId, { by: principalId, scope: 'principal' })).apiKey;
  }

  /** Issue a key for `principalId` (audited as `apikey.issued` by `by`). */
  private async issue(
    principalId: string,
    o: { by: string; scope: ApiKeyScope; given?: string },
  ): Promise<IssuedApiKey> {
    if ((await this.ctx.ledger.getPrincipal(principalId)) === undefined) {
      throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    }
    const apiKey =
      o.given ??
      `${PREFIX[o.scope]}${Buffer.from(this.ctx.random.randomBytes(32)).toString('base64url')}`;
    const createdAtNs = this.ctx.clock.nowNs();
    const keyHash = sha256(utf8.encode(apiKey));
    const keyId = toHex(keyHash);
    const scope = apiKeyScopeOf(apiKey);
    // A signed statement in the log (ADR 0070); the key table row is written in its commit.
    await this.ctx.ledger.issueApiKey({
      principal: principalId,
      keyHash,
      scope,
      by: o.by,
      createdAtNs,
    });
    await this.ctx.audit(o.by, 'apikey.issued', principalId, { keyId, scope });
    return {
      apiKey,
      keyId,
      principal: principalId,
      scope,
      createdAt: iso(createdAtNs),
      revoked: false,
    };
  }

  /**
   * Hash first, then look the hash up exactly: timing does not depend on a partial match. The
   * key counts only as the signed statements state it (ADR 0070): issued to a principal, not
   * revoked, with the scope its secret names — a row inserted, re-opened or re-pointed in the
   * key table at rest authenticates nothing.
   */
  async authenticate(token: string): Promise<string | undefined> {
    if (typeof token !== 'string' || token.length < 8 || token.length > 256) return undefined;
    const k = await this.ctx.ledger.apiKey(toHex(sha256(utf8.encode(token))));
    if (k === undefined || k.revokedAtNs !== undefined || k.scope !== apiKeyScopeOf(token))
      return undefined;
    return k.principal;
  }

  /**
   * The principal of `platform`'s end user named by `who`, registered on first use (audited
   * once as `platform.provisioned`). Every later call with the same name under the same
   * platform is the same principal; nothing else maps to it.
   */
  async actFor(platform: string, who: ActFor): Promise<string> {
    const { tag, id } = parseActFor(who);
    const key = `${platform}\n${tag}\n${id}`;
    const known = this.actors.get(key);
    if (known !== undefined) return known;
    let pending = this.provisioning.get(key);
    if (pending === undefined) {
      pending = this.provision(platform, tag, id).finally(() => this.provisioning.delete(key));
      this.provisioning.set(key, pending);
    }
    const principal = await pending;
    if (this.actors.size >= MAX_CACHED) this.actors.delete(this.actors.keys().next().value!);
    this.actors.set(key, principal);
    return principal;
  }

  private async provision(
    platform: string,
    tag: 'user' | 'agent' | 'run',
    id: string,
  ): Promise<string> {
    const owner = await this.ctx.ledger.getPrincipal(platform);
    if (owner === undefined)
      throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown platform principal');
    const kind: PrincipalKind = tag === 'user' ? 'user' : 'agent';
    const label = `memwarden/platform-principal/v1\n${platform}\n${tag}\n${id}`;
    const { publicKey } = await this.ctx.ledger.keys.derivedSigningKey(label, keyIdFor);
    const principal = principalIdFor(kind, publicKey);
    if ((await this.ctx.ledger.principalKind(principal)) !== undefined) return principal;
    try {
      await this.ctx.ledger.registerPrincipalKey(kind, `${tag}_id:${id}@${platform}`, publicKey);
    } catch (e) {
      // Another request or process provisioned it first: the same principal.
      if (e instanceof MemwardenError && e.code === 'PRINCIPAL_ALREADY_REGISTERED')
        return principal;
      throw e;
    }
    await this.ctx.audit(platform, 'platform.provisioned', principal, { [`${tag}_id`]: id, kind });
    return principal;
  }

  // ---- administration (operators only) ------------------------------------------------------

  private async requireOperator(by: string): Promise<void> {
    // The kind as the signed registry in the log states it, never the principals table (a
    // cache an edit at rest could promote; ADR 0033).
    const kind = typeof by === 'string' ? await this.ctx.ledger.principalKind(by) : undefined;
    if (kind !== 'operator')
      throw new MemwardenError(
        'AUTH_FORBIDDEN',
        'only an operator administers principals and keys',
      );
  }

  async adminCreate(o: {
    by: string;
    kind: PrincipalKind;
    name: string;
    scope?: ApiKeyScope;
  }): Promise<AdminPrincipal & { kid: string } & { key: IssuedApiKey }> {
    await this.requireOperator(o.by);
    const r = await this.create(o.kind, o.name, { by: o.by, scope: o.scope ?? 'principal' });
    const p = await this.ctx.ledger.getPrincipal(r.id);
    const createdAt = iso(p?.createdAtNs ?? this.ctx.clock.nowNs());
    return {
      id: r.id,
      kind: o.kind,
      name: o.name,
      createdAt,
      kid: r.kid,
      key: {
        apiKey: r.apiKey,
        keyId: r.keyId,
        principal: r.id,
        scope: r.scope,
        createdAt,
        revoked: false,
      },
    };
  }

  async adminList(by: string): Promise<AdminPrincipal[]> {
    await this.requireOperator(by);
    // Kinds and registration times from the signed registry; names are the table's labels.
    return (await this.ctx.ledger.listPrincipals()).map((p) => ({
      id: p.id,
      kind: p.kind,
      name: p.name,
      createdAt: iso(p.createdAtNs),
    }));
  }

  /**
   * Issue a key for `principal`; with `revokeOthers` every other listed key of it is revoked
   * first (re-issuing a lost key).
   */
  async adminIssue(o: {
    by: string;
    principal: string;
    scope?: ApiKeyScope;
    revokeOthers?: boolean;
    reason?: string;
  }): Promise<IssuedApiKey> {
    await this.requireOperator(o.by);
    if ((await this.ctx.ledger.getPrincipal(o.principal)) === undefined)
      throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    if (o.revokeOthers === true) {
      for (const k of await this.keysOf(o.principal)) {
        if (!k.revoked) await this.revoke(o.by, k, o.reason ?? 're-issued');
      }
    }
    return this.issue(o.principal, { by: o.by, scope: o.scope ?? 'principal' });
  }

  async adminListKeys(o: { by: string; principal: string }): Promise<ApiKeyInfo[]> {
    await this.requireOperator(o.by);
    if ((await this.ctx.ledger.getPrincipal(o.principal)) === undefined)
      throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    return this.keysOf(o.principal);
  }

  async adminRevoke(o: { by: string; keyId: string; reason?: string }): Promise<ApiKeyInfo> {
    await this.requireOperator(o.by);
    const k = await this.findKey(o.keyId);
    if (k.revoked) throw new MemwardenError('KEY_REVOKED', 'the key is already revoked');
    return this.revoke(o.by, k, o.reason ?? 'revoked by an operator');
  }

  /** A new key of the same principal and scope; the old one is revoked. */
  async adminRotate(o: {
    by: string;
    keyId: string;
  }): Promise<IssuedApiKey & { replaced: string }> {
    await this.requireOperator(o.by);
    const k = await this.findKey(o.keyId);
    if (k.revoked) throw new MemwardenError('KEY_REVOKED', 'the key is already revoked');
    const fresh = await this.issue(k.principal, { by: o.by, scope: k.scope });
    await this.revoke(o.by, k, `rotated to ${fresh.keyId}`);
    return { ...fresh, replaced: k.keyId };
  }

  /**
   * The first operator, when the store has none (`serve`'s bootstrap, issue 24): its key is
   * `apiKey` when given (≥ 32 visible ASCII characters, e.g. from the environment), else new.
   * Undefined when an operator exists already — nothing is created or shown again.
   */
  async bootstrapOperator(apiKey?: string): Promise<{ id: string; apiKey: string } | undefined> {
    if (
      apiKey !== undefined &&
      (apiKey.length < MIN_GIVEN_KEY || apiKey.length > MAX_GIVEN_KEY || !GIVEN_KEY_RE.test(apiKey))
    ) {
      throw new MemwardenError(
        'INPUT_INVALID',
        `an operator key must be ${MIN_GIVEN_KEY}..${MAX_GIVEN_KEY} visible ASCII characters`,
      );
    }
    if ((await this.ctx.ledger.listPrincipals()).some((p) => p.kind === 'operator'))
      return undefined;
    const r = await this.create('operator', 'operator', apiKey === undefined ? {} : { apiKey });
    return { id: r.id, apiKey: r.apiKey };
  }

  private async revoke(by: string, k: ApiKeyInfo, reason: string): Promise<ApiKeyInfo> {
    // A signed statement in the log (ADR 0070); the key table row is marked in its commit.
    await this.ctx.ledger.revokeApiKey(k.keyId, reason, by);
    await this.ctx.audit(by, 'apikey.revoked', k.principal, { keyId: k.keyId, reason });
    return { ...k, revoked: true };
  }

  /** A key by id, as the signed statements state it; `KEY_UNKNOWN` if none issued it. */
  private async findKey(keyId: string): Promise<ApiKeyInfo> {
    if (typeof keyId !== 'string' || !KEY_ID_RE.test(keyId))
      throw new MemwardenError('INPUT_INVALID', 'a key id is 64 lowercase hex digits');
    const k = await this.ctx.ledger.apiKey(keyId);
    if (k === undefined) throw new MemwardenError('KEY_UNKNOWN', 'no such API key');
    return info(k);
  }

  /** Every key issued to `principal`, oldest first, with its state — from the signed statements. */
  private async keysOf(principal: string): Promise<ApiKeyInfo[]> {
    return (await this.ctx.ledger.apiKeysOf(principal)).map(info);
  }
}

function info(k: ViewApiKey): ApiKeyInfo {
  return {
    keyId: k.keyId,
    principal: k.principal,
    scope: k.scope,
    createdAt: iso(k.createdAtNs),
    revoked: k.revokedAtNs !== undefined,
  };
}
