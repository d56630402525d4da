/**
 * @module adapters/keyfile/keyfile
 * The embedded default {@link KeySource}: one JSON file `{ "v": 1, "keys": { name: base64 } }`
 * inside the data folder, owner-only (0600).
 *
 * - Writes are atomic: a temp file (created 0600 with O_EXCL) is written and fsynced, renamed
 *   over the key file, then the folder is fsynced, so a crash leaves the old or the new file,
 *   never a torn one.
 * - `put` never overwrites a name (`STORAGE_CONFLICT`). Puts within one process are
 *   serialised; separate processes writing the same file concurrently are not coordinated (a
 *   rename race could drop one put) — one host process owns the data folder.
 * - On POSIX, a key file readable or writable by group/other is refused (`KEY_SOURCE_FAILED`)
 *   rather than silently used or chmod-ed: someone else may already have read it.
 * - A corrupt file (bad JSON, wrong shape, bad base64) is `KEY_SOURCE_FAILED`, never a raw
 *   `SyntaxError`. The file is re-read on every call, so it is always the source of truth.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import path from 'node:path';
import { fromBase64, toBase64 } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import type { KeySource } from '../../ports/keysource.js';

/** Default key file name inside the data folder. */
export const DEFAULT_KEY_FILE = 'keys.json';

const NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_FILE_BYTES = 1 << 20;

/** Throws `INPUT_INVALID` unless `name` is 1–64 chars of `[A-Za-z0-9_.-]`. */
export function assertKeyName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new MemwardenError('INPUT_INVALID', 'key name must match [A-Za-z0-9_.-]{1,64}');
  }
}

function failed(
  message: string,
  cause?: unknown,
  details?: Record<string, unknown>,
): MemwardenError {
  const opts: { cause?: unknown; details?: Record<string, unknown> } = {};
  if (cause !== undefined) opts.cause = cause;
  if (details !== undefined) opts.details = details;
  return new MemwardenError('KEY_SOURCE_FAILED', message, opts);
}

function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;
}

/** Options of {@link KeyFileSource}. */
export interface KeyFileOptions {
  /** File name inside the data folder (default {@link DEFAULT_KEY_FILE}). */
  readonly fileName?: string;
  /** Skip the permission check (only for platforms without POSIX modes). Default: win32 only. */
  readonly checkPermissions?: boolean;
}

/** A {@link KeySource} backed by a 0600 JSON key file in `dataDir`. */
export class KeyFileSource implements KeySource {
  /** Absolute path of the key file. */
  readonly filePath: string;
  private readonly dir: string;
  private readonly checkPerms: boolean;
  private queue: Promise<unknown> = Promise.resolve();

  /** The folder is created (0700) on the first `put` if it does not exist. */
  constructor(dataDir: string, opts?: KeyFileOptions) {
    const fileName = opts?.fileName ?? DEFAULT_KEY_FILE;
    if (fileName !== path.basename(fileName) || fileName.startsWith('.')) {
      throw new MemwardenError('INPUT_INVALID', 'key file name must be a plain file name');
    }
    this.dir = path.resolve(dataDir);
    this.filePath = path.join(this.dir, fileName);
    this.checkPerms = opts?.checkPermissions ?? process.platform !== 'win32';
  }

  async get(name: string): Promise<Uint8Array | undefined> {
    assertKeyName(name);
    const keys = await this.load();
    const v = keys.get(name);
    return v === undefined ? undefined : new Uint8Array(v);
  }

  async list(): Promise<string[]> {
    return [...(await this.load()).keys()].sort();
  }

