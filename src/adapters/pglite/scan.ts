/**
 * @module adapters/pglite/scan
 * `scanEntries` on PGlite: the shared scan query (`../sql/entries.js` `scanWhere`) with binary
 * result rows (`./binary-rows.js`), decoded straight into {@link StoredEntry} values shaped
 * exactly as `entryOut` shapes a text row (optional fields absent when NULL).
 */
import { MemwardenError } from '../../core/errors.js';
import { type SourceTier, SourceTiers } from '../../core/trust.js';
import type { StoredEntry } from '../../ports/storage.js';
import { metadataOut, scanWhere } from '../sql/entries.js';
import { float4FromVectorSend } from '../sql/rank.js';
import { FieldReader, forEachDataRow } from './binary-rows.js';

const COLS = [
  'id',
  'owner',
  'tier',
  'bytes',
  'leaf_index',
  'mac_kid',
  'mac',
  'writer',
  'kind',
  'created_ns',
  'expires_ns',
  'content',
  'uri',
  'src_hash',
  'deleted',
  'superseded_by',
  'embedding_vec',
  'memory_id',
  'event_ns',
  'metadata',
  'run_id',
  'agent_id',
  'lex_len',
] as const;

/** The scan's SELECT (pgvector column): `$1` the keyset start, `$2` the page size. */
export const SCAN_SQL = `SELECT ${COLS.join(', ')} FROM entries WHERE ${scanWhere({ vector: true })}`;

const corrupt = (what: string): MemwardenError =>
  new MemwardenError('STORAGE_FAILED', `unexpected column value: ${what}`);

/** Decode the binary DataRows of {@link SCAN_SQL}. */
export function decodeScanRows(raw: Uint8Array): StoredEntry[] {
  const r = new FieldReader(raw);
  const out: StoredEntry[] = [];
  forEachDataRow(raw, COLS.length, (at, len) => {
    const need = (i: number): void => {
      if (len[i]! < 0) throw corrupt(`NULL ${COLS[i]}`);
    };
    for (const i of [0, 1, 2, 3, 4, 5, 6, 14, 16]) need(i);
    const tier = r.text(at[2]!, len[2]!);
    if (!(SourceTiers as readonly string[]).includes(tier)) throw corrupt('bad tier');
    const leaf = r.int8(at[4]!, len[4]!);
    if (leaf > BigInt(Number.MAX_SAFE_INTEGER) || leaf < BigInt(Number.MIN_SAFE_INTEGER))
      throw corrupt('index beyond 2^53');
    const e: Record<string, unknown> = {
      id: r.text(at[0]!, len[0]!),
      owner: r.text(at[1]!, len[1]!),
      tier: tier as SourceTier,
      bytes: r.bytes(at[3]!, len[3]!),
      leafIndex: Number(leaf),
      macKid: r.text(at[5]!, len[5]!),
      mac: r.bytes(at[6]!, len[6]!),
      deleted: r.bool(at[14]!, len[14]!),
    };
    const text = (k: string, i: number): void => {
      if (len[i]! >= 0) e[k] = r.text(at[i]!, len[i]!);
    };
    const big = (k: string, i: number): void => {
      if (len[i]! >= 0) e[k] = r.int8(at[i]!, len[i]!);
    };
    text('writer', 7);
    text('kind', 8);
    big('createdAtNs', 9);
    big('expiresAtNs', 10);
    text('content', 11);
    text('uri', 12);
    text('srcHash', 13);
    text('supersededBy', 15);
    e.embedding = float4FromVectorSend(raw, at[16]!, len[16]!);
    text('memoryId', 17);
    big('eventAtNs', 18);
    if (len[19]! >= 0) {
      // jsonb's binary form: a version byte (1), then the JSON text.
      if (len[19]! < 1 || raw[at[19]!] !== 1) throw corrupt('metadata');
      e.metadata = metadataOut(r.text(at[19]! + 1, len[19]! - 1));
    }
    text('runId', 20);
    text('agentId', 21);
    if (len[22]! >= 0) e.lexLen = r.int4(at[22]!, len[22]!);
    out.push(e as unknown as StoredEntry);
  });
  return out;
}
