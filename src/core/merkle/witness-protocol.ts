/**
 * @module core/merkle/witness-protocol
 * The C2SP tlog-witness `add-checkpoint` exchange (https://c2sp.org/tlog-witness), pure:
 * building and parsing the request body, and the witness's decision, step by step as the
 * spec orders its checks. The HTTP service, its key and its durable state live in the edge
 * (src/witness); everything that decides whether to cosign lives here.
 *
 * Request body (§add-checkpoint): `old <size>\n`, zero to 63 base64 consistency-proof lines,
 * an empty line, then the signed checkpoint note. Each line ends in U+000A.
 *
 * The witness's checks, in the spec's order:
 * 1. unknown origin → 404; no signature verifies under a trusted key for it → 403;
 * 2. old size > checkpoint size → 400;
 * 3. old size ≠ the size of the latest checkpoint it cosigned (0 if none) → 409, body the
 *    known size (`text/x.tlog.size`);
 * 4. old size = checkpoint size: roots must be identical, else 409;
 * 5. the RFC 6962 §2.1.2 consistency proof from old to new (empty when old = 0) must verify,
 *    else 422;
 * 6. persist the new (size, root) atomically with the check in 3, then cosign → 200.
 */
import { bytesEqual, fromBase64, toBase64 } from '../bytes.js';
import { verifyEd25519 } from '../crypto/ed25519.js';
import { MemwardenError, isMemwardenError } from '../errors.js';
import { type Checkpoint, parseCheckpoint } from './checkpoint.js';
import { HASH_SIZE } from './hash.js';
import { MAX_NOTE_BYTES, parseNote, verifyNote } from './note.js';
import { verifyConsistency } from './verify.js';

/** §add-checkpoint: "The client MUST NOT send more than 63 consistency proof lines." */
export const MAX_CONSISTENCY_PROOF_LINES = 63;
/** Bound on a request body: the old line, 63 proof lines and a note. */
export const MAX_ADD_CHECKPOINT_BYTES = 64 + MAX_CONSISTENCY_PROOF_LINES * 46 + MAX_NOTE_BYTES;
/** Content type of a 409 body (§add-checkpoint). */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';

/** A parsed add-checkpoint request. */
export interface AddCheckpointRequest {
  readonly oldSize: number;
  readonly proof: readonly Uint8Array[];
  /** The signed checkpoint note (may carry several signatures). */
  readonly checkpoint: string;
}

const malformed = (message: string): MemwardenError =>
  new MemwardenError('WITNESS_REQUEST_MALFORMED', message);
const SIZE_RE = /^(?:0|[1-9][0-9]*)$/;

function parseSize(s: string): number {
  if (!SIZE_RE.test(s)) throw malformed('size must be decimal without leading zeroes');
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw malformed('size out of range');
  return n;
}

/** Build the request body (the log side). */
export function formatAddCheckpointRequest(r: AddCheckpointRequest): string {
  if (!Number.isSafeInteger(r.oldSize) || r.oldSize < 0)
    throw malformed('old size must be a non-negative integer');
  if (r.proof.length > MAX_CONSISTENCY_PROOF_LINES) throw malformed('too many proof lines');
  if (r.oldSize === 0 && r.proof.length > 0) throw malformed('the proof from size 0 is empty');
  for (const h of r.proof) if (h.length !== HASH_SIZE) throw malformed('proof hashes are 32 bytes');
  parseNote(r.checkpoint);
  return `old ${r.oldSize}\n${r.proof.map((h) => toBase64(h) + '\n').join('')}\n${r.checkpoint}`;
}

/** Parse a request body strictly; anything off is WITNESS_REQUEST_MALFORMED (→ 400). */
export function parseAddCheckpointRequest(body: string): AddCheckpointRequest {
  if (typeof body !== 'string') throw malformed('body must be text');
  if (body.length > MAX_ADD_CHECKPOINT_BYTES) throw malformed('body too large');
  let pos = body.indexOf('\n');
  if (pos < 0) throw malformed('missing old size line');
  const first = body.slice(0, pos);
  if (!first.startsWith('old ')) throw malformed('first line must be "old <size>"');
  const oldSize = parseSize(first.slice(4));
  const proof: Uint8Array[] = [];
  for (;;) {
    const start = pos + 1;
    const end = body.indexOf('\n', start);
    if (end < 0) throw malformed('missing empty line before the checkpoint');
    const line = body.slice(start, end);
    pos = end;
    if (line === '') break;
    if (proof.length === MAX_CONSISTENCY_PROOF_LINES) throw malformed('more than 63 proof lines');
    let h: Uint8Array;
    try {
      h = fromBase64(line);
    } catch {
      throw malformed('proof line is not standard base64');
    }
    if (h.length !== HASH_SIZE) throw malformed('proof hash must be 32 bytes');
    proof.push(h);
  }
  const checkpoint = body.slice(pos + 1);
  try {
    parseCheckpoint(parseNote(checkpoint).text);
  } catch (e) {
    throw new MemwardenError(
      'WITNESS_REQUEST_MALFORMED',
      'checkpoint is not a signed checkpoint note',
      { cause: e },
    );
  }
  return { oldSize, proof, checkpoint };
}