  /** Add `name`. `STORAGE_CONFLICT` if present; `INPUT_INVALID` for a bad name or empty secret. */
  async put(name: string, secret: Uint8Array): Promise<void> {
    assertKeyName(name);
    if (!(secret instanceof Uint8Array) || secret.length === 0) {
      throw new MemwardenError('INPUT_INVALID', 'secret must be non-empty bytes');
    }
    const copy = new Uint8Array(secret);
    const run = this.queue.then(() => this.putNow(name, copy));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Store or overwrite `name` (the host's own state, e.g. its checkpoint anchor). */
  async replace(name: string, value: Uint8Array): Promise<void> {
    assertKeyName(name);
    if (!(value instanceof Uint8Array) || value.length === 0) {
      throw new MemwardenError('INPUT_INVALID', 'value must be non-empty bytes');
    }
    const copy = new Uint8Array(value);
    const run = this.queue.then(() => this.putNow(name, copy, true));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async putNow(name: string, secret: Uint8Array, overwrite = false): Promise<void> {
    const keys = await this.load();
    if (keys.has(name) && !overwrite) {
      throw new MemwardenError('STORAGE_CONFLICT', 'key name already exists', {
        details: { name },
      });
    }
    keys.set(name, secret);
    const doc: { v: 1; keys: Record<string, string> } = { v: 1, keys: {} };
    for (const [k, v] of [...keys.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      doc.keys[k] = toBase64(v);
    }
    await this.writeAtomic(`${JSON.stringify(doc, null, 2)}\n`);
  }

  private async writeAtomic(text: string): Promise<void> {
    const tmp = path.join(
      this.dir,
      `.${path.basename(this.filePath)}.${randomBytes(6).toString('hex')}.tmp`,
    );
    try {
      await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
      const fh = await fs.open(
        tmp,
        fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL,
        0o600,
      );
      try {
        await fh.chmod(0o600); // the umask cannot widen 0600, but be explicit
        await fh.writeFile(text, 'utf8');
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fs.rename(tmp, this.filePath);
    } catch (e) {
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      throw failed('could not write the key file', e, { path: this.filePath });
    }
    await this.syncDir();
  }

  /** fsync the folder so the rename itself is durable (POSIX; not supported on Windows). */
  private async syncDir(): Promise<void> {
    if (process.platform === 'win32') return;
    let dh: fs.FileHandle | undefined;
    try {
      dh = await fs.open(this.dir, 'r');
      await dh.sync();
    } catch (e) {
      throw failed('could not sync the data folder', e, { path: this.dir });
    } finally {
      await dh?.close();
    }
  }

  /** Read and validate the file; an absent file is an empty key set. */
  private async load(): Promise<Map<string, Uint8Array>> {
    let fh: fs.FileHandle;
    try {
      fh = await fs.open(this.filePath, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0));
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return new Map();
      throw failed('could not open the key file', e, { path: this.filePath });
    }
    let text: string;
    try {
      // fstat the handle we read from: no window between checking and reading another file.
      const st = await fh.stat();
      if (!st.isFile())
        throw failed('key file is not a regular file', undefined, { path: this.filePath });
      if (this.checkPerms && (st.mode & 0o077) !== 0) {
        throw failed('key file is accessible by group or others; expected mode 0600', undefined, {
          path: this.filePath,
          mode: (st.mode & 0o777).toString(8),
        });
      }
      if (st.size > MAX_FILE_BYTES)
        throw failed('key file is too large', undefined, { path: this.filePath });
      text = await fh.readFile('utf8');
    } catch (e) {
      if (e instanceof MemwardenError) throw e;
      throw failed('could not read the key file', e, { path: this.filePath });
    } finally {
      await fh.close();
    }
    return parseKeyFile(text, this.filePath);
  }
}

/** Parse key-file text; every malformation is `KEY_SOURCE_FAILED`. */
export function parseKeyFile(text: string, where = 'key file'): Map<string, Uint8Array> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw failed('key file is not valid JSON', e, { path: where });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw failed('key file is not an object');
  const { v, keys, ...rest } = doc as Record<string, unknown>;
  if (v !== 1) throw failed('unsupported key file version', undefined, { path: where });
  if (Object.keys(rest).length > 0)
    throw failed('unknown fields in key file', undefined, { path: where });
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys)) {
    throw failed('key file "keys" is not an object', undefined, { path: where });
  }
  const out = new Map<string, Uint8Array>();
  for (const [name, value] of Object.entries(keys as Record<string, unknown>)) {
    if (!NAME_RE.test(name))
      throw failed('invalid key name in key file', undefined, { path: where });
    if (typeof value !== 'string')
      throw failed('key value is not a string', undefined, { path: where, name });
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(value);
    } catch (e) {
      throw failed('key value is not standard base64', e, { path: where, name });
    }
    if (bytes.length === 0) throw failed('empty key in key file', undefined, { path: where, name });
    out.set(name, bytes);
  }
  return out;
}
