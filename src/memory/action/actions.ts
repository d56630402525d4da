/**
 * @module memory/action/actions
 * The action path (MemLineage §3.7, M6): `Memory.checkAction` runs a proposed tool call through
 * the sensitive-action gate and writes the verdict's audit record.
 *
 * The gate itself is pure and never sees the store. What it reads from memory is checked here
 * first: the context and its seal come from the caller (over HTTP, from a client that could
 * render its own "memory" segments), so every sealed segment is loaded through the principal's
 * view and verified, and its header (label, tier, authority) and content must equal the signed
 * record's. A segment that does not load, does not verify, is not visible to the principal, or
 * differs from its record is re-rendered as EXTERNAL / EXTERNAL_WEB / ⊥ before the gate sees
 * it (fail closed; the ids are listed in the audit record as `forged_segments`). The §6.6
 * strict knob's "does this entry have parents?" reads the same verified records; a segment
 * that did not verify counts as parentless.
 */
import { type ParsedSegment, escapeContent, parseSegments, renderSegments } from '../../core/render/sentinel.js';
import { effectiveAuthority } from '../../core/trust.js';
import type { SignedEntry } from '../../core/entry/index.js';
import { type DecideInput, type ParameterSource, type Verdict, Gate } from '../../core/gate/index.js';
import type { LineageOptions } from '../../core/lineage/index.js';
import type { JsonValue, StorageBackend } from '../../ports/storage.js';
import type { CheckActionInput } from '../api.js';
import { DEFAULT_POLICY } from './default-policy.js';
import type { Ledger } from '../log/ledger.js';

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
    const checked = await this.#verifiedContext(view, input.principal, input.context, input.seal);
    const decide: DecideInput = {
      call: input.call,
      context: checked.context,
      seal: input.seal,
      ...(input.sources === undefined
        ? {}
        : { sources: input.sources as Record<string, readonly ParameterSource[]> }),
      ...(input.userRequest === undefined ? {} : { userRequest: input.userRequest }),
    };
    let verdict: Verdict;
    if (this.#parentlessDeny && this.#sensitive(input.call?.tool)) {
      const records = checked.records;
      verdict = this.gate.decide({
        ...decide,
        isParentless: (id) => !((records.get(id)?.parents.length ?? 0) > 0),
      });
    } else verdict = this.gate.decide(decide);
    const tool = typeof input.call?.tool === 'string' ? input.call.tool : '';
    const audit = toJson(verdict.audit) as { [k: string]: JsonValue };
    if (checked.forged.length > 0) audit['forged_segments'] = checked.forged;
    await this.#audit(input.principal, `gate.${verdict.kind}`, tool, audit);
    return verdict;
  }

  #sensitive(tool: unknown): boolean {
    if (typeof tool !== 'string') return false;
    const t = this.gate.policy.tools.get(tool);
    return t === undefined ? this.gate.policy.unknownTools !== 'allow' : t.sensitive;
  }

  /**
   * The context with every sealed segment checked against its signed record (see the module
   * note), the verified records by id, and the ids of segments that did not match.
   */
  async #verifiedContext(
    view: StorageBackend,
    principal: string,
    context: string,
    seal: string,
  ): Promise<{ context: string; records: Map<string, SignedEntry>; forged: string[] }> {
    const records = new Map<string, SignedEntry>();
    const forged: string[] = [];
    if (typeof context !== 'string' || typeof seal !== 'string') return { context, records, forged };
    const segments = parseSegments(context, seal);
    const failed = new Set<string>();
    for (const s of segments) {
      if (records.has(s.id) || failed.has(s.id)) continue;
      const stored = await view.getEntry(s.id);
      const v = stored === undefined ? undefined : await this.#ledger.verifyStored(stored);
      const visible = v?.ok === true && (v.entry.ns === principal || v.entry.tier === 'OPERATOR');
      if (visible) records.set(s.id, v.entry);
      else failed.add(s.id);
    }
    // Splice from the end so earlier offsets stay valid.
    let out = context;
    for (let i = segments.length - 1; i >= 0; i--) {
      const s = segments[i]!;
      const e = records.get(s.id);
      if (e !== undefined && matches(s, e)) continue;
      if (!forged.includes(s.id)) forged.push(s.id);
      const downgraded = renderSegments(
        [{ id: s.id, label: 'EXTERNAL', tier: 'EXTERNAL_WEB', authority: 'BOTTOM', content: s.content }],
        seal,
      );
      out = out.slice(0, s.start) + downgraded + out.slice(s.end);
    }
    forged.reverse();
    return { context: out, records, forged };
  }
}

/** A parsed segment says exactly what its signed record says (content as the renderer escapes it). */
function matches(s: ParsedSegment, e: SignedEntry): boolean {
  return (
    s.label === e.label &&
    s.tier === e.tier &&
    s.authority === effectiveAuthority(e.tier, e.label, true) &&
    s.content === escapeContent(e.content)
  );
}

/** The audit record as JSON (repair values are arbitrary caller JSON; undefined dropped). */
function toJson(x: unknown): JsonValue {
  try {
    return JSON.parse(JSON.stringify(x) ?? 'null') as JsonValue;
  } catch {
    return null;
  }
}
