/**
 * @module core/gate/policy-schema
 * The JSON Schema (draft-07, validated with ajv) of a deployment policy document: Progent-style
 * tool policies (MemLineage §3.7, [13]) plus the per-parameter authority rules of Layer 2.
 *
 * ```json
 * {
 *   "version": 1,
 *   "mode": "repair_and_retry",
 *   "unknownTools": "deny",
 *   "sourceClasses": {
 *     "trusted_bill":  { "origin": "segment", "maxLabel": "DERIVED_TRUSTED" },
 *     "user_request":  { "origin": "user_request" },
 *     "external_todo": { "origin": "segment" }
 *   },
 *   "tools": {
 *     "send_money": {
 *       "sensitive": true,
 *       "rules": [{ "effect": "deny", "arguments": { "properties": { "amount": { "exclusiveMinimum": 10000 } } } }],
 *       "parameters": {
 *         "recipient": { "sources": ["trusted_bill", "user_request"] },
 *         "amount":    { "sources": ["trusted_bill", "user_request"] }
 *       }
 *     },
 *     "search_web": { "sensitive": false }
 *   }
 * }
 * ```
 */

const IDENT = '^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$';
const MODES = ['deny', 'require_user', 'strip_and_retry', 'repair_and_retry'];
const KINDS = {
  type: 'array',
  uniqueItems: true,
  items: { enum: ['email', 'url', 'domain', 'iban', 'phone', 'account', 'amount', 'date', 'path'] },
};

/** The policy document schema. */
export const POLICY_SCHEMA = {
  $id: 'https://memwarden.dev/schemas/policy-v1.json',
  type: 'object',
  additionalProperties: false,
  required: ['version', 'mode', 'tools'],
  properties: {
    version: { const: 1 },
    /** What an untrusted finding on a sensitive tool becomes (§3.7). */
    mode: { enum: MODES },
    /** Tools the policy does not name (default `deny`: fail closed). */
    unknownTools: { enum: ['allow', 'deny', 'require_user'] },
    /** `mentioned` (default): segments the arguments mention; `context`: every segment (coarse taint). */
    layer1Scope: { enum: ['mentioned', 'context'] },
    /** §6.6 strict knob. */
    parentlessSensitiveDeny: { type: 'boolean' },
    /**
     * What a governed value that traces to nothing becomes (ADR 0043; default `require_user`).
     * There is no `allow`: an untraceable sensitive value is never dispatched unasked.
     */
    untraced: { enum: ['require_user', 'deny'] },
    /**
     * With `unknownTools: "allow"`: what an unnamed tool's call becomes when a value in it traces
     * to untrusted memory (default `require_user`). To let such calls through, name the tool
     * as non-sensitive.
     */
    unknownToolsUntrusted: { enum: ['require_user', 'deny'] },
    /** Value kinds every sensitive tool's arguments must be traced for (default email, url, domain, iban, phone, account). */
    governedKinds: KINDS,
    sourceClasses: {
      type: 'object',
      propertyNames: { pattern: IDENT },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          origin: { enum: ['segment', 'user_request', 'caller'] },
          maxLabel: { enum: ['TRUSTED', 'DERIVED_TRUSTED', 'DERIVED_UNTRUSTED', 'EXTERNAL'] },
          /**
           * `origin: "segment"` only: the gate finds the value itself — any sealed segment
           * within `maxLabel` and the tool's authority whose content mentions it (canonical
           * forms) authorises it, without a caller-supplied claim.
           */
          fromContext: { type: 'boolean' },
          description: { type: 'string', maxLength: 1024 },
        },
      },
    },
    tools: {
      type: 'object',
      propertyNames: { pattern: IDENT },
      maxProperties: 4096,
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['sensitive'],
        properties: {
          sensitive: { type: 'boolean' },
          mode: { enum: MODES },
          /** Authority a justifying segment needs (default A for sensitive, U otherwise). */
          authority: { enum: ['U', 'A', 'T'] },
          description: { type: 'string', maxLength: 1024 },
          /** Overrides the policy's `governedKinds` for this tool. */
          governedKinds: KINDS,
          rules: {
            type: 'array',
            maxItems: 256,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['effect', 'arguments'],
              properties: {
                effect: { enum: ['allow', 'deny'] },
                /** A JSON Schema the call's arguments object is tested against. */
                arguments: { type: ['object', 'boolean'] },
                reason: { type: 'string', maxLength: 1024 },
              },
            },
          },
          parameters: {
            type: 'object',
            propertyNames: { pattern: '^[A-Za-z_$][A-Za-z0-9_$-]{0,127}$' },
            additionalProperties: {
              type: 'object',
              additionalProperties: false,
              required: ['sources'],
              properties: {
                /** Allowed source classes, in precedence order for repair. */
                sources: {
                  type: 'array',
                  minItems: 1,
                  uniqueItems: true,
                  items: { type: 'string', pattern: IDENT },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;
