/**
 * Whether a pipelined transaction may commit (ADR 0028): used by the backend on the main thread
 * (`./pipeline-tx.ts`, in-process PGlite) and by the worker thread (`./worker-host.mjs`), so the
 * two decide alike. Plain JavaScript for the same reason as the worker host: Node's workers
 * cannot run TypeScript, and the build copies this file into `dist/` next to the host.
 *
 * `raw`: the backend messages of one extended-protocol pipeline (Parse/Bind/Execute per
 * statement, one Sync). `expect`: per listed statement (0-based, in send order) the number of
 * rows it must have returned. The verdict is true only when the response is well formed, no
 * statement failed (no ErrorResponse), every statement completed and every expectation holds;
 * anything else — including a response this walker does not understand — is false (do not
 * commit). Say why with the caller's own parser (`./binary-params.ts` `pipelineResults`).
 *
 * @param {Uint8Array} raw
 * @param {number} statements
 * @param {readonly { statement: number, rows: number }[]} expect
 * @returns {boolean}
 */
export function pipelineVerdict(raw, statements, expect) {
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  /** @type {number[]} */
  const rows = [];
  let current = 0;
  let ready = false;
  let p = 0;
  while (p < raw.length) {
    if (p + 5 > raw.length) return false;
    const type = raw[p];
    const size = dv.getInt32(p + 1);
    if (size < 4 || p + 1 + size > raw.length) return false;
    if (ready) return false; // nothing may follow the ReadyForQuery of the one Sync
    if (type === 0x44 /* D: DataRow */) current++;
    else if (type === 0x43 /* C: CommandComplete */) {
      rows.push(current);
      current = 0;
    } else if (type === 0x45 /* E: ErrorResponse */) return false;
    else if (type === 0x5a /* Z: ReadyForQuery */) ready = true;
    p += 1 + size;
  }
  if (!ready || current !== 0 || rows.length !== statements) return false;
  for (const e of expect) if (rows[e.statement] !== e.rows) return false;
  return true;
}
