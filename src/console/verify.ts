/**
 * @module console/verify
 * What the console checks itself, in the browser, with WebCrypto — never trusting the
 * server's word: RFC 6962 / RFC 9162 inclusion and consistency proofs (SHA-256), and the
 * Ed25519 signature of a C2SP signed-note checkpoint under the log's verifier key.
 *
 * DOM-free (only `crypto.subtle`, `TextEncoder`, `atob`), so the same code runs under Node's
 * WebCrypto in the unit tests. Sizes are JavaScript numbers up to 2^53, so index arithmetic
 * uses division, never the 32-bit bitwise operators.
 */

const enc = new TextEncoder();

/** Standard base64 (RFC 4648 §4) → bytes; throws on anything else. */
export function fromBase64(s: string): Uint8Array {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s))
    throw new Error('not base64');
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function toHex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= (a[i] as number) ^ (b[i] as number);
  return d === 0;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const data = concat(...parts);
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
}

/** RFC 6962 §2.1: leaf hash = SHA-256(0x00 ‖ data). */
export const leafHash = (data: Uint8Array): Promise<Uint8Array> => sha256(Uint8Array.of(0), data);
/** RFC 6962 §2.1: node hash = SHA-256(0x01 ‖ left ‖ right). */
export const nodeHash = (l: Uint8Array, r: Uint8Array): Promise<Uint8Array> =>
  sha256(Uint8Array.of(1), l, r);

const odd = (n: number): boolean => n % 2 === 1;
const half = (n: number): number => Math.floor(n / 2);

/**
 * RFC 9162 §2.1.3.2: the root an inclusion proof implies for `leaf` at `index` in a tree of
 * `size`, or undefined when the proof has the wrong shape.
 */
export async function rootFromInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
): Promise<Uint8Array | undefined> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size)
    return undefined;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (p.length !== 32 || sn === 0) return undefined;
    if (odd(fn) || fn === sn) {
      r = await nodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? r : undefined;
}

/** RFC 9162 §2.1.3.2: does the proof take `leaf` to `root`? */
export async function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): Promise<boolean> {
  const r = await rootFromInclusion(index, size, leaf, proof);
  return r !== undefined && bytesEqual(r, root);
}

const isPow2 = (n: number): boolean => n > 0 && Math.log2(n) % 1 === 0;

/**
 * RFC 9162 §2.1.4.2: does `proof` show the tree of `size1` with `root1` is a prefix of the
 * tree of `size2` with `root2`? (0 < size1 ≤ size2; equal sizes need an empty proof and
 * equal roots.)
 */
export async function verifyConsistency(
  size1: number,
  size2: number,
  proof: readonly Uint8Array[],
  root1: Uint8Array,
  root2: Uint8Array,
): Promise<boolean> {
  if (!Number.isSafeInteger(size1) || !Number.isSafeInteger(size2)) return false;
  if (size1 < 1 || size2 < size1) return false;
  if (size1 === size2) return proof.length === 0 && bytesEqual(root1, root2);
  if (proof.some((p) => p.length !== 32)) return false;
  const path = isPow2(size1) ? [root1, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0] as Uint8Array;
  let sr = path[0] as Uint8Array;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return bytesEqual(fr, root1) && bytesEqual(sr, root2) && sn === 0;
}

/** A parsed C2SP verifier key `<name>+<hex key id>+<base64(0x01 ‖ Ed25519 public key)>`. */
export interface VerifierKey {
  readonly name: string;
  readonly keyId: Uint8Array;
  readonly publicKey: Uint8Array;
}

/** key ID = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[:4] (signed-note §Ed25519). */
async function noteKeyId(name: string, publicKey: Uint8Array): Promise<Uint8Array> {
  return (await sha256(enc.encode(name), Uint8Array.of(0x0a, 0x01), publicKey)).slice(0, 4);
}

