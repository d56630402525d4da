/**
 * @module core/gate/policy
 * Loading a deployment policy (MemLineage §3.7, Progent [13]): validate the document against
 * `POLICY_SCHEMA` with ajv, check the cross-references a schema cannot (every source class a
 * parameter names is declared; governed parameters only on sensitive tools), and compile every
 * rule's argument predicate once, so a decision only runs precompiled validators.
 *
 * Rule semantics (Progent-style, deny overrides): a call matching any `deny` rule is denied;
 * if a tool has `allow` rules, a call must match at least one. Rules apply to sensitive and
 * non-sensitive tools alike. Predicates are JSON Schemas over the call's arguments object,
 * compiled with ajv's strictSchema, so an unknown keyword (a typo) is `POLICY_INVALID`, not a
 * silently ignored constraint.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { MemwardenError, type SafeResult, safely } from '../errors.js';
import type { Authority, TrustLabel } from '../trust.js';
import { POLICY_SCHEMA } from './policy-schema.js';
import type { VerdictMode } from './types.js';
import { DEFAULT_GOVERNED_KINDS, type ValueKind } from './canon.js';

/** Kinds a policy may govern (every {@link ValueKind} but free text). */
export type GovernableKind = Exclude<ValueKind, 'text'>;

/** A source class declaration: where its values must be found, and the weakest label allowed. */
export interface SourceClassSpec {
  /**
   * `segment`: values must come from a sealed segment (`entryId` required);
   * `user_request`: values must be mentioned by the turn's `userRequest`;
   * `caller` (default): vouched for by the integration (an `entryId`, if given, is still checked).
   */
  readonly origin: 'segment' | 'user_request' | 'caller';
  readonly maxLabel?: TrustLabel;
  /** `segment` classes: the gate traces values to segments itself (no claim needed). */
  readonly fromContext: boolean;
}

/** The policy document, as written by the operator (see `POLICY_SCHEMA`). */
export interface PolicyDocument {
  readonly version: 1;
  readonly mode: VerdictMode;
  readonly unknownTools?: 'allow' | 'deny' | 'require_user';
  readonly layer1Scope?: 'mentioned' | 'context';
  readonly parentlessSensitiveDeny?: boolean;
  readonly untraced?: 'require_user' | 'deny';
  readonly unknownToolsUntrusted?: 'require_user' | 'deny';
  readonly governedKinds?: readonly GovernableKind[];
  readonly sourceClasses?: Readonly<
    Record<
      string,
      {
        readonly origin?: SourceClassSpec['origin'];
        readonly maxLabel?: TrustLabel;
        readonly fromContext?: boolean;
        readonly description?: string;
      }
    >
  >;
  readonly tools: Readonly<Record<string, ToolPolicyDocument>>;
}

/** One tool's policy. */
export interface ToolPolicyDocument {
  readonly sensitive: boolean;
  readonly mode?: VerdictMode;
  readonly authority?: 'U' | 'A' | 'T';
  readonly description?: string;
  readonly governedKinds?: readonly GovernableKind[];
  readonly rules?: readonly {
    readonly effect: 'allow' | 'deny';
    readonly arguments: Readonly<Record<string, unknown>> | boolean;
    readonly reason?: string;
  }[];
  readonly parameters?: Readonly<Record<string, { readonly sources: readonly string[] }>>;
}

/** A compiled rule. */
export interface CompiledRule {
  readonly index: number;
  readonly test: (args: unknown) => boolean;
  readonly reason?: string;
}

/** A governed parameter (Layer 2): its allowed source classes, in precedence order. */
export interface GovernedParam {
  readonly name: string;
  readonly sources: readonly string[];
  /** The `fromContext` classes among `sources`, in order (resolved once: a decision skips the rest). */
  readonly contextSources: readonly string[];
}

/** A compiled tool policy. */
export interface CompiledTool {
  readonly name: string;
  readonly sensitive: boolean;
  readonly mode: VerdictMode;
  /** The authority a justifying segment needs for this tool (see `authority.ts`). */
  readonly authority: Authority;
  readonly deny: readonly CompiledRule[];
  readonly allow: readonly CompiledRule[];
  readonly params: readonly GovernedParam[];
  /** Value kinds whose arguments must be traced (fail closed, ADR 0043). */
  readonly governedKinds: ReadonlySet<ValueKind>;
}

/** A loaded, validated, compiled policy. Immutable. */
export interface Policy {
  readonly mode: VerdictMode;
  readonly unknownTools: 'allow' | 'deny' | 'require_user';
  readonly layer1Scope: 'mentioned' | 'context';
  readonly parentlessSensitiveDeny: boolean;
  readonly untraced: 'require_user' | 'deny';
  readonly unknownToolsUntrusted: 'require_user' | 'deny';
  /** Governed kinds for tools the policy does not name (when `unknownTools` is `allow`). */
  readonly governedKinds: ReadonlySet<ValueKind>;
  readonly sourceClasses: ReadonlyMap<string, SourceClassSpec>;
  readonly tools: ReadonlyMap<string, CompiledTool>;
}

