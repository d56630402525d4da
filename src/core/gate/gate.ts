/**
 * @module core/gate/gate
 * The sensitive-action gate (MemLineage §3.7, M6; §6.2 authority repair, Tables 4 and 10;
 * §6.6 parentless sensitive deny). Pure: it sees only the proposed call, the rendered context
 * and its seal, and optional parameter provenance — never the memory store — so its cost does
 * not grow with memory size. Decisions are values; nothing here throws on caller input.
 *
 * Values are matched under canonical forms (`canon.ts`): the gate decides on where a value came
 * from, not on how it is spelled (issue 18, ADR 0043).
 *
 * Order of a decision:
 * 1. Malformed call → deny. Unknown tool → the policy's `unknownTools` (default deny); when it
 *    is `allow`, a value of a governed kind that traces (exactly or near) to an untrusted
 *    segment, and not to a trusted one or the user's request, makes the call
 *    `unknownToolsUntrusted` (default require_user) — unnamed tools are not a blind spot.
 * 2. Progent rules: a matching deny rule, or no matching allow rule where allow rules exist → deny.
 * 3. Non-sensitive tool → allow.
 * 4. Layer 2, per-tool parameter authority: each governed parameter's proposed value must be
 *    backed by a verified source of an allowed class (a checked claim, the user's request, or —
 *    for `fromContext` classes — a sealed segment within the class's label cap that mentions
 *    it). If not: in `repair_and_retry` mode, the highest-precedence allowed class offering
 *    exactly one distinct verified value rewrites only that parameter; otherwise, when the value
 *    traces to untrusted memory (a rejected claim on an untrusted segment, or an exact or near
 *    match in one), the mode's verdict (`repair_and_retry` without a candidate fails closed:
 *    deny; `strip_and_retry` with nothing to strip: deny); when it traces to nothing, the
 *    policy's `untraced` verdict (default require_user).
 * 5. Layer 1, context chain of custody: the sealed segments (core/render `parseSegments` only)
 *    mentioned by the remaining argument values (`match.ts` rule; parameters Layer 2 authorised
 *    or repaired are exempt — their provenance is already established, which is what lets
 *    parameter authority keep mixed-context utility, Table 10). A segment with an untrusted
 *    label (≥ DERIVED_UNTRUSTED) or an authority below the tool's requirement → the mode's
 *    verdict (in `repair_and_retry` mode: deny, there is no authority to repair from).
 * 6. Fail closed on untraceable values: every remaining argument value of a governed kind
 *    (policy `governedKinds`: e-mail, URL, domain, IBAN, phone, account by default) must be
 *    mentioned by the user's request or by a segment whose label and authority suffice. A value
 *    near an untrusted segment's value (confusables skeleton, decoded base64 / hex / rot13, a
 *    piece of it) is governed by that segment's label → the mode's verdict; a value that traces
 *    to nothing → `untraced` (default require_user). Never allow.
 * 7. Strict §6.6 knob: a justifying entry that has no parents → deny.
 * 8. Allow, or Repair-and-Retry when step 4 rewrote a parameter.
 */
import type { LineageOptions } from '../lineage/propagation.js';
import { type TrustLabel, authorityRank, labelValue } from '../trust.js';
import type { CanonValue } from './canon.js';
import {
  ContextCache,
  type GovernedValue,
  Hay,
  type ParsedContext,
  canonEntry,
  collectNeedles,
  type Leaf,
  needles as emptyNeedles,
  mentionedByLeaves,
  mentionedSegments,
} from './match.js';
import { type GovernedParam, type Policy, loadPolicy } from './policy.js';
import type {
  AuditRecord,
  DecideInput,
  ParameterSource,
  Repair,
  SourceRef,
  Verdict,
  VerdictKind,
  VerdictMode,
  VerdictReason,
} from './types.js';
import { requiredAuthority } from './authority.js';

/** Gate construction options. */
export interface GateOptions {
  /** The lineage operating point; its `parentlessSensitiveDeny` is OR-ed with the policy's. */
  readonly lineage?: Pick<LineageOptions, 'parentlessSensitiveDeny'>;
  /** Parsed contexts memoised (default 32). */
  readonly cacheSize?: number;
  /**
   * `false`: the full path — every argument value canonicalised afresh and every needle searched
   * through the run index, nothing taken from the per-value and per-context memos of ADR 0077.
   * Same decisions (a differential test holds the two to it); for tests and the bench.
   */
  readonly fastPath?: boolean;
}

