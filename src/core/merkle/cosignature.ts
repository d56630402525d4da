/**
 * @module core/merkle/cosignature
 * C2SP transparency-log cosignatures, Ed25519 `cosignature/v1`
 * (https://c2sp.org/tlog-cosignature, "Format" and "Ed25519 signed message").
 *
 * A cosignature is a signed-note signature line on a checkpoint:
 *
 *     — <cosigner name> base64(key ID ‖ u64 big-endian timestamp ‖ 64-byte Ed25519 signature)
 *
 * - key ID = SHA-256(<name> ‖ "\n" ‖ 0x04 ‖ 32-byte public key)[:4] (§Format);
 * - the signed message is `"cosignature/v1\n" ‖ "time " ‖ decimal(timestamp) ‖ "\n"` followed
 *   by the whole checkpoint body (every line, extension lines included, with its final
 *   newline; no signature lines) (§Ed25519 signed message);
 * - the timestamp is POSIX seconds and MUST NOT exceed 2^63 − 1; verifiers MAY reject
 *   timestamps in the future.
 *
 * The Ed25519 message does not commit to the cosigner name, so one public key is one cosigner:
 * {@link verifyCosignatures} counts distinct public keys, never names (a key configured under
 * two names would otherwise count twice).
 */
import { bytesEqual, concatBytes, fromBase64, toBase64, toHex, utf8 } from '../bytes.js';
import { verifyEd25519 } from '../crypto/ed25519.js';
import { MemwardenError } from '../errors.js';
import { sha256 } from '../crypto/sha256.js';
import { type Checkpoint, verifyCheckpoint } from './checkpoint.js';
import {
  type NoteSignFn,
  type NoteVerifyFn,
  assertKeyName,
  parseNote,
  parseVerifierKey,
} from './note.js';

/** signed-note signature type of Ed25519 cosignature/v1 (tlog-cosignature §Format). */
export const COSIGNATURE_V1_TYPE = 0x04;
/** key ID (4) ‖ timestamp (8) ‖ Ed25519 signature (64). */
export const COSIGNATURE_V1_BYTES = 4 + 8 + 64;
const ED25519_PUBLIC_KEY_SIZE = 32;
const ED25519_SIGNATURE_SIZE = 64;
const EM_DASH = '\u2014';

/**
 * Largest timestamp we represent. The spec allows up to 2^63 − 1; beyond 2^53 − 1 (year
 * 285,428,751) a JS number loses precision, and such a cosignature is "in the future" for any
 * verifier, which the spec lets us reject.
 */
const MAX_TIMESTAMP = Number.MAX_SAFE_INTEGER;

/** A cosigner (witness) identity as a client is configured with it. */
export interface CosignerKey {
  readonly name: string;
  readonly publicKey: Uint8Array;
  /** SHA-256(name ‖ 0x0A ‖ 0x04 ‖ publicKey)[:4]. */
  readonly keyId: Uint8Array;
}

/** A cosignature that verified. */
export interface VerifiedCosignature {
  readonly name: string;
  /** Hex of the 4-byte key ID. */
  readonly keyId: string;
  /** POSIX seconds at which the cosigner signed. */
  readonly timestamp: number;
}

const invalid = (message: string, details?: Record<string, unknown>): MemwardenError =>
  new MemwardenError(
    'LOG_COSIGNATURE_INVALID',
    message,
    details === undefined ? undefined : { details },
  );

function assertPublicKey(publicKey: Uint8Array): void {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_SIZE) {
    throw new MemwardenError('KEY_INVALID', 'Ed25519 public key must be 32 bytes');
  }
}

function assertTimestamp(t: number): void {
  if (!Number.isSafeInteger(t) || t < 0 || t > MAX_TIMESTAMP) {
    throw new MemwardenError(
      'INPUT_INVALID',
      'cosignature timestamp must be a non-negative integer',
    );
  }
}

/** key ID = SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[:4] (tlog-cosignature §Format). */
export function cosignatureKeyId(name: string, publicKey: Uint8Array): Uint8Array {
  assertKeyName(name);
  assertPublicKey(publicKey);
  return sha256(
    concatBytes(utf8.encode(name), Uint8Array.of(0x0a, COSIGNATURE_V1_TYPE), publicKey),
  ).slice(0, 4);
}

/** A cosigner's vkey `<name>+<hex key ID>+<base64(0x04 ‖ public key)>` (signed-note vkeys). */
export function formatCosignerVerifierKey(name: string, publicKey: Uint8Array): string {
  const id = cosignatureKeyId(name, publicKey);
  return `${name}+${toHex(id)}+${toBase64(concatBytes(Uint8Array.of(COSIGNATURE_V1_TYPE), publicKey))}`;
}

