/**
 * @module witness/store
 * A witness's data folder: its Ed25519 key (0600 key file), its name, and one state file per
 * log — the latest checkpoint it cosigned (tlog-witness: "the witness is only required to
 * keep track of the latest checkpoint it observed and verified").
 *
 * Durability and atomicity (tlog-witness §add-checkpoint: "The witness MUST persist the new
 * checkpoint before responding", and the old-size check and the update "must be performed
 * atomically"):
 * - a state file is replaced by write-to-temp (0600, O_EXCL) → fsync → rename → fsync(folder),
 *   so a crash leaves the old or the new record, never a torn one;
 * - `update(origin, fn)` runs check-and-persist for one log under a per-log queue, so two
 *   requests for one log never interleave inside this process;
 * - one process owns the folder: `WitnessStore.open` takes a pid lock file (a stale one left
 *   by a killed process is taken over), so no second process races the first.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants as fsConstants,
  openSync,
  promises as fs,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { KeyFileSource } from '../adapters/keyfile/keyfile.js';
import { fromBase64, toBase64 } from '../core/bytes.js';
import { type Ed25519Signer, generateKeyPair, signerFromSeed } from '../core/crypto/ed25519.js';
import { MemwardenError } from '../core/errors.js';
import { formatCosignerVerifierKey } from '../core/merkle/index.js';
import { assertKeyName } from '../core/merkle/note.js';
import type { WitnessLogState } from '../core/merkle/index.js';

const KEY_FILE = 'witness-key.json';
const KEY_NAME = 'witness-ed25519';
const IDENTITY_FILE = 'witness.json';
const LOCK_FILE = 'witness.lock';
const LOGS_DIR = 'logs';
const MAX_STATE_BYTES = 256 * 1024;

/** The latest cosigned checkpoint of one log, as stored. */
export interface StoredLogState extends WitnessLogState {
  readonly origin: string;
  /** The log's signed note as the witness received it (evidence). */
  readonly note: string;
  /** POSIX seconds of the cosignature. */
  readonly cosignedAt: number;
}

const failed = (message: string, cause?: unknown): MemwardenError =>
  new MemwardenError('STORAGE_FAILED', message, cause === undefined ? undefined : { cause });

function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;
}

/** Write `text` to `file` atomically and durably (temp + fsync + rename + folder fsync). */
async function writeAtomic(dir: string, file: string, text: string): Promise<void> {
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const h = await fs.open(
    tmp,
    fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL,
    0o600,
  );
  try {
    await h.writeFile(text, 'utf8');
    await h.sync();
  } finally {
    await h.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
  const d = await fs.open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

/** Folders locked by this process (a lock file naming our own pid may be a stale one from a
 * previous container run where we were pid 1 too, so in-process ownership is tracked here). */
const lockedHere = new Set<string>();

/** Take the folder's pid lock; returns the release function. */
function lockFolder(dir: string): () => void {
  const lock = path.resolve(dir, LOCK_FILE);
  if (lockedHere.has(lock))
    throw new MemwardenError(
      'STORAGE_FAILED',
      `witness folder ${dir} is already open in this process`,
      {
        details: { reason: 'locked', pid: process.pid },
      },
    );
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      lockedHere.add(lock);
      return () => {
        lockedHere.delete(lock);
        rmSync(lock, { force: true });
      };
    } catch (e) {
      if (!isErrno(e, 'EEXIST')) throw failed(`could not lock witness folder ${dir}`, e);
      const pid = Number(readFileSync(lock, 'utf8'));
      let alive = false;
      try {
        alive = Number.isInteger(pid) && pid > 0 && pid !== process.pid && process.kill(pid, 0);
      } catch {
        alive = false;
      }
      if (alive) {
        throw new MemwardenError(
          'STORAGE_FAILED',
          `witness folder ${dir} is in use by process ${pid}`,
          {
            details: { reason: 'locked', pid },
          },
        );
      }
      rmSync(lock, { force: true }); // stale: its process is gone
    }
  }
  throw failed(`could not lock witness folder ${dir}`);
}

/** The witness's identity: name and signing key, created on first use. */
export interface WitnessIdentity {
  readonly name: string;
  readonly signer: Ed25519Signer;
  /** `<name>+<key ID>+<base64(0x04 ‖ key)>`: what clients and logs configure. */
  readonly vkey: string;
}

/**
 * Load (or create, on first use) the identity in `dir`. `name` is required on creation and,
 * when given later, must match the stored one: a witness's name is part of its identity.
 */
