/**
 * @module memory/action/default-policy
 * The gate policy a `Memory` uses when the deployment gives none (MemLineage §3.7; ADR 0006).
 *
 * It declares the common sensitive tools of §2.1 (money movement, outbound messages and HTTP,
 * code execution, file writes, database queries). Every other tool is non-sensitive
 * (`unknownTools: "allow"`): the default names the sinks an injected memory is after and leaves
 * ordinary tools alone; deployments that want deny-by-default set `unknownTools: "deny"`.
 *
 * `send_money` governs its `recipient` and `amount` (Layer 2): a value is authorised only by a
 * sealed memory segment labelled at most DERIVED_TRUSTED (`trusted_memory`) or by the user's
 * fresh request (`user_request`); in repair mode a single trusted candidate replaces an
 * attacker-sourced value, otherwise the call is denied. Everything else denies on an untrusted
 * mentioned segment (the §6.2 deterministic evaluation's choice).
 */
import type { PolicyDocument } from '../../core/gate/index.js';

export const DEFAULT_POLICY: PolicyDocument = Object.freeze({
  version: 1,
  mode: 'deny',
  unknownTools: 'allow',
  layer1Scope: 'mentioned',
  sourceClasses: {
    trusted_memory: {
      origin: 'segment',
      maxLabel: 'DERIVED_TRUSTED',
      fromContext: true,
      description: 'a sealed memory segment with no untrusted ancestry (found by the gate itself)',
    },
    user_request: { origin: 'user_request', description: "the user's request this turn" },
  },
  tools: {
    send_money: {
      sensitive: true,
      mode: 'repair_and_retry',
      description: 'moves money',
      parameters: {
        recipient: { sources: ['trusted_memory', 'user_request'] },
        amount: { sources: ['trusted_memory', 'user_request'] },
      },
    },
    send_email: { sensitive: true, description: 'outbound message' },
    http_post: { sensitive: true, description: 'outbound HTTP with a body' },
    execute_code: { sensitive: true, authority: 'T', description: 'runs code' },
    write_file: { sensitive: true, description: 'file system write' },
    db_query: { sensitive: true, description: 'database access' },
  },
} satisfies PolicyDocument) as PolicyDocument;
