/**
 * @module cli/format
 * JSON views of ledger values for the CLI (bytes as base64, nanoseconds as strings).
 */
import { toBase64 } from '../core/bytes.js';
import { entryLeafData, type SignedEntry } from '../core/entry/index.js';

export function entryJson(e: SignedEntry, leafIndex: number): Record<string, unknown> {
  return {
    id: e.id,
    leafIndex,
    ns: e.ns,
    writer: e.writer,
    kid: e.kid,
    kind: e.kind,
    content: e.content,
    tier: e.tier,
    label: e.label,
    parents: e.parents,
    weights: e.weights,
    ts: e.ts.toString(),
    ...(e.exp === undefined ? {} : { exp: e.exp.toString() }),
    ...(e.uri === undefined ? {} : { uri: e.uri }),
    signature: toBase64(e.sig),
    leafData: toBase64(entryLeafData(e)),
  };
}

/** Print a value as pretty JSON on stdout. */
export function printJson(v: unknown): void {
  process.stdout.write(
    JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x), 2) + '\n',
  );
}
