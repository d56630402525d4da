/**
 * @module adapters/pglite/binary-params
 * Statements whose parameters travel in PostgreSQL's binary send formats, several of them in
 * one PGlite protocol round trip, for the group-commit path (`./commit-sql.js`).
 *
 * Why: `PGlite.query` sends every parameter as text — a 384-d vector as ~3 KB of decimals that
 * pgvector parses with `strtof` in WebAssembly, a bytea as hex — and spends six protocol calls
 * per statement (Parse, Describe, Bind, Describe, Execute, Sync), each a crossing into
 * WebAssembly. Here a statement is Parse + Bind (every parameter format 1 = binary) + Execute,
 * a list of them ends in one Sync, and the whole message goes through PGlite's public
 * `execProtocolRawStream` under its query lock — the way `./binary-rows.js` reads. Values are
 * only ever bound parameters, never SQL text. An ErrorResponse is thrown as a driver-shaped
 * error (`code` = SQLSTATE) for `../sql/errors.js` `normalised`; inside a transaction the
 * server then skips the rest up to the Sync and the caller's transaction rolls back.
 *
 * Protocol: PostgreSQL docs, "Message Formats" (Parse, Bind, Execute, Sync; DataRow,
 * CommandComplete, ErrorResponse, ReadyForQuery) and "Binary array format" (`array_send`):
 * int32 ndim, int32 has-nulls flag, int32 element type OID, per dimension int32 size and int32
 * lower bound, then per element an int32 length (-1 = NULL) and the element's send format.
 */
import type { PgliteDb } from './db.js';
import { BinaryQueryError, malformed, rawExchange, walkResponse } from './binary-rows.js';

const utf8 = new TextEncoder();

/** Built-in type OIDs (pg_type.dat; stable across PostgreSQL versions). */
export const OID = { bytea: 17, int8: 20, int4: 23, text: 25, jsonb: 3802 } as const;

/** One parameter value in its binary send format; null = SQL NULL. */
export type BinaryParam = Uint8Array | null;

/** A growable big-endian byte writer. */
class Writer {
  buf = new Uint8Array(4096);
  dv = new DataView(this.buf.buffer);
  len = 0;
  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
    this.dv = new DataView(next.buffer);
  }
  u8(v: number): void {
    this.room(1);
    this.buf[this.len++] = v;
  }
  i16(v: number): void {
    this.room(2);
    this.dv.setInt16(this.len, v);
    this.len += 2;
  }
  i32(v: number): void {
    this.room(4);
    this.dv.setInt32(this.len, v);
    this.len += 4;
  }
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  cstring(s: string): void {
    this.bytes(utf8.encode(s));
    this.u8(0);
  }
  /** Start a message of `type`; returns where its length goes ({@link end}). */
  begin(type: string): number {
    this.u8(type.charCodeAt(0));
    const at = this.len;
    this.i32(0);
    return at;
  }
  end(at: number): void {
    this.dv.setInt32(at, this.len - at);
  }
  result(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

// ---- parameter encoders (each type's send format) ----------------------------------------

export const textParam = (s: string): Uint8Array => utf8.encode(s);

/**
 * A value outside the column type's range is refused as the server refuses it in text form
 * (SQLSTATE 22003), never wrapped around by the fixed-width encoding.
 */
const outOfRange = (type: string): BinaryQueryError =>
  new BinaryQueryError(`value out of range for type ${type}`, '22003');

const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

export function int8Param(v: number | bigint): Uint8Array {
  const n = typeof v === 'bigint' ? v : Number.isSafeInteger(v) ? BigInt(v) : undefined;
  if (n === undefined || n < INT8_MIN || n > INT8_MAX) throw outOfRange('bigint');
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, n);
  return b;
}

/** A one-dimensional array of `elementOid` whose elements are already in send format. */
export function arrayParam(elementOid: number, elems: readonly BinaryParam[]): Uint8Array {
  let size = 20;
  let nulls = 0;
  for (const e of elems) {
    size += 4 + (e === null ? 0 : e.length);
    if (e === null) nulls = 1;
  }
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  dv.setInt32(0, 1); // ndim
  dv.setInt32(4, nulls);
  dv.setInt32(8, elementOid);
  dv.setInt32(12, elems.length);
  dv.setInt32(16, 1); // lower bound
  let p = 20;
  for (const e of elems) {
    if (e === null) {
      dv.setInt32(p, -1);
      p += 4;
    } else {
      dv.setInt32(p, e.length);
      out.set(e, p + 4);
      p += 4 + e.length;
    }
  }
  return out;
}

export const textArray = (vs: readonly (string | undefined)[]): Uint8Array =>
  arrayParam(
    OID.text,
    vs.map((v) => (v === undefined ? null : utf8.encode(v))),
  );

