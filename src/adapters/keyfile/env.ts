/**
 * @module adapters/keyfile/env
 * A read-only {@link KeySource} over environment variables `MEMWARDEN_KEY_<NAME>` holding
 * standard base64. For containers and CI where secrets arrive as env vars; `put` is refused
 * (`KEY_SOURCE_FAILED`) because a process cannot persist into its own environment.
 *
 * Name mapping: `get('mac_1')` reads `MEMWARDEN_KEY_MAC_1`; `list()` returns the suffixes in
 * lower case. Names are `[A-Za-z0-9_]{1,64}` (no `-`/`.`: they cannot appear in env names
 * portably), matched case-insensitively.
 */
import { fromBase64 } from '../../core/bytes.js';
import { MemwardenError } from '../../core/errors.js';
import type { KeySource } from '../../ports/keysource.js';

/** Prefix of the environment variables read by {@link EnvKeySource}. */
export const ENV_KEY_PREFIX = 'MEMWARDEN_KEY_';

const NAME_RE = /^[A-Za-z0-9_]{1,64}$/;

/** A read-only key source over `MEMWARDEN_KEY_*` variables of `env` (default `process.env`). */
export class EnvKeySource implements KeySource {
  private readonly env: Readonly<Record<string, string | undefined>>;

  constructor(env: Readonly<Record<string, string | undefined>> = process.env) {
    this.env = env;
  }

  /** The decoded secret, undefined when unset; `KEY_SOURCE_FAILED` for empty or non-base64 values. */
  async get(name: string): Promise<Uint8Array | undefined> {
    if (typeof name !== 'string' || !NAME_RE.test(name)) {
      throw new MemwardenError('INPUT_INVALID', 'key name must match [A-Za-z0-9_]{1,64}');
    }
    const varName = ENV_KEY_PREFIX + name.toUpperCase();
    const value = this.env[varName];
    if (value === undefined) return undefined;
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(value.trim());
    } catch (e) {
      throw new MemwardenError('KEY_SOURCE_FAILED', 'environment key is not standard base64', {
        cause: e,
        details: { variable: varName },
      });
    }
    if (bytes.length === 0) {
      throw new MemwardenError('KEY_SOURCE_FAILED', 'environment key is empty', {
        details: { variable: varName },
      });
    }
    return bytes;
  }

  /** Always `KEY_SOURCE_FAILED`: the environment is read-only. */
  async put(name: string, _secret: Uint8Array): Promise<void> {
    throw new MemwardenError('KEY_SOURCE_FAILED', 'environment key source is read-only', {
      details: { name },
    });
  }

  /** Lower-cased suffixes of the `MEMWARDEN_KEY_*` variables with a well-formed name. */
  async list(): Promise<string[]> {
    const out: string[] = [];
    for (const k of Object.keys(this.env)) {
      if (!k.startsWith(ENV_KEY_PREFIX) || this.env[k] === undefined) continue;
      const suffix = k.slice(ENV_KEY_PREFIX.length);
      if (NAME_RE.test(suffix) && suffix === suffix.toUpperCase()) out.push(suffix.toLowerCase());
    }
    return out.sort();
  }
}