const invalid = (
  message: string,
  details?: Record<string, unknown>,
  cause?: unknown,
): MemwardenError =>
  new MemwardenError('POLICY_INVALID', message, {
    ...(details === undefined ? {} : { details }),
    ...(cause === undefined ? {} : { cause }),
  });

let documentValidator: ValidateFunction | undefined;
function validateDocument(doc: unknown): asserts doc is PolicyDocument {
  documentValidator ??= new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(
    POLICY_SCHEMA,
  );
  if (!documentValidator(doc)) {
    const errors = (documentValidator.errors ?? []).slice(0, 20).map((e) => ({
      path: e.instancePath,
      keyword: e.keyword,
      message: e.message ?? '',
    }));
    throw invalid('policy document does not match the policy schema', { errors });
  }
}

/**
 * Load a policy from a document (an object, or its JSON text). Throws `POLICY_INVALID` with
 * `details.errors` on a schema violation, a bad reference, or a predicate ajv cannot compile.
 */
export function loadPolicy(input: unknown): Policy {
  let doc: unknown = input;
  if (typeof input === 'string') {
    try {
      doc = JSON.parse(input);
    } catch (e) {
      throw invalid('policy is not valid JSON', undefined, e);
    }
  }
  validateDocument(doc);

  const sourceClasses = new Map<string, SourceClassSpec>();
  for (const [name, spec] of Object.entries(doc.sourceClasses ?? {})) {
    const origin = spec.origin ?? 'caller';
    if (spec.fromContext === true && origin !== 'segment')
      throw invalid('fromContext is only meaningful on segment-origin source classes', {
        sourceClass: name,
      });
    sourceClasses.set(name, {
      origin,
      fromContext: spec.fromContext === true,
      ...(spec.maxLabel === undefined ? {} : { maxLabel: spec.maxLabel }),
    });
  }

  // One ajv per policy: rule schemas may carry $ids, which must not collide across policies.
  // strictSchema rejects unknown keywords (typos); strictTypes is off so that Progent-style
  // predicates like `{ "properties": … }` need not repeat `"type": "object"`.
  const ajv = new Ajv({
    allErrors: false,
    strictSchema: true,
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
  });
  const kinds = Object.freeze(new Set<ValueKind>(doc.governedKinds ?? DEFAULT_GOVERNED_KINDS));
  const tools = new Map<string, CompiledTool>();
  for (const [name, t] of Object.entries(doc.tools)) {
    const deny: CompiledRule[] = [];
    const allow: CompiledRule[] = [];
    (t.rules ?? []).forEach((r, index) => {
      let v: ValidateFunction;
      try {
        v = ajv.compile(r.arguments);
      } catch (e) {
        throw invalid('rule predicate is not a valid JSON Schema', { tool: name, rule: index }, e);
      }
      const rule: CompiledRule = {
        index,
        test: (args) => v(args),
        ...(r.reason === undefined ? {} : { reason: r.reason }),
      };
      (r.effect === 'deny' ? deny : allow).push(rule);
    });
    const params: GovernedParam[] = [];
    for (const [param, spec] of Object.entries(t.parameters ?? {})) {
      if (!t.sensitive)
        throw invalid('governed parameters are only meaningful on sensitive tools', {
          tool: name,
          param,
        });
      for (const cls of spec.sources)
        if (!sourceClasses.has(cls))
          throw invalid('parameter names an undeclared source class', {
            tool: name,
            param,
            sourceClass: cls,
          });
      params.push(
        Object.freeze({
          name: param,
          sources: Object.freeze([...spec.sources]),
          contextSources: Object.freeze(
            spec.sources.filter((c) => sourceClasses.get(c)?.fromContext === true),
          ),
        }),
      );
    }
    tools.set(
      name,
      Object.freeze({
        name,
        sensitive: t.sensitive,
        mode: t.mode ?? doc.mode,
        authority: t.authority ?? (t.sensitive ? 'A' : 'U'),
        deny: Object.freeze(deny),
        allow: Object.freeze(allow),
        params: Object.freeze(params),
        governedKinds:
          t.governedKinds === undefined
            ? kinds
            : Object.freeze(new Set<ValueKind>(t.governedKinds)),
      }),
    );
  }

  return Object.freeze({
    mode: doc.mode,
    unknownTools: doc.unknownTools ?? 'deny',
    layer1Scope: doc.layer1Scope ?? 'mentioned',
    parentlessSensitiveDeny: doc.parentlessSensitiveDeny ?? false,
    untraced: doc.untraced ?? 'require_user',
    unknownToolsUntrusted: doc.unknownToolsUntrusted ?? 'require_user',
    governedKinds: kinds,
    sourceClasses,
    tools,
  });
}

/** {@link loadPolicy} as a value: `{ ok: false, error }` (code `POLICY_INVALID`) instead of a throw. */
export function safeLoadPolicy(input: unknown): SafeResult<Policy> {
  return safely(() => loadPolicy(input), 'POLICY_INVALID');
}
