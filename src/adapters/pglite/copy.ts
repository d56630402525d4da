/**
 * @module adapters/pglite/copy
 * Bulk entry insert for PGlite's commit path: `COPY … FROM '/dev/blob' (FORMAT binary)` into a
 * session temp table, then one `INSERT INTO entries … SELECT` in the caller's scope.
 *
 * Why: parsing a 384-d vector from text (`strtof` per value, in WebAssembly) dominated the
 * insert time of an entry (~0.2 ms of ~0.35 ms). Binary COPY hands pgvector's `vector_recv`
 * raw float4s instead. COPY FROM is not allowed on a table under row-level security, and
 * reading `/dev/blob` needs the superuser, so the COPY fills an unscoped temp table as the
 * session's superuser and the rows then move into `entries` with an ordinary INSERT under the
 * transaction's scope role — the database still applies every RLS `WITH CHECK`, unique key and
 * constraint to them. Values travel only as bound binary data, never as SQL text.
 *
 * Binary COPY format: PostgreSQL docs, "COPY — Binary Format" (signature, flags, header
 * extension, then per tuple an int16 field count and int32-length-prefixed fields, -1 = NULL,
 * trailer int16 -1). Field encodings are the types' send formats: text = UTF-8 bytes, bytea =
 * raw bytes, int8 = big-endian, vector = int16 dim, int16 unused, dim × big-endian float4.
 */
import type { StoredEntry } from '../../ports/storage.js';
import { checkEmbedding } from '../sql/rank.js';

/** The staging table: the entry columns a new row carries (state columns take defaults). */
export const STAGING_TABLE = 'mw_entries_in';

export const COPY_COLS =
  'id, owner, tier, bytes, leaf_index, mac_kid, mac, writer, kind, created_ns, expires_ns, content, uri, src_hash, embedding_vec';

export const CREATE_STAGING_SQL = `CREATE TEMP TABLE IF NOT EXISTS ${STAGING_TABLE} (
  id text, owner text, tier text, bytes bytea, leaf_index bigint, mac_kid text, mac bytea,
  writer text, kind text, created_ns bigint, expires_ns bigint, content text, uri text,
  src_hash text, embedding_vec vector(384))`;

const SIGNATURE = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00];
const utf8 = new TextEncoder();

/** Encode entries as a binary COPY stream of {@link COPY_COLS}. */
export function encodeCopy(es: readonly StoredEntry[]): Uint8Array {
  const fields: (Uint8Array | null)[][] = es.map((e) => {
    const big = (v: bigint | undefined): Uint8Array | null => {
      if (v === undefined) return null;
      const b = new Uint8Array(8);
      new DataView(b.buffer).setBigInt64(0, v);
      return b;
    };
    const str = (v: string | undefined): Uint8Array | null =>
      v === undefined ? null : utf8.encode(v);
    let emb: Uint8Array | null = null;
    if (e.embedding !== undefined) {
      const v = checkEmbedding(e.embedding);
      emb = new Uint8Array(4 + 4 * v.length);
      const dv = new DataView(emb.buffer);
      dv.setInt16(0, v.length);
      for (let i = 0; i < v.length; i++) dv.setFloat32(4 + 4 * i, v[i]!);
    }
    return [
      utf8.encode(e.id),
      utf8.encode(e.owner),
      utf8.encode(e.tier),
      e.bytes,
      big(BigInt(e.leafIndex)),
      utf8.encode(e.macKid),
      e.mac,
      str(e.writer),
      str(e.kind),
      big(e.createdAtNs),
      big(e.expiresAtNs),
      str(e.content),
      str(e.uri),
      str(e.srcHash),
      emb,
    ];
  });
  let len = SIGNATURE.length + 8 + 2;
  for (const row of fields) {
    len += 2;
    for (const f of row) len += 4 + (f?.length ?? 0);
  }
  const out = new Uint8Array(len);
  const dv = new DataView(out.buffer);
  out.set(SIGNATURE, 0);
  let p = SIGNATURE.length + 8; // flags 0, header extension length 0
  for (const row of fields) {
    dv.setInt16(p, row.length);
    p += 2;
    for (const f of row) {
      if (f === null) {
        dv.setInt32(p, -1);
        p += 4;
      } else {
        dv.setInt32(p, f.length);
        out.set(f, p + 4);
        p += 4 + f.length;
      }
    }
  }
  dv.setInt16(p, -1);
  return out;
}
