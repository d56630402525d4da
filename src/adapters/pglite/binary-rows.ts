/**
 * @module adapters/pglite/binary-rows
 * One extended-protocol query whose result rows come back in PostgreSQL's binary format, for
 * the read model's partition loads (`scanEntries`, ADR 0018 addendum).
 *
 * Why: `PGlite.query` asks for text results and its protocol parser turns every field into a
 * JS string — a 384-d `vector` becomes ~3 KB of decimal text that `float4Out` splits and
 * parses, and every `bytea` a hex string PGlite decodes one `parseInt` per byte. Loading a
 * 10,000-entry partition cost ~2.2 s of CPU that way. Here the query runs in the caller's
 * scoped PGlite transaction (role and `app.principal` already set, so row-level security
 * decides the rows exactly as for any other SELECT), asks for binary results (`vector_send`'s
 * raw big-endian float4s, raw bytea, 8-byte int8) and the raw protocol bytes are decoded in
 * one pass. Nothing of the database changes: it is one SELECT, through PGlite's public
 * `execProtocolRawStream`.
 *
 * Protocol: PostgreSQL docs, "Message Formats" (Parse, Bind with one result-format code 1 =
 * all binary, Execute, Sync; DataRow, ErrorResponse, ReadyForQuery …) and each type's send
 * function for the field encodings.
 */
import { concatBytes } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import type { PgliteDb } from './db.js';
import { RawChunks } from './raw-chunks.mjs';

const utf8 = new TextEncoder();

function cstring(s: string): Uint8Array {
  const b = utf8.encode(s);
  const out = new Uint8Array(b.length + 1);
  out.set(b);
  return out;
}

/** One frontend message: type byte, int32 length (including itself), then the parts. */
function message(type: string, parts: readonly Uint8Array[]): Uint8Array {
  let len = 4;
  for (const p of parts) len += p.length;
  const out = new Uint8Array(1 + len);
  out[0] = type.charCodeAt(0);
  new DataView(out.buffer).setInt32(1, len);
  let o = 5;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const int16 = (v: number): Uint8Array => {
  const b = new Uint8Array(2);
  new DataView(b.buffer).setInt16(0, v);
  return b;
};
const int32 = (v: number): Uint8Array => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, v);
  return b;
};

/**
 * Parse + Bind + Execute + Sync of `sql` on the unnamed statement and portal; parameters in
 * text format (their types inferred by the server), every result column in binary format.
 */
export function binaryQueryMessage(sql: string, params: readonly (string | null)[]): Uint8Array {
  const bind: Uint8Array[] = [cstring(''), cstring(''), int16(0), int16(params.length)];
  for (const p of params) {
    if (p === null) bind.push(int32(-1));
    else {
      const b = utf8.encode(p);
      bind.push(int32(b.length), b);
    }
  }
  bind.push(int16(1), int16(1)); // one result-format code: binary, for every column
  const msgs = [
    message('P', [cstring(''), cstring(sql), int16(0)]),
    message('B', bind),
    message('E', [cstring(''), int32(0)]),
    message('S', []),
  ];
  return concatBytes(...msgs);
}

/** The server's ErrorResponse as a driver-shaped error (`code` = SQLSTATE), for `normalised`. */
export class BinaryQueryError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'BinaryQueryError';
  }
}

/**
 * Run `sql` inside the current PGlite transaction (call it only from within a
 * `db.transaction` callback, after the scope was entered) and return the raw backend messages.
 */
export function runBinaryQuery(
  db: PgliteDb,
  sql: string,
  params: readonly (string | null)[],
): Promise<Uint8Array> {
  return rawExchange(db, binaryQueryMessage(sql, params)); // a read: no file-system sync
}

/**
 * Send protocol `message` under PGlite's query lock — as its own statements in a transaction
 * run: nothing else's protocol messages can interleave with these (the transaction lock already
 * keeps out every `query`, `exec` and `transaction` of others) — and return the raw backend
 * messages, joined. No file-system sync: a read needs none, and inside a transaction its
 * COMMIT syncs.
 */