/**
 * Parse a cosigner vkey. Only type 0x04 (Ed25519 cosignature/v1) is accepted: a log key
 * (type 0x01) is a different statement and is refused rather than silently converted.
 * Throws KEY_INVALID.
 */
export function parseCosignerVerifierKey(vkey: string): CosignerKey {
  const bad = (): MemwardenError =>
    new MemwardenError('KEY_INVALID', 'malformed cosigner verifier key');
  if (typeof vkey !== 'string') throw bad();
  const a = vkey.indexOf('+');
  const b = a < 0 ? -1 : vkey.indexOf('+', a + 1);
  if (a <= 0 || b < 0) throw bad();
  const name = vkey.slice(0, a);
  const idHex = vkey.slice(a + 1, b);
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw bad();
  let raw: Uint8Array;
  try {
    raw = fromBase64(vkey.slice(b + 1));
  } catch (e) {
    throw new MemwardenError('KEY_INVALID', 'malformed cosigner verifier key', { cause: e });
  }
  if (raw.length !== 1 + ED25519_PUBLIC_KEY_SIZE || raw[0] !== COSIGNATURE_V1_TYPE) throw bad();
  const publicKey = raw.slice(1);
  let keyId: Uint8Array;
  try {
    keyId = cosignatureKeyId(name, publicKey);
  } catch (e) {
    throw new MemwardenError('KEY_INVALID', 'malformed cosigner verifier key', { cause: e });
  }
  if (toHex(keyId) !== idHex) throw bad();
  return { name, publicKey, keyId };
}

/**
 * The signed message: `cosignature/v1\ntime <timestamp>\n` ‖ the checkpoint body (including
 * its final newline, without signature lines) (tlog-cosignature §Ed25519 signed message).
 */
export function cosignatureMessage(checkpointText: string, timestamp: number): Uint8Array {
  assertTimestamp(timestamp);
  if (typeof checkpointText !== 'string' || !checkpointText.endsWith('\n')) {
    throw new MemwardenError('LOG_CHECKPOINT_MALFORMED', 'checkpoint text must end with a newline');
  }
  return utf8.encode(`cosignature/v1\ntime ${timestamp}\n${checkpointText}`);
}

/**
 * Cosign a checkpoint body; returns one signature line (ending in a newline) to append to the
 * note. The caller must already have verified the checkpoint (the witness does, see
 * ./witness-protocol.ts); this function only produces the bytes.
 */
export function cosignCheckpoint(
  checkpointText: string,
  cosigner: { readonly name: string; readonly publicKey: Uint8Array; readonly sign: NoteSignFn },
  timestamp: number,
): string {
  const keyId = cosignatureKeyId(cosigner.name, cosigner.publicKey);
  const signature = cosigner.sign(cosignatureMessage(checkpointText, timestamp));
  if (!(signature instanceof Uint8Array) || signature.length !== ED25519_SIGNATURE_SIZE) {
    throw new MemwardenError('KEY_INVALID', 'signer returned a malformed Ed25519 signature');
  }
  const ts = new Uint8Array(8);
  new DataView(ts.buffer).setBigUint64(0, BigInt(timestamp));
  return `${EM_DASH} ${cosigner.name} ${toBase64(concatBytes(keyId, ts, signature))}\n`;
}

/** Split a cosignature's bytes (after the key ID) into timestamp and signature. */
function splitCosignature(sig: Uint8Array): { timestamp: number; signature: Uint8Array } {
  if (sig.length !== COSIGNATURE_V1_BYTES - 4) throw invalid('cosignature has the wrong length');
  const t = new DataView(sig.buffer, sig.byteOffset, 8).getBigUint64(0);
  // §Format: MUST NOT exceed 2^63 − 1; beyond 2^53 − 1 it is in the future for us (see above).
  if (t > BigInt(MAX_TIMESTAMP)) throw invalid('cosignature timestamp out of range');
  return { timestamp: Number(t), signature: sig.slice(8) };
}

/**
 * The timestamp of a cosignature line's payload (after the key ID), without verifying it —
 * for display and freshness policies. LOG_COSIGNATURE_INVALID if it is not 8 + 64 bytes.
 */
export function cosignatureTimestamp(signature: Uint8Array): number {
  return splitCosignature(signature).timestamp;
}

