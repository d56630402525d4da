/**
 * @module memory/read/inspect
 * Read-only views for review and audit (the console's reads): an entry's ancestor DAG with
 * every node re-verified, and the sensitive-action gate's recorded decisions.
 *
 * Scoping follows the rest of the memory layer: ancestors are loaded through the principal's
 * view (row-level security decides what is visible), and gate decisions — written by the
 * system scope as `gate.<verdict>` audit events, one per `checkAction` — are read for the
 * calling principal only, except by an operator, who sees every principal's decisions (as it
 * sees every review item).
 */
import type { PrincipalKind } from '../../core/trust.js';
import type { AuditEvent, JsonValue, StorageBackend } from '../../ports/storage.js';
import type { GateDecision, LineageEdge, LineageGraph, LineageNode } from '../api.js';
import type { Ledger } from '../log/ledger.js';
import { nsToIso, toMemoryRecord } from './records.js';

/** Most ancestors one lineage view walks (the graph is cut there and marked `truncated`). */
export const MAX_LINEAGE_NODES = 200;
/** Most gate decisions one call returns. */
export const MAX_GATE_DECISIONS = 1000;

/**
 * The ancestors of `id` (the entry itself at depth 0), breadth first through the signed
 * `parents` of each verified node. A parent that is not visible to the principal is a
 * `missing` node (its id is already in the child's signed record, so naming it leaks
 * nothing); one that fails verification is `unverified` with the failure code and its own
 * parents are not followed (nothing is taken from an unverified record).
 */
export async function lineageOf(
  view: StorageBackend,
  ledger: Ledger,
  id: string,
  nowNs: bigint,
  maxNodes = MAX_LINEAGE_NODES,
): Promise<LineageGraph | undefined> {
  const nodes: LineageNode[] = [];
  const edges: LineageEdge[] = [];
  const depth = new Map<string, number>([[id, 0]]);
  const queue = [id];
  let truncated = false;
  for (let i = 0; i < queue.length; i++) {
    const cur = queue[i] as string;
    const d = depth.get(cur) ?? 0;
    const stored = await view.getEntry(cur);
    if (stored === undefined) {
      if (i === 0) return undefined;
      nodes.push({ id: cur, depth: d, state: 'missing' });
      continue;
    }
    const v = await ledger.verifyStored(stored);
    if (!v.ok) {
      nodes.push({ id: cur, depth: d, state: 'unverified', code: v.code });
      continue;
    }
    // The status as the log states it, never the state columns (issue 24); a row whose
    // columns disagree with the signed records is unverified (`ENTRY_INVALID`).
    const state = await ledger.signedState(stored, v.entry, nowNs);
    if (state.tampered !== undefined) {
      nodes.push({ id: cur, depth: d, state: 'unverified', code: 'ENTRY_INVALID' });
      continue;
    }
    const status = state.status;
    nodes.push({
      id: cur,
      depth: d,
      state: 'verified',
      status,
      memory: toMemoryRecord(v.entry, v.leafIndex, stored.bytes, stored.expiresAtNs),
    });
    v.entry.parents.forEach((p, k) => {
      edges.push({ child: cur, parent: p, weight: v.entry.weights[k] ?? 0 });
      if (depth.has(p)) return;
      if (depth.size >= maxNodes) {
        truncated = true;
        return;
      }
      depth.set(p, d + 1);
      queue.push(p);
    });
  }
  // Edges to parents cut by the bound would dangle: keep only edges between listed nodes.
  const listed = new Set(nodes.map((n) => n.id));
  return {
    root: id,
    nodes,
    edges: edges.filter((e) => listed.has(e.parent)),
    truncated,
  };
}

/**
 * The newest gate decisions first: every principal's for an operator, otherwise the
 * caller's own. `limit` is clamped to [1, {@link MAX_GATE_DECISIONS}].
 */
export async function gateDecisions(
  system: StorageBackend,
  principal: string,
  kind: PrincipalKind | undefined,
  limit = 100,
): Promise<GateDecision[]> {
  const n = Math.min(Math.max(Math.trunc(limit) || 1, 1), MAX_GATE_DECISIONS);
  const events = await system.listAudit({
    limit: n,
    actionPrefix: 'gate.',
    newestFirst: true,
    ...(kind === 'operator' ? {} : { actor: principal }),
  });
  return events.map(toGateDecision);
}

function str(x: JsonValue | undefined): string | undefined {
  return typeof x === 'string' ? x : undefined;
}

function toGateDecision(e: AuditEvent): GateDecision {
  const d = e.details;
  const weakest = str(d['weakestLabel']);
  return {
    id: e.id,
    at: nsToIso(e.atNs),
    principal: e.actor,
    tool: str(d['tool']) ?? e.subject ?? '',
    verdict: e.action.slice('gate.'.length),
    reason: str(d['reason']) ?? '',
    sensitive: d['sensitive'] === true,
    ...(weakest === undefined ? {} : { weakestLabel: weakest }),
    audit: d,
  };
}