interface State {
  tool: string;
  sensitive: boolean;
  mode: VerdictMode;
  used: SourceRef[];
  rejected: SourceRef[];
  repairs: Repair[];
  unauthorised: string[];
  untraced: string[];
  weakest?: TrustLabel;
}

const EMPTY: readonly never[] = Object.freeze([]);

/** Never written: needles collected with leaves go to the leaves (`addLeaf`). */
const NO_NEEDLES = Object.freeze([]) as unknown as string[];
/** Empty needles that also collect their leaves (the fast path's Layer 1, ADR 0077). */
const leafNeedles = (): ReturnType<typeof emptyNeedles> => ({
  text: NO_NEEDLES,
  numbers: NO_NEEDLES,
  compact: NO_NEEDLES,
  governed: [],
  leaves: [],
});

const own = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** The sensitive-action gate for one policy. */
export class Gate {
  readonly policy: Policy;
  readonly #parentlessDeny: boolean;
  readonly #cache: ContextCache;
  readonly #fast: boolean;
  /** The last user request's views (one turn asks about several calls). */
  #request: { text: string; hay: Hay } | undefined;

  constructor(policy: Policy, options: GateOptions = {}) {
    this.policy = policy;
    this.#parentlessDeny =
      policy.parentlessSensitiveDeny || options.lineage?.parentlessSensitiveDeny === true;
    this.#cache = new ContextCache(options.cacheSize ?? 32);
    this.#fast = options.fastPath !== false;
  }

  /** Load a policy document (`POLICY_INVALID` on error) and build a gate. */
  static fromDocument(doc: unknown, options: GateOptions = {}): Gate {
    return new Gate(loadPolicy(doc), options);
  }

  /** See `authority.ts`. */
  requiredAuthority(tool: string): ReturnType<typeof requiredAuthority> {
    return requiredAuthority(this.policy, tool);
  }