export async function loadIdentity(dir: string, name?: string): Promise<WitnessIdentity> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const keys = new KeyFileSource(dir, { fileName: KEY_FILE });
  const idFile = path.join(dir, IDENTITY_FILE);
  let stored: string | undefined;
  try {
    const doc = JSON.parse(await fs.readFile(idFile, 'utf8')) as { v?: unknown; name?: unknown };
    if (doc.v !== 1 || typeof doc.name !== 'string') throw new Error('bad identity file');
    stored = doc.name;
  } catch (e) {
    if (!isErrno(e, 'ENOENT')) throw failed(`unreadable witness identity ${idFile}`, e);
  }
  if (stored !== undefined && name !== undefined && name !== stored) {
    throw new MemwardenError('INPUT_INVALID', `this witness is named ${stored}, not ${name}`);
  }
  let seed = await keys.get(KEY_NAME);
  if (stored === undefined) {
    if (name === undefined)
      throw new MemwardenError('INPUT_INVALID', 'a new witness needs a name (--name)');
    assertKeyName(name);
    if (seed === undefined) {
      seed = generateKeyPair().seed;
      await keys.put(KEY_NAME, seed);
    }
    await writeAtomic(dir, idFile, `${JSON.stringify({ v: 1, name })}\n`);
    stored = name;
  }
  if (seed === undefined) throw failed(`witness key missing from ${dir}`);
  const signer = signerFromSeed(seed);
  seed.fill(0);
  return { name: stored, signer, vkey: formatCosignerVerifierKey(stored, signer.publicKey.raw) };
}

/** Per-log durable state with atomic check-and-update. */
export class WitnessStore {
  private readonly queues = new Map<string, Promise<unknown>>();
  private constructor(
    private readonly logsDir: string,
    private readonly release: () => void,
  ) {}

  /** Open the folder (created 0700) and take its lock. */
  static async open(dir: string): Promise<WitnessStore> {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const release = lockFolder(dir);
    const logsDir = path.join(dir, LOGS_DIR);
    try {
      await fs.mkdir(logsDir, { recursive: true, mode: 0o700 });
    } catch (e) {
      release();
      throw failed('cannot create the logs folder', e);
    }
    return new WitnessStore(logsDir, release);
  }

  private fileOf(origin: string): string {
    // Origins are arbitrary printable text; the file name is their SHA-256.
    return path.join(this.logsDir, `${createHash('sha256').update(origin).digest('hex')}.json`);
  }

  /** The stored record for `origin`, or undefined if the witness never cosigned it. */
  async get(origin: string): Promise<StoredLogState | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.fileOf(origin), 'utf8');
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return undefined;
      throw failed('cannot read witness state', e);
    }
    try {
      if (text.length > MAX_STATE_BYTES) throw new Error('too large');
      const d = JSON.parse(text) as Record<string, unknown>;
      if (
        d.v !== 1 ||
        d.origin !== origin ||
        typeof d.size !== 'number' ||
        !Number.isSafeInteger(d.size) ||
        d.size < 0 ||
        typeof d.root !== 'string' ||
        typeof d.note !== 'string' ||
        typeof d.cosignedAt !== 'number'
      )
        throw new Error('bad shape');
      const root = fromBase64(d.root);
      if (root.length !== 32) throw new Error('bad root');
      return { origin, size: d.size, root, note: d.note, cosignedAt: d.cosignedAt };
    } catch (e) {
      // A corrupt record must stop the witness, never reset it to "never seen" (a rollback).
      throw new MemwardenError('STORAGE_FAILED', 'corrupt witness state', {
        cause: e,
        details: { origin },
      });
    }
  }

  /**
   * Run `fn` on the current record of `origin` and persist what it returns (if anything)
   * before resolving — serialised per origin, so the check and the write are one step.
   */
  async update<T>(
    origin: string,
    fn: (current: StoredLogState | undefined) => { next?: StoredLogState; result: T },
  ): Promise<T> {
    const prev = this.queues.get(origin) ?? Promise.resolve();
    const run = prev.then(async () => {
      const { next, result } = fn(await this.get(origin));
      if (next !== undefined) {
        const doc = {
          v: 1,
          origin: next.origin,
          size: next.size,
          root: toBase64(next.root),
          note: next.note,
          cosignedAt: next.cosignedAt,
        };
        await writeAtomic(this.logsDir, this.fileOf(origin), `${JSON.stringify(doc)}\n`);
      }
      return result;
    });
    this.queues.set(
      origin,
      run.catch(() => undefined),
    );
    return run;
  }

  /** Wait for pending updates and release the folder lock. */
  async close(): Promise<void> {
    await Promise.all([...this.queues.values()]);
    this.release();
  }
}
