/**
 * @module memory/actions
 * The action path (MemLineage §3.7, M6): `Memory.checkAction` runs a proposed tool call through
 * the sensitive-action gate and writes the verdict's audit record.
 *
 * The gate itself is pure and never sees the store. The one thing it needs from memory is the
 * §6.6 strict knob's "does this entry have parents?": when parentless sensitive deny is on, the
 * segments sealed in the context are loaded through the principal's view, verified, and their
 * signed `parents` consulted. A segment that does not load or verify counts as parentless
 * (fail closed).
 */
import { parseSegments } from '../core/render/sentinel.js';
import { type DecideInput, type ParameterSource, type Verdict, Gate } from '../core/gate/index.js';
import type { LineageOptions } from '../core/lineage/index.js';
import type { JsonValue, StorageBackend } from '../ports/storage.js';
import type { CheckActionInput } from './api.js';
import { DEFAULT_POLICY } from './default-policy.js';
import type { Ledger } from './ledger.js';

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
  readonly gate: Gate;
  readonly #ledger: Ledger;
  readonly #audit: AuditWriter;
  readonly #parentlessDeny: boolean;

  constructor(gate: Gate, ledger: Ledger, audit: AuditWriter, lineage: LineageOptions) {
    this.gate = gate;
    this.#ledger = ledger;
    this.#audit = audit;
    this.#parentlessDeny = gate.policy.parentlessSensitiveDeny || lineage.parentlessSensitiveDeny;
  }

  async check(view: StorageBackend, input: CheckActionInput): Promise<Verdict> {
    const decide: DecideInput = {
      call: input.call,
      context: input.context,
      seal: input.seal,
      ...(input.sources === undefined
        ? {}
        : { sources: input.sources as Record<string, readonly ParameterSource[]> }),
      ...(input.userRequest === undefined ? {} : { userRequest: input.userRequest }),
    };
    let verdict: Verdict;
    if (this.#parentlessDeny && this.#sensitive(input.call?.tool)) {
      const parentless = await this.#parentlessMap(
        view,
        input.principal,
        input.context,
        input.seal,
      );
      verdict = this.gate.decide({ ...decide, isParentless: (id) => parentless.get(id) ?? true });
    } else verdict = this.gate.decide(decide);
    const tool = typeof input.call?.tool === 'string' ? input.call.tool : '';
    await this.#audit(
      input.principal,
      `gate.${verdict.kind}`,
      tool,
      toJson(verdict.audit) as { [k: string]: JsonValue },
    );
    return verdict;
  }

  #sensitive(tool: unknown): boolean {
    if (typeof tool !== 'string') return false;
    const t = this.gate.policy.tools.get(tool);
    return t === undefined ? this.gate.policy.unknownTools !== 'allow' : t.sensitive;
  }

  /** id → has no signed parents, for every segment sealed in the context. */
  async #parentlessMap(
    view: StorageBackend,
    principal: string,
    context: string,
    seal: string,
  ): Promise<Map<string, boolean>> {
    const out = new Map<string, boolean>();
    if (typeof context !== 'string' || typeof seal !== 'string') return out;
    for (const s of parseSegments(context, seal)) {
      if (out.has(s.id)) continue;
      const stored = await view.getEntry(s.id);
      const v = stored === undefined ? undefined : await this.#ledger.verifyStored(stored);
      const visible = v?.ok === true && (v.entry.ns === principal || v.entry.tier === 'OPERATOR');
      out.set(s.id, !(visible && v.entry.parents.length > 0));
    }
    return out;
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