export async function rawExchange(db: PgliteDb, message: Uint8Array): Promise<Uint8Array> {
  const chunks = new RawChunks();
  await db.runExclusive(() =>
    db.execProtocolRawStream(message, { syncToFs: false, onRawData: chunks.add }),
  );
  return chunks.joined();
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Walk the backend messages of a raw response: each DataRow's fields (count, then per field
 * its offset into `raw` and length, -1 = NULL) go to `row`, each CommandComplete to `done`.
 * Throws the server's first error (`BinaryQueryError`), or on a malformed or truncated
 * response (no ReadyForQuery, a row after an error, a field past its message).
 */
export function walkResponse(
  raw: Uint8Array,
  row: (fields: number, at: Int32Array, len: Int32Array) => void,
  done?: () => void,
): void {
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  let at = new Int32Array(16);
  let len = new Int32Array(16);
  let error: BinaryQueryError | undefined;
  let ready = false;
  let p = 0;
  while (p < raw.length) {
    if (p + 5 > raw.length) throw malformed('truncated message header');
    const type = raw[p]!;
    const size = dv.getInt32(p + 1);
    const body = p + 5;
    const end = p + 1 + size;
    if (size < 4 || end > raw.length) throw malformed('truncated message');
    if (type === 0x44 /* D: DataRow */) {
      if (error !== undefined) throw malformed('row after an error');
      const fields = dv.getInt16(body);
      if (fields > at.length) {
        at = new Int32Array(fields);
        len = new Int32Array(fields);
      }
      let q = body + 2;
      for (let i = 0; i < fields; i++) {
        if (q + 4 > end) throw malformed('truncated row');
        const l = dv.getInt32(q);
        q += 4;
        if (l < -1 || q + Math.max(l, 0) > end) throw malformed('bad field length');
        at[i] = q;
        len[i] = l;
        if (l > 0) q += l;
      }
      row(fields, at, len);
    } else if (type === 0x43 /* C: CommandComplete */) {
      done?.();
    } else if (type === 0x45 /* E: ErrorResponse */) {
      error ??= errorResponse(raw, body, end);
    } else if (type === 0x5a /* Z: ReadyForQuery */) {
      ready = true;
    } // ParseComplete, BindComplete, NoticeResponse, ParameterStatus: skipped
    p = end;
  }
  if (error !== undefined) throw error;
  if (!ready) throw malformed('no ReadyForQuery');
}

/**
 * The DataRows of a raw binary-result response, each as `fields` × (offset, length) pairs into
 * `raw` (length -1: NULL), handed to `row` one at a time (the arrays are reused). Throws the
 * server's error, or on a malformed or truncated response.
 */
export function forEachDataRow(
  raw: Uint8Array,
  fields: number,
  row: (at: Int32Array, len: Int32Array) => void,
): void {
  walkResponse(raw, (n, at, len) => {
    if (n !== fields) throw malformed('unexpected field count');
    row(at, len);
  });
}

/** The fields of an ErrorResponse body (`raw[body, end)`) as a {@link BinaryQueryError}. */
export function errorResponse(raw: Uint8Array, body: number, end: number): BinaryQueryError {
  const f = new Map<string, string>();
  let p = body;
  while (p < end && raw[p] !== 0) {
    const k = String.fromCharCode(raw[p]!);
    let z = p + 1;
    while (z < end && raw[z] !== 0) z++;
    f.set(k, utf8Decoder.decode(raw.subarray(p + 1, z)));
    p = z + 1;
  }
  return new BinaryQueryError(f.get('M') ?? 'database error', f.get('C') ?? 'XX000');
}

export const malformed = (why: string): MemwardenError =>
  new MemwardenError('STORAGE_FAILED', `unexpected binary result: ${why}`);

/** Field decoders over one raw response (binary send formats). */
export class FieldReader {
  private readonly dv: DataView;
  constructor(readonly raw: Uint8Array) {
    this.dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  }
  text(at: number, len: number): string {
    return utf8Decoder.decode(this.raw.subarray(at, at + len));
  }
  /** A fresh copy of a bytea. */
  bytes(at: number, len: number): Uint8Array {
    return this.raw.slice(at, at + len);
  }
  int8(at: number, len: number): bigint {
    if (len !== 8) throw malformed('int8 of the wrong size');
    return this.dv.getBigInt64(at);
  }
  int4(at: number, len: number): number {
    if (len !== 4) throw malformed('int4 of the wrong size');
    return this.dv.getInt32(at);
  }
  bool(at: number, len: number): boolean {
    if (len !== 1) throw malformed('bool of the wrong size');
    return this.raw[at] !== 0;
  }
}