/** Parse and self-check a verifier key; throws on anything malformed. */
export async function parseVerifierKey(vkey: string): Promise<VerifierKey> {
  const a = vkey.indexOf('+');
  const b = a < 0 ? -1 : vkey.indexOf('+', a + 1);
  if (a <= 0 || b < 0) throw new Error('malformed verifier key');
  const name = vkey.slice(0, a);
  const idHex = vkey.slice(a + 1, b);
  const raw = fromBase64(vkey.slice(b + 1));
  if (!/^[0-9a-f]{8}$/.test(idHex) || raw.length !== 33 || raw[0] !== 0x01)
    throw new Error('malformed verifier key');
  const publicKey = raw.slice(1);
  const keyId = await noteKeyId(name, publicKey);
  if (toHex(keyId) !== idHex) throw new Error('verifier key id does not match its key');
  return { name, keyId, publicKey };
}

/** A checkpoint's body (C2SP tlog-checkpoint): origin, size, root. */
export interface CheckpointBody {
  readonly origin: string;
  readonly size: number;
  readonly root: Uint8Array;
}

/** Split a signed note and parse its checkpoint body; throws on anything malformed. */
export function parseCheckpointNote(note: string): {
  text: string;
  body: CheckpointBody;
  signatures: { name: string; keyId: Uint8Array; signature: Uint8Array }[];
} {
  if (!note.endsWith('\n')) throw new Error('note must end with a newline');
  const sep = note.lastIndexOf('\n\n');
  if (sep < 0) throw new Error('note has no signature block');
  const text = note.slice(0, sep + 1);
  const lines = text.slice(0, -1).split('\n');
  const [origin, sizeLine, rootLine] = lines;
  if (origin === undefined || sizeLine === undefined || rootLine === undefined || origin === '')
    throw new Error('checkpoint needs origin, size and root');
  if (!/^(?:0|[1-9][0-9]{0,15})$/.test(sizeLine)) throw new Error('bad checkpoint size');
  const root = fromBase64(rootLine);
  if (root.length !== 32) throw new Error('bad checkpoint root');
  const signatures = note
    .slice(sep + 2, -1)
    .split('\n')
    .map((line) => {
      const m = /^\u2014 (\S+) (\S+)$/.exec(line);
      if (m === null) throw new Error('bad signature line');
      const raw = fromBase64(m[2] as string);
      if (raw.length < 5) throw new Error('signature too short');
      return { name: m[1] as string, keyId: raw.slice(0, 4), signature: raw.slice(4) };
    });
  return { text, body: { origin, size: Number(sizeLine), root }, signatures };
}

