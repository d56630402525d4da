/**
 * @module core/merkle/note
 * C2SP signed notes (https://c2sp.org/signed-note) with Ed25519 signatures (type 0x01).
 *
 * A signed note is the note text (ending in a newline), a blank line, then one or more lines
 * `— <key name> <base64(key ID ‖ signature)>` (em dash U+2014, space). The key ID is the
 * first four bytes of SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ public key). Signing and verifying are
 * passed in as functions, so this module needs no key handling of its own (pass node:crypto
 * `sign(null, msg, key)` / `verify(null, msg, key, sig)`, or the crypto module's Ed25519).
 */
import { bytesEqual, concatBytes, fromBase64, toBase64, toHex, utf8 } from '../bytes.js';
import { MemwardenError } from '../errors.js';
import { sha256 } from '../crypto/sha256.js';

/** Signs `message` with the note key; returns the 64-byte Ed25519 signature. */
export type NoteSignFn = (message: Uint8Array) => Uint8Array;
/** Verifies a 64-byte Ed25519 `signature` over `message` under the note key. */
export type NoteVerifyFn = (message: Uint8Array, signature: Uint8Array) => boolean;

const EM_DASH = '\u2014';
const SIG_PREFIX = `${EM_DASH} `;
/** signed-note: signature type identifier byte for Ed25519. */
const ED25519_TYPE = 0x01;
const ED25519_PUBLIC_KEY_SIZE = 32;
const ED25519_SIGNATURE_SIZE = 64;
/** Bound on signature lines; the spec requires accepting at least 16. */
const MAX_SIGNATURES = 32;
/** Bound on a whole note, so a hostile note cannot make us scan megabytes. */
export const MAX_NOTE_BYTES = 64 * 1024;

const malformed = (message: string): MemwardenError =>
  new MemwardenError('LOG_CHECKPOINT_MALFORMED', message);

/** Key names are non-empty and contain no Unicode spaces and no '+' (signed-note §Format). */
export function assertKeyName(name: string): void {
  if (typeof name !== 'string' || name.length === 0 || /[\s+]/u.test(name) || hasControl(name)) {
    throw new MemwardenError(
      'KEY_INVALID',
      'note key name must be non-empty, without spaces or "+"',
    );
  }
}

/** ASCII control characters other than newline are forbidden anywhere in a note. */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && c !== 0x0a) || c === 0x7f) return true;
  }
  return false;
}

function assertPublicKey(publicKey: Uint8Array): void {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== ED25519_PUBLIC_KEY_SIZE) {
    throw new MemwardenError('KEY_INVALID', 'Ed25519 public key must be 32 bytes');
  }
}

/** key ID = SHA-256(key name ‖ 0x0A ‖ 0x01 ‖ 32-byte public key)[:4] (signed-note §Ed25519). */
export function noteKeyId(keyName: string, publicKey: Uint8Array): Uint8Array {
  assertKeyName(keyName);
  assertPublicKey(publicKey);
  const digest = sha256(
    concatBytes(utf8.encode(keyName), Uint8Array.of(0x0a, ED25519_TYPE), publicKey),
  );
  return digest.slice(0, 4);
}

/** The verifier key string `<name>+<hex key ID>+<base64(0x01 ‖ public key)>`. */
export function formatVerifierKey(keyName: string, publicKey: Uint8Array): string {
  const id = noteKeyId(keyName, publicKey);
  return `${keyName}+${toHex(id)}+${toBase64(concatBytes(Uint8Array.of(ED25519_TYPE), publicKey))}`;
}

/** Parse a verifier key string; throws KEY_INVALID unless it is a well-formed Ed25519 vkey. */
export function parseVerifierKey(vkey: string): {
  keyName: string;
  keyId: Uint8Array;
  publicKey: Uint8Array;
} {
  const bad = (): MemwardenError => new MemwardenError('KEY_INVALID', 'malformed verifier key');
  // name+hash+key: the key is base64 and may itself contain '+', so split on the first two.
  const a = vkey.indexOf('+');
  const b = a < 0 ? -1 : vkey.indexOf('+', a + 1);
  if (a <= 0 || b < 0) throw bad();
  const keyName = vkey.slice(0, a);
  const idHex = vkey.slice(a + 1, b);
  const keyB64 = vkey.slice(b + 1);
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw bad();
  let raw: Uint8Array;
  try {
    raw = fromBase64(keyB64);
  } catch (e) {
    throw new MemwardenError('KEY_INVALID', 'malformed verifier key', { cause: e });
  }
  if (raw.length !== 1 + ED25519_PUBLIC_KEY_SIZE || raw[0] !== ED25519_TYPE) throw bad();
  const publicKey = raw.slice(1);
  const keyId = noteKeyId(keyName, publicKey);
  if (toHex(keyId) !== idHex) throw bad();
  return { keyName, keyId, publicKey };
}

