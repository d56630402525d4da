/**
 * @module core/merkle/checkpoint
 * C2SP transparency-log checkpoints (https://c2sp.org/tlog-checkpoint): the note text
 *
 *     <origin>\n<decimal tree size>\n<base64 root hash>\n[<extension line>\n]*
 *
 * carried in a signed note (./note.ts). The parser is strict: anything off is
 * LOG_CHECKPOINT_MALFORMED, never a raw RangeError.
 */
import { fromBase64, toBase64 } from '../bytes.js';
import { MemwardenError } from '../errors.js';
import { HASH_SIZE } from './hash.js';
import { type NoteSignFn, type NoteVerifyFn, parseNote, signNote, verifyNote } from './note.js';

/** The tree head a checkpoint commits to. */
export interface Checkpoint {
  /** The log identity, e.g. `memwarden.local/log`. */
  readonly origin: string;
  readonly size: number;
  readonly root: Uint8Array;
  /** Opaque, non-empty extension lines (NOT RECOMMENDED by the spec; kept for round trips). */
  readonly extensions: readonly string[];
}

const malformed = (message: string): MemwardenError =>
  new MemwardenError('LOG_CHECKPOINT_MALFORMED', message);
/** tlog-checkpoint §Note text: ASCII decimal, no leading zeroes unless the tree is empty. */
const SIZE_RE = /^(?:0|[1-9][0-9]*)$/;

function checkLine(line: string, what: string): void {
  if (line.length === 0) throw malformed(`${what} must be non-empty`);
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) throw malformed(`${what} contains a control character`);
  }
}

/** The checkpoint note text (ends with a newline, ready for `signNote`). */
export function formatCheckpoint(cp: Checkpoint): string {
  checkLine(cp.origin, 'origin');
  if (!Number.isSafeInteger(cp.size) || cp.size < 0)
    throw malformed('size must be a non-negative integer');
  if (!(cp.root instanceof Uint8Array) || cp.root.length !== HASH_SIZE)
    throw malformed('root must be 32 bytes');
  for (const e of cp.extensions) checkLine(e, 'extension line');
  return [cp.origin, String(cp.size), toBase64(cp.root), ...cp.extensions].join('\n') + '\n';
}

/** Parse checkpoint note text (without signatures). Throws LOG_CHECKPOINT_MALFORMED. */
export function parseCheckpoint(text: string): Checkpoint {
  if (typeof text !== 'string' || !text.endsWith('\n'))
    throw malformed('checkpoint text must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw malformed('checkpoint needs origin, size and root lines');
  const [origin, sizeLine, rootLine, ...extensions] = lines as [
    string,
    string,
    string,
    ...string[],
  ];
  checkLine(origin, 'origin');
  if (!SIZE_RE.test(sizeLine)) throw malformed('size must be decimal without leading zeroes');
  const size = Number(sizeLine);
  if (!Number.isSafeInteger(size)) throw malformed('size out of range');
  let root: Uint8Array;
  try {
    root = fromBase64(rootLine);
  } catch (e) {
    throw new MemwardenError('LOG_CHECKPOINT_MALFORMED', 'root is not standard base64', {
      cause: e,
    });
  }
  if (root.length !== HASH_SIZE) throw malformed('root must be 32 bytes');
  for (const e of extensions) checkLine(e, 'extension line');
  return { origin, size, root, extensions };
}

/** Format and sign a checkpoint; the result is the signed note. */
export function signCheckpoint(
  cp: Checkpoint,
  keyName: string,
  signFn: NoteSignFn,
  publicKey: Uint8Array,
): string {
  return signNote(formatCheckpoint(cp), keyName, signFn, publicKey);
}

/**
 * Verify a signed checkpoint note under a trusted key and parse it. If `expectedOrigin` is
 * given the origin line must equal it (a checkpoint of another log is malformed for us).
 */
export function verifyCheckpoint(
  note: string,
  keyName: string,
  publicKey: Uint8Array,
  verifyFn: NoteVerifyFn,
  expectedOrigin?: string,
): Checkpoint {
  // Parse before verifying so a malformed body is reported as such even when unsigned.
  const cp = parseCheckpoint(parseNote(note).text);
  verifyNote(note, keyName, publicKey, verifyFn);
  if (expectedOrigin !== undefined && cp.origin !== expectedOrigin)
    throw malformed('checkpoint origin mismatch');
  return cp;
}