export const int8Array = (vs: readonly (number | bigint | undefined)[]): Uint8Array =>
  arrayParam(
    OID.int8,
    vs.map((v) => (v === undefined ? null : int8Param(v))),
  );

export function int4Array(vs: readonly number[]): Uint8Array {
  return arrayParam(
    OID.int4,
    vs.map((v) => {
      if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) throw outOfRange('integer');
      const b = new Uint8Array(4);
      new DataView(b.buffer).setInt32(0, v);
      return b;
    }),
  );
}

export const byteaArray = (vs: readonly Uint8Array[]): Uint8Array => arrayParam(OID.bytea, vs);

/** An `int[]` whose absent elements are NULL. */
export const int4ArrayOpt = (vs: readonly (number | undefined)[]): Uint8Array =>
  arrayParam(
    OID.int4,
    vs.map((v) => {
      if (v === undefined) return null;
      if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) throw outOfRange('integer');
      const b = new Uint8Array(4);
      new DataView(b.buffer).setInt32(0, v);
      return b;
    }),
  );

/** A `jsonb[]` of JSON texts (the jsonb send format: version byte 1, then the text). */
export const jsonbArray = (vs: readonly (string | undefined)[]): Uint8Array =>
  arrayParam(
    OID.jsonb,
    vs.map((v) => {
      if (v === undefined) return null;
      const t = utf8.encode(v);
      const b = new Uint8Array(t.length + 1);
      b[0] = 1;
      b.set(t, 1);
      return b;
    }),
  );

/** pgvector's `vector_send`: int16 dim, int16 unused, dim × float4, big-endian. */
export function vectorSend(v: Float32Array): Uint8Array {
  const out = new Uint8Array(4 + 4 * v.length);
  const dv = new DataView(out.buffer);
  dv.setInt16(0, v.length);
  for (let i = 0; i < v.length; i++) dv.setFloat32(4 + 4 * i, v[i]!);
  return out;
}

// ---- messages and responses --------------------------------------------------------------

/** One statement of a pipeline: SQL on the unnamed statement, parameters all binary. */
export interface BinaryStatement {
  readonly sql: string;
  readonly params: readonly BinaryParam[];
}

/** Parse + Bind + Execute per statement, then one Sync; result columns in binary format. */
export function pipelineMessage(statements: readonly BinaryStatement[]): Uint8Array {
  const w = new Writer();
  for (const s of statements) {
    let at = w.begin('P');
    w.cstring(''); // unnamed statement
    w.cstring(s.sql);
    w.i16(0); // parameter types inferred (every parameter carries a cast)
    w.end(at);
    at = w.begin('B');
    w.cstring(''); // unnamed portal
    w.cstring('');
    w.i16(1);
    w.i16(1); // one format code: every parameter binary
    w.i16(s.params.length);
    for (const p of s.params) {
      if (p === null) w.i32(-1);
      else {
        w.i32(p.length);
        w.bytes(p);
      }
    }
    w.i16(1);
    w.i16(1); // every result column binary
    w.end(at);
    at = w.begin('E');
    w.cstring('');
    w.i32(0);
    w.end(at);
  }
  w.end(w.begin('S'));
  return w.result();
}

/** What one statement of a pipeline returned: its rows' fields (binary), in order. */
export interface StatementResult {
  /** Per row, per column: the field's bytes (a view into the response), or null. */
  readonly rows: (Uint8Array | null)[][];
}

/**
 * Split a raw response into per-statement results (one per CommandComplete). Throws the
 * server's error (`BinaryQueryError`) if any statement failed, or on a malformed response.
 */
export function pipelineResults(raw: Uint8Array, statements: number): StatementResult[] {
  const out: StatementResult[] = [];
  let rows: (Uint8Array | null)[][] = [];
  walkResponse(
    raw,
    (fields, at, len) => {
      const row: (Uint8Array | null)[] = [];
      for (let i = 0; i < fields; i++) {
        const l = len[i]!;
        row.push(l < 0 ? null : raw.subarray(at[i]!, at[i]! + l));
      }
      rows.push(row);
    },
    () => {
      out.push({ rows });
      rows = [];
    },
  );
  if (out.length !== statements) throw malformed('statement count');
  return out;
}

/**
 * Run `statements` in one round trip inside the current PGlite transaction (call it only from
 * within a `db.transaction` callback, after the scope was entered): they run in order, and
 * the first failure skips the rest and is thrown.
 */
export async function runPipeline(
  db: PgliteDb,
  statements: readonly BinaryStatement[],
): Promise<StatementResult[]> {
  const raw = await rawExchange(db, pipelineMessage(statements));
  return pipelineResults(raw, statements.length);
}
