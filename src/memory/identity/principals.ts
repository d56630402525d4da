/**
 * @module memory/identity/principals
 * Principals and bearer API keys for `Memory`: registration (the Ed25519 key is held by the
 * host), key issuance (the secret is returned once; only its SHA-256 is stored) and
 * authentication by exact hash lookup.
 */
import { utf8 } from '../../core/bytes.js';
import { sha256 } from '../../core/crypto/sha256.js';
import { MemwardenError } from '../../core/errors.js';
import type { PrincipalKind } from '../../core/trust.js';
import type { MemoryContext } from '../context.js';

export class Principals {
  constructor(private readonly ctx: MemoryContext) {}

  async create(kind: PrincipalKind, name: string): Promise<{ id: string; kid: string; apiKey: string }> {
    const p = await this.ctx.ledger.registerPrincipal(kind, name);
    const apiKey = await this.issueApiKey(p.id);
    await this.ctx.audit(p.id, 'principal.created', p.id, { kind, name });
    return { id: p.id, kid: p.kid, apiKey };
  }

  async issueApiKey(principalId: string): Promise<string> {
    if ((await this.ctx.storage.getPrincipal(principalId)) === undefined) {
      throw new MemwardenError('PRINCIPAL_UNKNOWN', 'unknown principal');
    }
    const apiKey = `mwk_${Buffer.from(this.ctx.random.randomBytes(32)).toString('base64url')}`;
    await this.ctx.storage.putApiKey({
      principalId,
      keyHash: sha256(utf8.encode(apiKey)),
      createdAtNs: this.ctx.clock.nowNs(),
    });
    return apiKey;
  }

  /** Hash first, then look the hash up exactly: timing does not depend on a partial match. */
  async authenticate(token: string): Promise<string | undefined> {
    if (typeof token !== 'string' || token.length < 8 || token.length > 256) return undefined;
    return this.ctx.storage.findApiKey(sha256(utf8.encode(token)));
  }
}