  /** Decide on a proposed call. Never throws on caller input. */
  decide(input: DecideInput): Verdict {
    const call = (input as Partial<DecideInput> | null)?.call;
    const st: State = {
      tool: typeof call?.tool === 'string' ? call.tool : '',
      sensitive: true,
      mode: this.policy.mode,
      used: [],
      rejected: [],
      repairs: [],
      unauthorised: [],
      untraced: [],
    };
    const args = call?.arguments;
    if (
      typeof call?.tool !== 'string' ||
      args === null ||
      typeof args !== 'object' ||
      Array.isArray(args)
    )
      return finish(st, 'deny', 'malformed_call');

    const tool = this.policy.tools.get(call.tool);
    if (tool === undefined) {
      const u = this.policy.unknownTools;
      if (u !== 'allow') return finish(st, u, 'unknown_tool');
      return this.#unknownTool(args, input, st);
    }
    st.sensitive = tool.sensitive;
    st.mode = tool.mode;
    for (const r of tool.deny) if (r.test(args)) return finish(st, 'deny', 'policy_rule_deny');
    if (tool.allow.length > 0 && !tool.allow.some((r) => r.test(args)))
      return finish(st, 'deny', 'policy_rule_no_allow');
    if (!tool.sensitive) return finish(st, 'allow', 'non_sensitive');

    const pc = this.#cache.get(typeof input.context === 'string' ? input.context : '', input.seal);

    // Layer 2: per-tool parameter authority.
    const required = authorityRank(tool.authority);
    const exempt: string[] = []; // parameters Layer 2 authorised or repaired
    for (const gp of tool.params) {
      if (!own(args, gp.name)) continue;
      this.#governParam(gp, args[gp.name], input, pc, st, exempt, required);
    }
    if (st.unauthorised.length > 0) {
      // Nothing untrusted behind any of them: no evidence of an attack, no evidence of safety.
      if (st.unauthorised.every((p) => st.untraced.includes(p)))
        return finish(st, this.policy.untraced, 'untraced_value');
      if (st.mode === 'deny' || st.mode === 'repair_and_retry')
        return finish(st, 'deny', 'parameter_unauthorised');
      if (st.mode === 'require_user') return finish(st, 'require_user', 'parameter_unauthorised');
      const strip = new Set<string>();
      for (const r of st.rejected)
        if (r.entryId !== undefined && pc.byId.has(r.entryId)) strip.add(r.entryId);
      if (strip.size === 0) return finish(st, 'deny', 'parameter_unauthorised');
      return finish(
        st,
        'strip_and_retry',
        'parameter_unauthorised',
        undefined,
        stripped(input.context, pc, strip),
      );
    }
    let finalArgs: Readonly<Record<string, unknown>> = args;
    if (st.repairs.length > 0) {
      const next: Record<string, unknown> = { ...args };
      for (const r of st.repairs) next[r.param] = r.value;
      finalArgs = next;
    }

    // Layer 1: context chain of custody over the segments the remaining arguments mention.
    const fast = this.#fast;
    const needles = fast ? leafNeedles() : emptyNeedles();
    const budget = { leaves: 256 };
    for (const k in finalArgs) {
      if (!own(finalArgs, k) || exempt.includes(k)) continue;
      const gov = { kinds: tool.governedKinds, param: k };
      if (!collectNeedles(finalArgs[k], needles, 1, budget, gov, fast))
        return finish(st, 'deny', 'malformed_call');
    }
    const all = this.policy.layer1Scope === 'context';
    let flagged: Set<string> | undefined; // allocated on the first untrusted segment
    const justifying: string[] = [];
    let weakest = -1;
    // The segments to check, ascending: every one, or those the arguments mention.
    const hits: readonly number[] | undefined = all
      ? undefined
      : fast
        ? mentionedByLeaves(pc, needles.leaves as Leaf[])
        : marked(mentionedSegments(pc, needles));
    const count = hits === undefined ? pc.segments.length : hits.length;
    for (let j = 0; j < count; j++) {
      const i = hits === undefined ? j : (hits[j] as number);
      const s = pc.segments[i] as ParsedSegment;
      const v = labelValue(s.label);
      if (v > weakest) weakest = v;
      const untrusted = v >= 2; // core/trust isUntrustedLabel
      if (untrusted || authorityRank(s.authority) < required) {
        (flagged ??= new Set<string>()).add(s.id);
        st.rejected.push({
          kind: 'segment',
          entryId: s.id,
          label: s.label,
          authority: s.authority,
          why: untrusted ? 'untrusted_label' : 'insufficient_authority',
        });
      } else {
        justifying.push(s.id);
        st.used.push({ kind: 'segment', entryId: s.id, label: s.label, authority: s.authority });
      }
    }

    // Fail closed: every governed-kind value must trace to the user's request or to a segment
    // whose label and authority suffice; near an untrusted segment's value, that label governs.
    if (flagged === undefined)
      for (const g of needles.governed) {
        if (this.#tracedTrusted(g.value, pc, input, required)) continue;
        let near = false;
        for (let i = 0; i < pc.segments.length; i++) {
          const s = pc.segments[i] as ParsedSegment;
          const v = labelValue(s.label);
          if (v < 2 && authorityRank(s.authority) >= required) continue;
          if (!(pc.hays[i] as Hay).near_(g.value)) continue;
          near = true;
          if (v > weakest) weakest = v;
          (flagged ??= new Set<string>()).add(s.id);
          st.rejected.push({
            kind: 'segment',
            entryId: s.id,
            label: s.label,
            authority: s.authority,
            why: 'near_untrusted_value',
          });
        }
        if (!near && !st.untraced.includes(g.param)) {
          st.untraced.push(g.param);
          st.rejected.push({ kind: 'parameter', param: g.param, why: 'untraced' });
        }
      }
    if (weakest >= 0) st.weakest = labelOf(weakest);
    if (flagged !== undefined) {
      if (st.mode === 'strip_and_retry')
        return finish(
          st,
          'strip_and_retry',
          'untrusted_context',
          undefined,
          stripped(input.context, pc, flagged),
        );
      return finish(st, st.mode === 'require_user' ? 'require_user' : 'deny', 'untrusted_context');
    }
    if (st.untraced.length > 0) return finish(st, this.policy.untraced, 'untraced_value');

    // §6.6 strict: parentless sensitive deny, over every entry that justifies the call.
    if (this.#parentlessDeny) {
      for (const r of st.used)
        if (r.kind === 'parameter' && r.entryId !== undefined) justifying.push(r.entryId);
      let parentless = false;
      for (const id of justifying) {
        if (!isParentless(input, id)) continue;
        parentless = true;
        st.rejected.push({ kind: 'segment', entryId: id, why: 'parentless' });
      }
      if (parentless) return finish(st, 'deny', 'parentless_sensitive');
    }

    if (st.repairs.length > 0) return finish(st, 'repair_and_retry', 'repaired', finalArgs);
    return finish(st, 'allow', 'clean');
  }

  #governParam(
    gp: GovernedParam,
    proposed: unknown,
    input: DecideInput,
    pc: ParsedContext,
    st: State,
    exempt: string[],
    required: number,
  ): void {
    const given =
      input.sources !== undefined && own(input.sources, gp.name)
        ? (input.sources[gp.name] ?? EMPTY)
        : EMPTY;
    const checked: Checked[] = [];
    for (const src of Array.isArray(given) ? given : EMPTY)
      checked.push(this.#check(gp, src, input, pc));
    // A fresh user request that mentions the proposed value authorises it for user_request classes.
    if (typeof input.userRequest === 'string')
      for (const cls of gp.sources)
        if (this.policy.sourceClasses.get(cls)?.origin === 'user_request')
          checked.push(this.#check(gp, { value: proposed, sourceClass: cls }, input, pc));

    const pe = canonEntry(proposed, this.#fast);
    const pv = pe.cv;
    const proposedKey =
      (typeof proposed === 'string' || typeof proposed === 'number') && pv === undefined
        ? 's:'
        : pe.key;
    let ok: Checked | undefined;
    let matched = 0;
    for (const c of checked)
      if (c.key === proposedKey) {
        matched++;
        if (c.valid) {
          ok = c;
          break;
        }
      }
    if (ok !== undefined) {
      st.used.push(ok.ref);
      exempt.push(gp.name);
      return;
    }
    // fromContext classes: the gate finds the value in a sealed segment itself.
    if (pv !== undefined)
      // (`contextSources` is resolved by loadPolicy; a hand-built policy falls back to every class.)
      for (const cls of (gp.contextSources as readonly string[] | undefined) ?? gp.sources) {
        const spec = this.policy.sourceClasses.get(cls);
        if (spec?.fromContext !== true) continue;
        const cap = labelValue(spec.maxLabel ?? 'DERIVED_TRUSTED');
        for (let i = 0; i < pc.segments.length; i++) {
          const seg = pc.segments[i] as ParsedSegment;
          if (labelValue(seg.label) > cap || authorityRank(seg.authority) < required) continue;
          if (!this.#exact(pc.hays[i] as Hay, pv)) continue;
          st.used.push(parameterRef(gp.name, cls, seg.id, seg, undefined));
          exempt.push(gp.name);
          return;
        }
      }
    if (matched === 0)
      st.rejected.push({ kind: 'parameter', param: gp.name, why: 'no_provenance' });
    else for (const c of checked) if (c.key === proposedKey) st.rejected.push(c.ref);

    // Does the value trace to untrusted memory, or to nothing at all?
    let tainted = false;
    // A claim the signed evidence contradicts (the value is not in the segment it names) or
    // one that names an untrusted segment taints the value; a stale claim does not.
    for (const c of checked) {
      if (c.key !== proposedKey) continue;
      if (c.ref.why === 'value_not_in_segment') tainted = true;
      else if (c.ref.label !== undefined)
        if (labelValue(c.ref.label) >= 2 || authorityRank(c.ref.authority ?? 'BOTTOM') < required)
          tainted = true;
    }
    if (!tainted && pv !== undefined)
      for (let i = 0; i < pc.segments.length; i++) {
        const seg = pc.segments[i] as ParsedSegment;
        if (labelValue(seg.label) < 2 && authorityRank(seg.authority) >= required) continue;
        const hay = pc.hays[i] as Hay;
        const exact = this.#exact(hay, pv);
        if (!exact && !hay.near_(pv)) continue;
        tainted = true;
        st.rejected.push({
          kind: 'segment',
          entryId: seg.id,
          label: seg.label,
          authority: seg.authority,
          why: exact ? 'untrusted_label' : 'near_untrusted_value',
        });
      }

    if (st.mode === 'repair_and_retry') {
      // Highest-precedence class first; within it, exactly one distinct value, or no repair.
      for (const cls of gp.sources) {
        let first: Checked | undefined;
        let ambiguous = false;
        for (const c of checked) {
          if (!c.valid || c.src.sourceClass !== cls || c.key === proposedKey) continue;
          if (first === undefined) first = c;
          else if (c.key !== first.key) ambiguous = true;
        }
        if (first === undefined) continue;
        if (ambiguous) break; // ambiguous: fail closed
        st.repairs.push({
          param: gp.name,
          rejectedValue: proposed,
          value: first.src.value,
          selected: first.ref,
        });
        st.used.push(first.ref);
        exempt.push(gp.name);
        return;
      }
    }
    st.unauthorised.push(gp.name);
    if (!tainted) st.untraced.push(gp.name);
  }

  /** `hay.exact(v)`; on the full path, without its memo. */
  #exact(hay: Hay, v: CanonValue): boolean {
    return this.#fast ? hay.exact(v) : hay.exactUncached(v);
  }

  /** The views of this turn's user request (memoised: a turn asks about several calls). */
  #requestHay(text: string): Hay {
    const r = this.#request;
    if (r !== undefined && r.text === text) return r.hay;
    const hay = new Hay(text);
    this.#request = { text, hay };
    return hay;
  }

  /** The value is mentioned by the user's request or by a segment whose label and authority suffice. */
  #tracedTrusted(v: CanonValue, pc: ParsedContext, input: DecideInput, required: number): boolean {
    if (
      typeof input.userRequest === 'string' &&
      this.#exact(this.#requestHay(input.userRequest), v)
    )
      return true;
    for (let i = 0; i < pc.segments.length; i++) {
      const s = pc.segments[i] as ParsedSegment;
      if (labelValue(s.label) >= 2 || authorityRank(s.authority) < required) continue;
      if (this.#exact(pc.hays[i] as Hay, v)) return true;
    }
    return false;
  }

  /**
   * A tool the policy does not name, under `unknownTools: "allow"`: non-sensitive, unless a value
   * of a governed kind in it (whole, or an identifier in free text) traces to untrusted memory
   * and not to the user's request or a trusted segment → `unknownToolsUntrusted`.
   */
  #unknownTool(args: Readonly<Record<string, unknown>>, input: DecideInput, st: State): Verdict {
    st.sensitive = false;
    const pc = this.#cache.get(typeof input.context === 'string' ? input.context : '', input.seal);
    if (pc.segments.length === 0) return finish(st, 'allow', 'non_sensitive');
    const nd = emptyNeedles();
    const budget = { leaves: 256 };
    for (const k in args) {
      if (!own(args, k)) continue;
      if (
        !collectNeedles(
          args[k],
          nd,
          1,
          budget,
          { kinds: this.policy.governedKinds, param: k, tokens: true },
          this.#fast,
        )
      )
        return finish(st, 'deny', 'malformed_call');
    }
    const required = authorityRank('A');
    let weakest = -1;
    const seen = new Set<string>();
    for (const g of nd.governed as GovernedValue[]) {
      if (this.#tracedTrusted(g.value, pc, input, required)) continue;
      for (let i = 0; i < pc.segments.length; i++) {
        const s = pc.segments[i] as ParsedSegment;
        const v = labelValue(s.label);
        if (v < 2 || seen.has(s.id)) continue;
        const hay = pc.hays[i] as Hay;
        const exact = this.#exact(hay, g.value);
        if (!exact && !hay.near_(g.value)) continue;
        seen.add(s.id);
        if (v > weakest) weakest = v;
        st.rejected.push({
          kind: 'segment',
          entryId: s.id,
          label: s.label,
          authority: s.authority,
          why: exact ? 'untrusted_label' : 'near_untrusted_value',
        });
      }
    }
    if (seen.size === 0) return finish(st, 'allow', 'non_sensitive');
    st.weakest = labelOf(weakest);
    return finish(st, this.policy.unknownToolsUntrusted, 'unknown_tool_untrusted');
  }

  /** Verify one parameter source claim (see `ParameterSource`). Allocation-lean: hot path. */
  #check(gp: GovernedParam, src: ParameterSource, input: DecideInput, pc: ParsedContext): Checked {
    const cls = typeof src?.sourceClass === 'string' ? src.sourceClass : '';
    const spec = this.policy.sourceClasses.get(cls);
    // The claimed value's key and canonical form (memoised: one object per value).
    const { cv, key } = canonEntry(src?.value, this.#fast);
    const entryId = typeof src?.entryId === 'string' ? src.entryId : undefined;
    let why: SourceRef['why'];
    let seg: ParsedSegment | undefined;
    if (entryId === undefined) {
      if (spec?.origin === 'segment') why = 'not_in_context';
    } else {
      const i = pc.byId.get(entryId);
      if (i === undefined) why = 'not_in_context';
      else {
        seg = pc.segments[i] as ParsedSegment;
        if (cv === undefined || !this.#exact(pc.hays[i] as Hay, cv)) why = 'value_not_in_segment';
        else if (spec?.maxLabel !== undefined && labelValue(seg.label) > labelValue(spec.maxLabel))
          why = 'label_above_class_max';
      }
    }
    if (
      why === undefined &&
      spec?.origin === 'user_request' &&
      !(
        typeof input.userRequest === 'string' &&
        cv !== undefined &&
        this.#exact(this.#requestHay(input.userRequest), cv)
      )
    )
      why = 'not_in_user_request';
    if (why === undefined && !gp.sources.includes(cls)) why = 'class_not_allowed';
    return {
      src,
      ref: parameterRef(gp.name, cls, entryId, seg, why),
      valid: why === undefined,
      key,
    };
  }
}

/**
 * A parameter {@link SourceRef}, built as one object literal per shape (hot path: adding
 * properties one by one walks hidden-class transitions). Key order matches the type.
 */
function parameterRef(
  param: string,
  sourceClass: string,
  entryId: string | undefined,
  seg: ParsedSegment | undefined,
  why: SourceRef['why'],
): SourceRef {
  if (entryId === undefined)
    return why === undefined
      ? { kind: 'parameter', param, sourceClass }
      : { kind: 'parameter', param, sourceClass, why };
  if (seg === undefined)
    return why === undefined
      ? { kind: 'parameter', param, sourceClass, entryId }
      : { kind: 'parameter', param, sourceClass, entryId, why };
  const { label, authority } = seg;
  return why === undefined
    ? { kind: 'parameter', param, sourceClass, entryId, label, authority }
    : { kind: 'parameter', param, sourceClass, entryId, label, authority, why };
}
interface Checked {
  readonly src: ParameterSource;
  readonly ref: SourceRef;
  readonly valid: boolean;
  /** {@link valueKey} of the claimed value, computed once. */
  readonly key: string;
}

type ParsedSegment = ParsedContext['segments'][number];

/** The indices `hit` marks, ascending. */
function marked(hit: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < hit.length; i++) if (hit[i] === 1) out.push(i);
  return out;
}

function labelOf(v: number): TrustLabel {
  return v === 0
    ? 'TRUSTED'
    : v === 1
      ? 'DERIVED_TRUSTED'
      : v === 2
        ? 'DERIVED_UNTRUSTED'
        : 'EXTERNAL';
}

function isParentless(input: DecideInput, id: string): boolean {
  if (typeof input.isParentless !== 'function') return true; // no lineage to prove parents: fail closed
  try {
    return input.isParentless(id);
  } catch {
    return true;
  }
}

function stripped(
  context: string,
  pc: ParsedContext,
  ids: ReadonlySet<string>,
): { ids: string[]; context: string } {
  let out = '';
  let at = 0;
  for (const s of pc.segments) {
    if (!ids.has(s.id)) continue;
    out += context.slice(at, s.start);
    at = context.charCodeAt(s.end) === 10 ? s.end + 1 : s.end;
  }
  return { ids: [...ids], context: out + context.slice(at) };
}

function finish(
  st: State,
  kind: VerdictKind,
  reason: VerdictReason,
  repairedArguments?: Readonly<Record<string, unknown>>,
  strip?: { ids: string[]; context: string },
): Verdict {
  // Literal shapes, not conditional spreads: no temporaries on the hot path.
  const audit: AuditRecord =
    st.weakest === undefined
      ? {
          tool: st.tool,
          verdict: kind,
          reason,
          sensitive: st.sensitive,
          mode: st.mode,
          usedSources: st.used,
          rejectedSources: st.rejected,
          repairs: st.repairs,
          unauthorisedParams: st.unauthorised,
          untracedParams: st.untraced,
        }
      : {
          tool: st.tool,
          verdict: kind,
          reason,
          sensitive: st.sensitive,
          mode: st.mode,
          weakestLabel: st.weakest,
          usedSources: st.used,
          rejectedSources: st.rejected,
          repairs: st.repairs,
          unauthorisedParams: st.unauthorised,
          untracedParams: st.untraced,
        };
  const used = st.used;
  const rejected = st.rejected;
  if (strip !== undefined)
    return {
      kind,
      reason,
      usedSources: used,
      rejectedSources: rejected,
      strippedSegmentIds: strip.ids,
      retryContext: strip.context,
      audit,
    };
  if (repairedArguments !== undefined)
    return { kind, reason, usedSources: used, rejectedSources: rejected, repairedArguments, audit };
  return { kind, reason, usedSources: used, rejectedSources: rejected, audit };
}
