/**
 * @module memory/action/verified-gate
 * The sensitive-action gate as the public API offers it (the root export `Gate`, issue 18,
 * ADR 0044): before the pure decision (`core/gate`, exported as `LabelTrustingGate`), every
 * sealed segment of the context is loaded through the principal's view and verified against
 * its signed record (signature, MAC, log inclusion), and its header (label, tier, authority)
 * and content must equal the record's. A segment that does not load, does not verify, is not
 * visible to the principal, or differs from its record is re-rendered as EXTERNAL /
 * EXTERNAL_WEB / ⊥ before the gate sees it (fail closed; its id is reported in
 * `forgedSegments`). The §6.6 strict knob's "does this entry have parents?" reads the same
 * verified records; a segment that did not verify counts as parentless.
 *
 * The context and seal come from the caller — over HTTP, from a client that could render its
 * own "memory" segments — so the labels written in a segment header are never trusted here.
 * `Memory.checkAction` runs this and writes the audit record.
 */
import {
  type ParsedSegment,
  escapeContent,
  parseSegments,
  renderSegments,
} from '../../core/render/sentinel.js';
import { effectiveAuthority } from '../../core/trust.js';
import type { SignedEntry } from '../../core/entry/index.js';
import {
  type DecideInput,
  type GateOptions,
  type Policy,
  type Verdict,
  Gate as LabelTrustingGate,
  loadPolicy,
} from '../../core/gate/index.js';
import type { LineageOptions } from '../../core/lineage/index.js';
import type { StorageBackend } from '../../ports/storage.js';
import { DEFAULT_POLICY } from './default-policy.js';
import type { Ledger } from '../log/ledger.js';
import type { LedgerView } from '../log/view.js';

/** What the gate reads segments through: the ledger, or `Memory.ledger` (its read view). */
export type GateLedger = Ledger | LedgerView;

/** A store the gate can load a segment's record from. */
type EntryReader = Pick<StorageBackend, 'getEntry'>;

/** Input of {@link VerifiedGate.decide}: the gate's input, on behalf of a principal. */
export type VerifiedDecideInput = Omit<DecideInput, 'isParentless'> & {
  /** Whose memory the context was rendered from (segments must be visible to it). */
  readonly principal: string;
};

/** A verdict plus the segments that did not match their signed record. */
export type VerifiedVerdict = Verdict & { readonly forgedSegments: readonly string[] };

/** Options of {@link VerifiedGate}. */
export interface VerifiedGateOptions {
  /** The ledger the segments' records are loaded and verified through (`Memory.ledger` will do). */
  readonly ledger: GateLedger;
  /** The policy document (default `DEFAULT_POLICY`); `POLICY_INVALID` on error. */
  readonly policy?: unknown;
  readonly lineage?: GateOptions['lineage'];
}

/** The gate that re-verifies every segment against the store before deciding. */
export class VerifiedGate {
  readonly policy: Policy;
  readonly #gate: LabelTrustingGate;
  readonly #ledger: GateLedger;
  readonly #parentlessDeny: boolean;

  constructor(
    opts:
      | VerifiedGateOptions
      | {
          readonly gate: LabelTrustingGate;
          readonly ledger: GateLedger;
          readonly lineage?: LineageOptions;
        },
  ) {
    this.#gate =
      'gate' in opts
        ? opts.gate
        : new LabelTrustingGate(
            loadPolicy(opts.policy ?? DEFAULT_POLICY),
            opts.lineage === undefined ? {} : { lineage: opts.lineage },
          );
    this.policy = this.#gate.policy;
    this.#ledger = opts.ledger;
    this.#parentlessDeny =
      this.policy.parentlessSensitiveDeny || opts.lineage?.parentlessSensitiveDeny === true;
  }

  /** Decide on a call; segments are read through the principal's view of the ledger's store. */
  decide(input: VerifiedDecideInput): Promise<VerifiedVerdict> {
    const l = this.#ledger;
    if (!('storage' in l)) {
      // No principal named: nothing loads, so every segment is treated as forged (fail closed).
      const principal = input?.principal;
      const getEntry = (id: string) =>
        typeof principal === 'string' ? l.entryAs(principal, id) : Promise.resolve(undefined);
      return this.decideIn({ getEntry }, input);
    }
    const root = l.storage;
    const view =
      typeof input?.principal === 'string' && typeof root.asPrincipal === 'function'
        ? root.asPrincipal(input.principal)
        : root;
    return this.decideIn(view, input);
  }

  /** {@link decide} with the principal's storage view given (the Memory facade has one). */
  async decideIn(view: EntryReader, input: VerifiedDecideInput): Promise<VerifiedVerdict> {
    const checked = await this.#verifiedContext(view, input.principal, input.context, input.seal);
    const decide: DecideInput = {
      call: input.call,
      context: checked.context,
      seal: input.seal,
      ...(input.sources === undefined ? {} : { sources: input.sources }),
      ...(input.userRequest === undefined ? {} : { userRequest: input.userRequest }),
    };
    let verdict: Verdict;
    if (this.#parentlessDeny && this.#sensitive(input.call?.tool)) {
      const records = checked.records;
      verdict = this.#gate.decide({
        ...decide,
        isParentless: (id) => !((records.get(id)?.parents.length ?? 0) > 0),
      });
    } else verdict = this.#gate.decide(decide);
    return { ...verdict, forgedSegments: checked.forged };
  }

  #sensitive(tool: unknown): boolean {
    if (typeof tool !== 'string') return false;
    const t = this.policy.tools.get(tool);
    return t === undefined ? this.policy.unknownTools !== 'allow' : t.sensitive;
  }

  /**
   * The context with every sealed segment checked against its signed record (see the module
   * note), the verified records by id, and the ids of segments that did not match.
   */
  async #verifiedContext(
    view: EntryReader,
    principal: string,
    context: string,
    seal: string,
  ): Promise<{ context: string; records: Map<string, SignedEntry>; forged: string[] }> {
    const records = new Map<string, SignedEntry>();
    const forged: string[] = [];
    if (typeof context !== 'string' || typeof seal !== 'string')
      return { context, records, forged };
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
        [
          {
            id: s.id,
            label: 'EXTERNAL',
            tier: 'EXTERNAL_WEB',
            authority: 'BOTTOM',
            content: s.content,
          },
        ],
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
