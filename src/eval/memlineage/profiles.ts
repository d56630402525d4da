/**
 * @module eval/memlineage/profiles
 * The defence profiles of MemLineage §6.1/§6.5/§6.6 and the gate policies the harness uses.
 * A profile changes only the read path, lineage recording and gating policy; stores, attacks
 * and agents are identical across profiles (§6.1 "single variable changed").
 */
import type { PolicyDocument, VerdictMode } from '../../core/gate/index.js';
import {
  DEFAULT_LINEAGE_OPTIONS,
  strictLineageOptions,
  type LineageOptions,
} from '../../core/lineage/index.js';

export const ProfileNames = [
  'no_defense',
  'sig_only',
  'memlineage',
  'memory_sandbox',
  'coarse_taint',
  'strict',
] as const;
export type ProfileName = (typeof ProfileNames)[number];

/** Defence mechanisms a profile can switch off one at a time (the issue 18 ablation). */
export const Mechanisms = ['signature', 'inclusion', 'escaping', 'propagation', 'gate'] as const;
export type Mechanism = (typeof Mechanisms)[number];

export interface Profile {
  readonly name: string;
  /** Mechanisms switched off (ablation only; default none). */
  readonly ablate?: readonly Mechanism[];
  /** Memory is recalled into the context at all (memory_sandbox: no). */
  readonly recall: boolean;
  /** Signature + log inclusion checked on recall (unverifiable entries dropped). */
  readonly verify: boolean;
  /** `trusted`: every recalled entry renders TRUSTED; `lineage`: the signed, propagated label. */
  readonly labels: 'trusted' | 'lineage';
  /** Writers record parent edges (and Equation (1) labels). */
  readonly recordLineage: boolean;
  readonly lineage: LineageOptions;
  readonly policy: PolicyDocument;
}

/** Sensitive sinks of §5.3 plus the banking / file tools; `answer` is the non-sensitive reply. */
const TOOLS_LAYER1 = (mode: VerdictMode): PolicyDocument['tools'] => ({
  send_email: { sensitive: true, mode },
  http_post: { sensitive: true, mode },
  execute_code: { sensitive: true, mode },
  db_query: { sensitive: true, mode },
  send_money: { sensitive: true, mode },
  read_file: { sensitive: true, mode },
  answer: { sensitive: false },
});

/** Layer 1 only (context chain of custody), the §6.2 evaluation policy. */
export function layer1Policy(
  mode: VerdictMode,
  scope: 'mentioned' | 'context' = 'mentioned',
): PolicyDocument {
  return { version: 1, mode, unknownTools: 'deny', layer1Scope: scope, tools: TOOLS_LAYER1(mode) };
}

const trusted = (description: string) => ({
  origin: 'segment' as const,
  maxLabel: 'DERIVED_TRUSTED' as const,
  description,
});

/**
 * Layer 1 + per-tool parameter authority (§3.7 second layer): each governed parameter names the
 * source classes allowed to authorise it; an external TODO may appear but authorises nothing.
 */
export function authorityPolicy(mode: VerdictMode = 'repair_and_retry'): PolicyDocument {
  const p = (cls: string) => ({ sources: [cls, 'user_request'] });
  return {
    version: 1,
    mode,
    unknownTools: 'deny',
    layer1Scope: 'mentioned',
    sourceClasses: {
      trusted_bill: trusted('bank API invoice object (connector-authenticated)'),
      trusted_contact: trusted('trusted contact store'),
      trusted_index: trusted('local file index'),
      approved_endpoint: trusted('approved endpoint registry'),
      external_todo: { origin: 'segment', description: 'tool output / external note' },
      user_request: { origin: 'user_request' },
    },
    tools: {
      ...TOOLS_LAYER1(mode),
      send_money: {
        sensitive: true,
        mode,
        parameters: { recipient: p('trusted_bill'), amount: p('trusted_bill') },
      },
      send_email: { sensitive: true, mode, parameters: { to: p('trusted_contact') } },
      read_file: { sensitive: true, mode, parameters: { path: p('trusted_index') } },
      http_post: { sensitive: true, mode, parameters: { url: p('approved_endpoint') } },
    },
  };
}

const base = {
  recall: true,
  verify: true,
  recordLineage: true,
  labels: 'lineage' as const,
  lineage: DEFAULT_LINEAGE_OPTIONS,
};

/** The six profiles (strict at τ = 0.3, the §6.6 operating point). */
export function profile(name: ProfileName, mode: VerdictMode = 'deny'): Profile {
  switch (name) {
    case 'no_defense':
      return {
        ...base,
        name,
        verify: false,
        labels: 'trusted',
        recordLineage: false,
        policy: layer1Policy(mode),
      };
    case 'sig_only':
      return { ...base, name, labels: 'trusted', recordLineage: false, policy: layer1Policy(mode) };
    case 'memlineage':
      return { ...base, name, policy: layer1Policy(mode) };
    case 'memory_sandbox':
      return {
        ...base,
        name,
        recall: false,
        labels: 'trusted',
        recordLineage: false,
        policy: layer1Policy(mode),
      };
    case 'coarse_taint':
      return { ...base, name, policy: layer1Policy('deny', 'context') };
    case 'strict':
      return { ...base, name, lineage: strictLineageOptions(0.3), policy: layer1Policy(mode) };
  }
}

/** A profile with its lineage options replaced (ablation / single strict knobs). */
export function withLineage(p: Profile, name: string, lineage: LineageOptions): Profile {
  return { ...p, name, lineage };
}