/** Options of {@link verifyCosignatures}. */
export interface CosignatureCheckOptions {
  /** Current POSIX seconds; with it, timestamps beyond `now + maxFutureSeconds` are refused. */
  readonly now?: number;
  /** Allowed clock skew for `now` (default 60 s). */
  readonly maxFutureSeconds?: number;
  /** Injected Ed25519 verify (default: the strict {@link verifyEd25519}). */
  readonly verify?: (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;
}

/**
 * Verify the cosignatures on a signed note against trusted cosigners. Signature lines whose
 * name and key ID match no trusted cosigner are ignored (signed-note; tlog-witness "MUST
 * ignore any cosignatures from unknown keys"). A line that matches a trusted cosigner but does
 * not verify — a forged, truncated, replayed or future-dated cosignature — is
 * LOG_COSIGNATURE_INVALID. Returns one entry per distinct public key that cosigned.
 */
export function verifyCosignatures(
  note: string,
  cosigners: readonly CosignerKey[],
  opts: CosignatureCheckOptions = {},
): VerifiedCosignature[] {
  const parsed = parseNote(note);
  const verify = opts.verify ?? ((pk, m, s) => verifyEd25519(pk, m, s));
  const skew = opts.maxFutureSeconds ?? 60;
  const out: VerifiedCosignature[] = [];
  const seen: Uint8Array[] = [];
  for (const s of parsed.signatures) {
    const c = cosigners.find((k) => k.name === s.keyName && bytesEqual(k.keyId, s.keyId));
    if (c === undefined) continue;
    const { timestamp, signature } = splitCosignature(s.signature);
    if (opts.now !== undefined && timestamp > opts.now + skew) {
      throw invalid('cosignature timestamp is in the future', { cosigner: c.name, timestamp });
    }
    let ok = false;
    try {
      ok = verify(c.publicKey, cosignatureMessage(parsed.text, timestamp), signature) === true;
    } catch {
      ok = false;
    }
    if (!ok) throw invalid('cosignature does not verify', { cosigner: c.name });
    if (seen.some((pk) => bytesEqual(pk, c.publicKey))) continue;
    seen.push(c.publicKey);
    out.push({ name: c.name, keyId: toHex(c.keyId), timestamp });
  }
  return out;
}

/** Options of {@link verifyCosignedCheckpoint}. */
export interface CosignedCheckpointPolicy extends Omit<CosignatureCheckOptions, 'verify'> {
  /** The log's checkpoint vkey (signed-note type 0x01, `memwarden vkey`). */
  readonly logKey: string;
  /** Trusted witness vkeys (type 0x04, `memwarden witness vkey`). */
  readonly witnesses: readonly string[];
  /** How many distinct trusted witnesses must have cosigned (0 = log signature only). */
  readonly minCosignatures: number;
  /** Expected origin line; default the log key's name (tlog-checkpoint: they SHOULD match). */
  readonly origin?: string;
}

/** A checkpoint that passed a {@link CosignedCheckpointPolicy}. */
export interface CosignedCheckpoint {
  readonly checkpoint: Checkpoint;
  readonly cosignatures: readonly VerifiedCosignature[];
}

/**
 * The client's check: the note is a checkpoint of the expected origin signed by the log key,
 * and at least `minCosignatures` distinct trusted witnesses cosigned exactly this body.
 * Throws LOG_CHECKPOINT_MALFORMED / LOG_CHECKPOINT_SIGNATURE_INVALID for the log part,
 * LOG_COSIGNATURE_INVALID for a bad cosignature from a trusted witness, and
 * LOG_COSIGNATURES_INSUFFICIENT when too few trusted witnesses cosigned.
 */
export function verifyCosignedCheckpoint(
  note: string,
  policy: CosignedCheckpointPolicy,
): CosignedCheckpoint {
  const min = policy.minCosignatures;
  if (!Number.isSafeInteger(min) || min < 0) {
    throw new MemwardenError('INPUT_INVALID', 'minCosignatures must be a non-negative integer');
  }
  const log = parseVerifierKey(policy.logKey);
  const cosigners = policy.witnesses.map(parseCosignerVerifierKey);
  const distinct = new Set(cosigners.map((c) => toHex(c.publicKey))).size;
  if (min > distinct) {
    throw new MemwardenError(
      'INPUT_INVALID',
      `minCosignatures (${min}) exceeds the number of distinct trusted witnesses (${distinct})`,
    );
  }
  const logVerify: NoteVerifyFn = (m, s) => verifyEd25519(log.publicKey, m, s);
  const checkpoint = verifyCheckpoint(
    note,
    log.keyName,
    log.publicKey,
    logVerify,
    policy.origin ?? log.keyName,
  );
  const cosignatures = verifyCosignatures(note, cosigners, {
    ...(policy.now === undefined ? {} : { now: policy.now }),
    ...(policy.maxFutureSeconds === undefined ? {} : { maxFutureSeconds: policy.maxFutureSeconds }),
  });
  if (cosignatures.length < min) {
    throw new MemwardenError(
      'LOG_COSIGNATURES_INSUFFICIENT',
      `${cosignatures.length} of the required ${min} witness cosignatures`,
      { details: { have: cosignatures.length, need: min } },
    );
  }
  return { checkpoint, cosignatures };
}