/** Is Ed25519 available in this browser's WebCrypto? */
export async function ed25519Supported(): Promise<boolean> {
  try {
    await crypto.subtle.importKey('raw', new Uint8Array(32), { name: 'Ed25519' }, false, [
      'verify',
    ]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Verify a signed checkpoint note under `vkey` and return its body. Throws with a reason when
 * the note is malformed, carries no signature by this key, the signature fails, or the origin
 * line is not the key's name (memwarden names its checkpoint key after the log's origin).
 */
export async function verifyCheckpointNote(note: string, vkey: VerifierKey): Promise<CheckpointBody> {
  const parsed = parseCheckpointNote(note);
  const mine = parsed.signatures.filter(
    (s) => s.name === vkey.name && bytesEqual(s.keyId, vkey.keyId),
  );
  if (mine.length === 0) throw new Error('no signature by the log key');
  const key = await crypto.subtle.importKey(
    'raw',
    vkey.publicKey as Uint8Array<ArrayBuffer>,
    { name: 'Ed25519' },
    false,
    ['verify'],
  );
  const msg = enc.encode(parsed.text);
  for (const s of mine) {
    const ok =
      s.signature.length === 64 &&
      (await crypto.subtle.verify(
        { name: 'Ed25519' },
        key,
        s.signature as Uint8Array<ArrayBuffer>,
        msg,
      ));
    if (!ok) throw new Error('checkpoint signature does not verify');
  }
  if (parsed.body.origin !== vkey.name) throw new Error('checkpoint origin is not the log key name');
  return parsed.body;
}

/** One named check and its outcome, as the console lists them. */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** What the server sends for an inclusion proof (`GET /v1/memories/{id}/proof`). */
export interface InclusionProofJson {
  readonly leafIndex: number;
  readonly treeSize: number;
  readonly leafHash: string;
  readonly hashes: readonly string[];
  readonly checkpoint: { readonly size: number; readonly root: string; readonly note: string };
}

function uuidBytes(id: string): Uint8Array | undefined {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) return undefined;
  return Uint8Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
}

const run = async (name: string, f: () => Promise<string>): Promise<Check> => {
  try {
    return { name, ok: true, detail: await f() };
  } catch (e) {
    return { name, ok: false, detail: e instanceof Error ? e.message : String(e) };
  }
};

/**
 * Every check of an entry's inclusion, recomputed here: the leaf hash from the entry's own
 * leaf data (id ‖ signature), the root from the audit path, the checkpoint's Ed25519
 * signature, and that the checkpoint is the tree the proof was made for.
 */
export async function checkInclusion(
  entry: { readonly id: string; readonly leafIndex: number; readonly leafData: string },
  proof: InclusionProofJson,
  vkeyText: string,
): Promise<Check[]> {
  let leaf: Uint8Array | undefined;
  let body: CheckpointBody | undefined;
  const checks: Check[] = [];
  checks.push(
    await run('leaf commits this entry', async () => {
      const data = fromBase64(entry.leafData);
      const id = uuidBytes(entry.id);
      if (id === undefined || data.length !== 80 || !bytesEqual(data.slice(0, 16), id))
        throw new Error('leaf data does not start with the entry id');
      if (entry.leafIndex !== proof.leafIndex) throw new Error('proof is for another leaf index');
      leaf = await leafHash(data);
      if (!bytesEqual(leaf, fromBase64(proof.leafHash)))
        throw new Error('recomputed leaf hash differs from the proof');
      return `SHA-256(0x00 ‖ id ‖ sig) = ${toHex(leaf).slice(0, 16)}…`;
    }),
  );
  checks.push(
    await run('checkpoint signed by the log key (Ed25519)', async () => {
      if (!(await ed25519Supported())) throw new Error('this browser has no WebCrypto Ed25519');
      body = await verifyCheckpointNote(proof.checkpoint.note, await parseVerifierKey(vkeyText));
      if (body.size !== proof.treeSize) throw new Error('checkpoint is not the proof tree size');
      return `${body.origin}, size ${body.size}`;
    }),
  );
  checks.push(
    await run('audit path reaches the signed root (RFC 9162 §2.1.3.2)', async () => {
      if (leaf === undefined || body === undefined) throw new Error('not checked: an earlier check failed');
      const path = proof.hashes.map(fromBase64);
      const root = await rootFromInclusion(proof.leafIndex, proof.treeSize, leaf, path);
      if (root === undefined) throw new Error('the proof has the wrong shape');
      if (!bytesEqual(root, body.root)) throw new Error('recomputed root differs from the checkpoint');
      return `${path.length} hashes → root ${toHex(root).slice(0, 16)}…`;
    }),
  );
  return checks;
}

/** A checkpoint the console has verified (kept in localStorage to compare later ones with). */
export interface SeenCheckpoint {
  readonly vkey: string;
  readonly size: number;
  /** base64 root. */
  readonly root: string;
  readonly note: string;
}

/**
 * Checks of the latest checkpoint and of its consistency with an earlier verified one:
 * the signature, then (if there is an earlier one) the RFC 9162 consistency proof between
 * the two signed roots.
 */
export async function checkConsistency(
  previous: SeenCheckpoint,
  latest: CheckpointBody,
  proof: { from: number; to: number; hashes: readonly string[] },
): Promise<Check> {
  return run(`log grew append-only from size ${previous.size} to ${latest.size} (RFC 9162 §2.1.4.2)`, async () => {
    if (proof.from !== previous.size || proof.to !== latest.size)
      throw new Error('proof is for other tree sizes');
    const ok = await verifyConsistency(
      previous.size,
      latest.size,
      proof.hashes.map(fromBase64),
      fromBase64(previous.root),
      latest.root,
    );
    if (!ok) throw new Error('consistency proof does not verify: the log was rewritten');
    return `${proof.hashes.length} hashes`;
  });
}
