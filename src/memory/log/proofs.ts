/**
 * @module memory/log/proofs
 * Inclusion proofs, checkpoints and consistency proofs for `Memory` (JSON views over the
 * ledger's Merkle log). A consistency proof is self-checked before it is served.
 */
import { toBase64 } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import { verifyConsistency } from '../../core/merkle/index.js';
import type { CheckpointView, ConsistencyProofView, InclusionProofView } from '../api.js';
import type { MemoryContext } from '../context.js';
import { toCheckpointView } from '../read/records.js';

export async function inclusionProof(
  ctx: MemoryContext,
  id: string,
  principal: string,
): Promise<InclusionProofView> {
  const visible = await ctx.view(principal).getEntry(id);
  if (visible === undefined)
    throw new MemwardenError('STORAGE_NOT_FOUND', 'no such memory', { details: { id } });
  let p;
  try {
    p = await ctx.ledger.proveEntry(id);
  } catch (e) {
    // The stored tree cannot prove it: nothing is served, and the read path reports the
    // entry unverified from now on (the ledger remembers it).
    if (e instanceof MemwardenError && e.code === 'LOG_PROOF_INVALID')
      await ctx.audit(principal, 'entry.dropped', id, { code: e.code, stage: 'inclusion' });
    throw e;
  }
  return {
    leafIndex: p.leafIndex,
    treeSize: p.treeSize,
    leafHash: toBase64(p.leafHash),
    hashes: p.hashes.map(toBase64),
    checkpoint: toCheckpointView(ctx.ledger.log.origin, p.checkpoint),
  };
}

export async function currentCheckpoint(ctx: MemoryContext): Promise<CheckpointView> {
  return toCheckpointView(ctx.ledger.log.origin, await ctx.ledger.checkpoint());
}

export async function consistencyProof(
  ctx: MemoryContext,
  from: number,
  to: number,
): Promise<ConsistencyProofView> {
  const cp = await ctx.ledger.checkpoint();
  if (
    !Number.isSafeInteger(from) ||
    !Number.isSafeInteger(to) ||
    from < 1 ||
    to < from ||
    to > cp.size
  ) {
    throw new MemwardenError('LOG_SIZE_INVALID', `need 1 ≤ from ≤ to ≤ ${cp.size}`);
  }
  const target = to === cp.size ? cp : await ctx.storage.getCheckpoint(to);
  const hashes = await ctx.ledger.log.consistencyProof(from, to);
  const view = target ?? {
    size: to,
    root: await ctx.ledger.log.root(to),
    note: '',
    createdAtNs: 0n,
  };
  // Self-check before serving: a proof the log cannot verify is a corrupt log.
  const old = await ctx.ledger.log.root(from);
  if (!verifyConsistency(from, to, hashes, old, view.root) && from !== to) {
    throw new MemwardenError('LOG_CORRUPT', 'consistency self-check failed');
  }
  return {
    from,
    to,
    hashes: hashes.map(toBase64),
    checkpoint: toCheckpointView(ctx.ledger.log.origin, view),
  };
}
