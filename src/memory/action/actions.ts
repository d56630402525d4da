/**
 * @module memory/action/actions
 * The action path (MemLineage §3.7, M6): `Memory.checkAction` runs a proposed tool call through
 * the verifying gate (`verified-gate.ts`: every sealed segment is re-verified against its signed
 * record before the pure decision) and writes exactly one audit record per decision.
 */
import { type ParameterSource, type Verdict, Gate } from '../../core/gate/index.js';
import type { LineageOptions } from '../../core/lineage/index.js';
import type { JsonValue, StorageBackend } from '../../ports/storage.js';
import type { CheckActionInput } from '../api.js';
import { DEFAULT_POLICY } from './default-policy.js';
import type { Ledger } from '../log/ledger.js';
import { VerifiedGate } from './verified-gate.js';

/** Audit sink: `Memory`'s audit writer. */
export type AuditWriter = (
  actor: string,
  action: string,
  subject: string,
  details: { readonly [k: string]: JsonValue },
) => Promise<void>;

/** Build the gate for a policy document (default {@link DEFAULT_POLICY}); `POLICY_INVALID`. */
export function gateFor(policy: unknown, lineage: LineageOptions): Gate {
  return Gate.fromDocument(policy ?? DEFAULT_POLICY, { lineage });
}

export class ActionChecker {
  readonly gate: VerifiedGate;
  readonly #audit: AuditWriter;

  constructor(gate: Gate, ledger: Ledger, audit: AuditWriter, lineage: LineageOptions) {
    this.gate = new VerifiedGate({ gate, ledger, lineage });
    this.#audit = audit;
  }

  async check(view: StorageBackend, input: CheckActionInput): Promise<Verdict> {
    const { forgedSegments, ...verdict } = await this.gate.decideIn(view, {
      principal: input.principal,
      call: input.call,
      context: input.context,
      seal: input.seal,
      ...(input.sources === undefined
        ? {}
        : { sources: input.sources as Record<string, readonly ParameterSource[]> }),
      ...(input.userRequest === undefined ? {} : { userRequest: input.userRequest }),
    });
    const tool = typeof input.call?.tool === 'string' ? input.call.tool : '';
    const audit = toJson(verdict.audit) as { [k: string]: JsonValue };
    if (forgedSegments.length > 0) audit['forged_segments'] = [...forgedSegments];
    await this.#audit(input.principal, `gate.${verdict.kind}`, tool, audit);
    return verdict;
  }
}

/** The audit record as JSON (repair values are arbitrary caller JSON; undefined dropped). */
function toJson(x: unknown): JsonValue {
  try {
    return JSON.parse(JSON.stringify(x) ?? 'null') as JsonValue;
  } catch {
    return null;
  }
}
