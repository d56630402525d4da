/**
 * @module adapters/sql/registry
 * Principal and key registry queries. Registration never overwrites (primary keys turn a
 * second insert into `STORAGE_CONFLICT`), and a key's validity only ever narrows: `closeKey`
 * locks the row, refuses to change a field that is already set, and fills only empty ones.
 */
import { MemwardenError } from '../../core/errors.js';
import { PrincipalKinds, type PrincipalKind } from '../../core/trust.js';
import type { KeyRecord, PrincipalRecord } from '../../ports/storage.js';
import { bigIn, bigOut, bigOutOpt, bytesIn, bytesOut, numOut, strOut } from './codec.js';
import type { Queryable } from './queryable.js';

/** The narrowing patch `closeKey` accepts (mirrors the port). */
export interface KeyPatch {
  validUntilNs?: bigint;
  revokedAtNs?: bigint;
  revokedAtLogSize?: number;
  revocationReason?: string;
}

export async function insertPrincipal(
  q: Queryable,
  p: PrincipalRecord,
  firstKey: KeyRecord,
): Promise<void> {
  if (firstKey.principalId !== p.id)
    throw new MemwardenError('STORAGE_FAILED', 'first key names another principal');
  await q.query('INSERT INTO principals (id, kind, name, created_ns) VALUES ($1, $2, $3, $4)', [
    p.id,
    p.kind,
    p.name,
    bigIn(p.createdAtNs),
  ]);
  await insertKey(q, firstKey);
}

function principalOut(r: Record<string, unknown>): PrincipalRecord {
  const kind = strOut(r.kind);
  if (!(PrincipalKinds as readonly string[]).includes(kind))
    throw new MemwardenError('STORAGE_FAILED', 'bad principal kind');
  return {
    id: strOut(r.id),
    kind: kind as PrincipalKind,
    name: strOut(r.name),
    createdAtNs: bigOut(r.created_ns),
  };
}

export async function getPrincipal(q: Queryable, id: string): Promise<PrincipalRecord | undefined> {
  const { rows } = await q.query(
    'SELECT id, kind, name, created_ns FROM principals WHERE id = $1',
    [id],
  );
  return rows.length === 0 ? undefined : principalOut(rows[0]!);
}

export async function listPrincipals(q: Queryable): Promise<PrincipalRecord[]> {
  const { rows } = await q.query(
    'SELECT id, kind, name, created_ns FROM principals ORDER BY created_ns, id',
  );
  return rows.map(principalOut);
}

export async function insertKey(q: Queryable, k: KeyRecord): Promise<void> {
  await q.query(
    `INSERT INTO keys (kid, principal_id, alg, public_key, valid_from_ns, valid_until_ns, revoked_at_ns,
                       revoked_at_log_size, revocation_reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      k.kid,
      k.principalId,
      k.alg,
      bytesIn(k.publicKey),
      bigIn(k.validFromNs),
      bigIn(k.validUntilNs),
      bigIn(k.revokedAtNs),
      k.revokedAtLogSize ?? null,
      k.revocationReason ?? null,
    ],
  );
}

const KEY_COLS =
  'kid, principal_id, alg, public_key, valid_from_ns, valid_until_ns, revoked_at_ns, revoked_at_log_size, revocation_reason';

function keyOut(r: Record<string, unknown>): KeyRecord {
  if (r.alg !== 'ed25519') throw new MemwardenError('STORAGE_FAILED', 'bad key algorithm');
  const validUntilNs = bigOutOpt(r.valid_until_ns);
  const revokedAtNs = bigOutOpt(r.revoked_at_ns);
  // exactOptionalPropertyTypes: absent fields are omitted, never present-but-undefined.
  return {
    kid: strOut(r.kid),
    principalId: strOut(r.principal_id),
    alg: 'ed25519',
    publicKey: bytesOut(r.public_key),
    validFromNs: bigOut(r.valid_from_ns),
    ...(validUntilNs === undefined ? {} : { validUntilNs }),
    ...(revokedAtNs === undefined ? {} : { revokedAtNs }),
    ...(r.revoked_at_log_size === null ? {} : { revokedAtLogSize: numOut(r.revoked_at_log_size) }),
    ...(r.revocation_reason === null ? {} : { revocationReason: strOut(r.revocation_reason) }),
  };
}

export async function getKey(q: Queryable, kid: string): Promise<KeyRecord | undefined> {
  const { rows } = await q.query(`SELECT ${KEY_COLS} FROM keys WHERE kid = $1`, [kid]);
  return rows.length === 0 ? undefined : keyOut(rows[0]!);
}

export async function keysOf(q: Queryable, principalId: string): Promise<KeyRecord[]> {
  const { rows } = await q.query(
    `SELECT ${KEY_COLS} FROM keys WHERE principal_id = $1 ORDER BY valid_from_ns, kid`,
    [principalId],
  );
  return rows.map(keyOut);
}

/** Throws STORAGE_CONFLICT if `patch` would change a field of `k` that is already set. */
export function assertNarrowing(k: KeyRecord, patch: KeyPatch): void {
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if ((k as unknown as Record<string, unknown>)[field] !== undefined) {
      throw new MemwardenError('STORAGE_CONFLICT', `key ${k.kid}: ${field} is already set`);
    }
  }
}

export async function closeKey(q: Queryable, kid: string, patch: KeyPatch): Promise<void> {
  const { rows } = await q.query(`SELECT ${KEY_COLS} FROM keys WHERE kid = $1 FOR UPDATE`, [kid]);
  if (rows.length === 0) throw new MemwardenError('STORAGE_NOT_FOUND', `key ${kid} not found`);
  assertNarrowing(keyOut(rows[0]!), patch);
  // COALESCE fills only the fields the patch sets; the check above proved they were empty.
  await q.query(
    `UPDATE keys SET valid_until_ns      = COALESCE($2::bigint, valid_until_ns),
                     revoked_at_ns       = COALESCE($3::bigint, revoked_at_ns),
                     revoked_at_log_size = COALESCE($4::bigint, revoked_at_log_size),
                     revocation_reason   = COALESCE($5::text, revocation_reason)
     WHERE kid = $1`,
    [
      kid,
      bigIn(patch.validUntilNs),
      bigIn(patch.revokedAtNs),
      patch.revokedAtLogSize ?? null,
      patch.revocationReason ?? null,
    ],
  );
}