/** One parsed signature line. */
export interface NoteSignature {
  readonly keyName: string;
  readonly keyId: Uint8Array;
  readonly signature: Uint8Array;
}

/** A note split into its text and signatures (not yet verified). */
export interface ParsedNote {
  /** The signed text, including its final newline. */
  readonly text: string;
  readonly signatures: readonly NoteSignature[];
}

/** Strictly split a signed note; throws LOG_CHECKPOINT_MALFORMED on anything off. */
export function parseNote(note: string): ParsedNote {
  if (typeof note !== 'string') throw malformed('note must be a string');
  if (note.length > MAX_NOTE_BYTES) throw malformed('note too large');
  // A lone surrogate cannot be encoded as UTF-8: the note would not be valid UTF-8.
  if (/\p{Cs}/u.test(note)) throw malformed('note is not valid Unicode');
  if (hasControl(note)) throw malformed('note contains control characters');
  if (!note.endsWith('\n')) throw malformed('note must end with a newline');
  // The text is separated from the signatures by the last blank line.
  const sep = note.lastIndexOf('\n\n');
  if (sep < 0) throw malformed('note has no signature block');
  const text = note.slice(0, sep + 1);
  const sigLines = note.slice(sep + 2, -1).split('\n');
  if (sigLines.length === 0 || sigLines.length > MAX_SIGNATURES)
    throw malformed('bad number of signatures');
  const signatures = sigLines.map((line) => {
    if (!line.startsWith(SIG_PREFIX)) throw malformed('signature line must start with an em dash');
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    if (space <= 0 || rest.indexOf(' ', space + 1) !== -1)
      throw malformed('signature line must be "— name sig"');
    const keyName = rest.slice(0, space);
    if (/[\s+]/u.test(keyName)) throw malformed('bad key name');
    let raw: Uint8Array;
    try {
      raw = fromBase64(rest.slice(space + 1));
    } catch (e) {
      throw new MemwardenError('LOG_CHECKPOINT_MALFORMED', 'signature is not base64', { cause: e });
    }
    if (raw.length < 5) throw malformed('signature too short');
    return { keyName, keyId: raw.slice(0, 4), signature: raw.slice(4) };
  });
  return { text, signatures };
}

/**
 * Sign note text (must end in a newline) and return the signed note. The signature covers
 * the text including its final newline (signed-note §Format).
 */
export function signNote(
  text: string,
  keyName: string,
  signFn: NoteSignFn,
  publicKey: Uint8Array,
): string {
  if (!text.endsWith('\n') || text.includes('\n\n') || hasControl(text)) {
    throw malformed(
      'note text must end with one newline and contain no blank line or control character',
    );
  }
  const keyId = noteKeyId(keyName, publicKey);
  const signature = signFn(utf8.encode(text));
  if (!(signature instanceof Uint8Array) || signature.length !== ED25519_SIGNATURE_SIZE) {
    throw new MemwardenError('KEY_INVALID', 'signer returned a malformed Ed25519 signature');
  }
  return `${text}\n${SIG_PREFIX}${keyName} ${toBase64(concatBytes(keyId, signature))}\n`;
}

/**
 * Verify a signed note against one trusted key; returns the verified text. Signatures from
 * other keys (other name or key ID) are ignored, as the spec requires; a signature from the
 * trusted key that fails, or no signature from it at all, is LOG_CHECKPOINT_SIGNATURE_INVALID.
 */
export function verifyNote(
  note: string,
  keyName: string,
  publicKey: Uint8Array,
  verifyFn: NoteVerifyFn,
): string {
  const parsed = parseNote(note);
  const keyId = noteKeyId(keyName, publicKey);
  const message = utf8.encode(parsed.text);
  let verified = false;
  for (const s of parsed.signatures) {
    if (s.keyName !== keyName || !bytesEqual(s.keyId, keyId)) continue;
    let ok = false;
    try {
      ok = s.signature.length === ED25519_SIGNATURE_SIZE && verifyFn(message, s.signature) === true;
    } catch {
      ok = false;
    }
    if (!ok)
      throw new MemwardenError(
        'LOG_CHECKPOINT_SIGNATURE_INVALID',
        'note signature does not verify',
      );
    verified = true;
  }
  if (!verified)
    throw new MemwardenError(
      'LOG_CHECKPOINT_SIGNATURE_INVALID',
      'note not signed by the trusted key',
    );
  return parsed.text;
}