/** Parse a 409 body: a decimal tree size and a newline. */
export function parseTreeSizeBody(body: string): number {
  if (typeof body !== 'string' || !body.endsWith('\n') || body.length > 24)
    throw malformed('size body must be a decimal and a newline');
  return parseSize(body.slice(0, -1));
}

/** A witness's record of one log: the latest checkpoint it cosigned. */
export interface WitnessLogState {
  readonly size: number;
  readonly root: Uint8Array;
}

/** A log the witness trusts: its origin and the public key(s) that sign its checkpoints. */
export interface WitnessedLog {
  readonly origin: string;
  readonly keys: readonly { readonly keyName: string; readonly publicKey: Uint8Array }[];
}

/** Outcome of the stateless checks (step 1). */
export type AuthenticateResult =
  | {
      readonly ok: true;
      readonly log: WitnessedLog;
      readonly checkpoint: Checkpoint;
      readonly text: string;
    }
  | { readonly ok: false; readonly status: 403 | 404; readonly reason: string };

/**
 * Step 1: find the log by origin (404 if unknown) and verify its signature under a trusted
 * key (403 if none verifies; signatures from unknown keys are ignored).
 */
export function authenticateCheckpoint(
  req: AddCheckpointRequest,
  logs: ReadonlyMap<string, WitnessedLog>,
): AuthenticateResult {
  const { text } = parseNote(req.checkpoint);
  const checkpoint = parseCheckpoint(text);
  const log = logs.get(checkpoint.origin);
  if (log === undefined) return { ok: false, status: 404, reason: 'unknown log origin' };
  for (const k of log.keys) {
    try {
      verifyNote(req.checkpoint, k.keyName, k.publicKey, (m, s) =>
        verifyEd25519(k.publicKey, m, s),
      );
      return { ok: true, log, checkpoint, text };
    } catch (e) {
      if (!isMemwardenError(e)) throw e;
    }
  }
  return { ok: false, status: 403, reason: 'no signature verifies under a trusted log key' };
}

/** Outcome of the stateful checks (steps 2–5). */
export type WitnessDecision =
  | { readonly status: 200; readonly next: WitnessLogState }
  | { readonly status: 400 | 422; readonly reason: string }
  | { readonly status: 409; readonly knownSize: number; readonly reason: string };

/**
 * Steps 2–5 against the witness's current record (undefined: never cosigned this log). Run it
 * and persist `next` under one lock, or two racing requests can roll the witness back
 * (§add-checkpoint, the race described at its end).
 */
export function decideAddCheckpoint(
  req: AddCheckpointRequest,
  checkpoint: Checkpoint,
  state: WitnessLogState | undefined,
): WitnessDecision {
  const known = state?.size ?? 0;
  if (req.oldSize > checkpoint.size)
    return { status: 400, reason: 'old size exceeds the checkpoint size' };
  if (req.oldSize !== known)
    return { status: 409, knownSize: known, reason: 'old size is not the latest cosigned size' };
  const next: WitnessLogState = { size: checkpoint.size, root: checkpoint.root };
  if (req.oldSize === checkpoint.size) {
    // Equal sizes: the same tree head or a fork. With no record, size 0 is the empty tree.
    const knownRoot = state?.root;
    if (knownRoot !== undefined && !bytesEqual(knownRoot, checkpoint.root))
      return { status: 409, knownSize: known, reason: 'same size, different root hash' };
    if (req.proof.length > 0) return { status: 422, reason: 'proof between equal sizes is empty' };
    return { status: 200, next };
  }
  if (req.oldSize === 0) {
    // §add-checkpoint: "The proof MUST be empty if the old size is zero."
    if (req.proof.length > 0) return { status: 422, reason: 'proof from size 0 must be empty' };
    return { status: 200, next };
  }
  // oldSize = known > 0, so a record exists; the check only narrows the type.
  if (state === undefined) return { status: 409, knownSize: 0, reason: 'no record' };
  if (!verifyConsistency(req.oldSize, checkpoint.size, req.proof, state.root, checkpoint.root))
    return { status: 422, reason: 'consistency proof does not verify' };
  return { status: 200, next };
}
