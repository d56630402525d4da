/**
 * @module memory/identity/keys
 * The host's key custody: Ed25519 seeds of the principals it writes for (MemLineage §2.1:
 * "the host process holds long-term key material on behalf of one or more principals"), the
 * checkpoint signing key, and the HMAC keyring (SMSR component 1). Secrets live behind the
 * KeySource port; this module only names them and caches the live key objects.
 */
import { utf8 } from '../../core/bytes.js';
import {
  type Ed25519Signer,
  generateKeyPair,
  publicKeyFromSeed,
  signerFromSeed,
} from '../../core/crypto/ed25519.js';
import { MacKeyring, hmacSha256 } from '../../core/crypto/hmac.js';
import { MemwardenError } from '../../core/errors.js';
import type { RandomSource } from '../../ports/clock.js';
import type { KeySource } from '../../ports/keysource.js';

const LOG_KEY = 'log-checkpoint';
/** Not a secret: the latest checkpoint note the host signed (its anchor against rollback). */
const ANCHOR = 'checkpoint-anchor';
const MAC_PREFIX = 'mac-';
const RETIRED_SUFFIX = '-retired';
const principalKeyName = (kid: string): string => `signing-${kid}`;

/** Live key material loaded from a KeySource. */
export class HostKeys {
  private readonly signers = new Map<string, Ed25519Signer>();

  private constructor(
    private readonly source: KeySource,
    private readonly random: RandomSource,
    readonly logSigner: Ed25519Signer,
    readonly macs: MacKeyring,
    /** HMAC key for derived principal keys (ADR 0058), itself derived from the log key's seed. */
    private readonly derivation: Uint8Array,
  ) {}

  /** Load (creating on first use) the checkpoint key and the MAC keyring. */
  static async open(source: KeySource, random: RandomSource): Promise<HostKeys> {
    let seed = await source.get(LOG_KEY);
    if (seed === undefined) {
      seed = generateKeyPair(random).seed;
      await source.put(LOG_KEY, seed);
    }
    const macs = new MacKeyring();
    const names = (await source.list()).filter(
      (n) => n.startsWith(MAC_PREFIX) && !n.endsWith(RETIRED_SUFFIX),
    );
    const all = new Set(await source.list());
    if (names.length === 0) {
      await source.put(`${MAC_PREFIX}1`, random.randomBytes(32));
      names.push(`${MAC_PREFIX}1`);
    }
    // Oldest first, so the newest key is the one that tags (MacKeyring: last added is current).
    names.sort((a, b) => Number(a.slice(MAC_PREFIX.length)) - Number(b.slice(MAC_PREFIX.length)));
    for (const n of names) {
      const key = await source.get(n);
      if (key === undefined) throw new MemwardenError('KEY_SOURCE_FAILED', `MAC key ${n} vanished`);
      macs.add(n, key);
      if (all.has(`${n}${RETIRED_SUFFIX}`)) macs.retire(n);
    }
    // Domain-separated from every use of the log key (it signs with the seed's Ed25519 key; this
    // is an HMAC of a label under the seed): every process sharing the store derives the same.
    const derivation = hmacSha256(seed, utf8.encode('memwarden/derive-principal-keys/v1'));
    return new HostKeys(source, random, signerFromSeed(seed), macs, derivation);
  }

  /** Generate a key for a principal the host writes for; returns its public key. */
  async createSigningKey(
    kidFor: (publicKey: Uint8Array) => string,
  ): Promise<{ publicKey: Uint8Array; kid: string }> {
    const kp = generateKeyPair(this.random);
    const kid = kidFor(kp.publicKey);
    await this.source.put(principalKeyName(kid), kp.seed);
    this.signers.set(kid, signerFromSeed(kp.seed));
    return { publicKey: kp.publicKey, kid };
  }

  /**
   * The signing key named by `label`, derived deterministically (ADR 0058): the same label gives
   * the same key on every process that shares the log key, so a platform's end user maps to one
   * principal id without a lookup table. The seed is stored like a generated one (idempotent),
   * so {@link signer} finds it.
   */
  async derivedSigningKey(
    label: string,
    kidFor: (publicKey: Uint8Array) => string,
  ): Promise<{ publicKey: Uint8Array; kid: string }> {
    const seed = hmacSha256(this.derivation, utf8.encode(label));
    const publicKey = publicKeyFromSeed(seed);
    const kid = kidFor(publicKey);
    if (!this.signers.has(kid)) {
      if ((await this.source.get(principalKeyName(kid))) === undefined) {
        try {
          await this.source.put(principalKeyName(kid), seed);
        } catch (e) {
          // A concurrent derivation stored the same seed first: nothing to do.
          if (!(e instanceof MemwardenError && e.code === 'STORAGE_CONFLICT')) throw e;
        }
      }
      this.signers.set(kid, signerFromSeed(seed));
    }
    return { publicKey, kid };
  }

  /** The signer for `kid`, or undefined when the host does not hold that key. */
  async signer(kid: string): Promise<Ed25519Signer | undefined> {
    const cached = this.signers.get(kid);
    if (cached !== undefined) return cached;
    const seed = await this.source.get(principalKeyName(kid));
    if (seed === undefined) return undefined;
    const s = signerFromSeed(seed);
    this.signers.set(kid, s);
    return s;
  }

  /**
   * Where the latest checkpoint this host signed is recorded, outside the database (ADR 0033):
   * a source of its own, never the key source (several processes write it).
   */
  anchorSource: KeySource | undefined;

  /** The latest checkpoint note this host recorded outside the database (ADR 0033). */
  async anchor(): Promise<string | undefined> {
    const b = await this.anchorSource?.get(ANCHOR);
    return b === undefined ? undefined : new TextDecoder().decode(b);
  }

  /** Record a checkpoint note as the latest this host signed; false when there is nowhere to. */
  async setAnchor(note: string): Promise<boolean> {
    const s = this.anchorSource;
    if (s?.replace === undefined) return false;
    await s.replace(ANCHOR, new TextEncoder().encode(note));
    return true;
  }

  /** Add a new HMAC key; it tags from now on, older keys keep verifying (SMSR, improved). */
  async rotateMac(): Promise<string> {
    const existing = (await this.source.list()).filter(
      (n) => n.startsWith(MAC_PREFIX) && !n.endsWith(RETIRED_SUFFIX),
    );
    const next = Math.max(0, ...existing.map((n) => Number(n.slice(MAC_PREFIX.length)))) + 1;
    const name = `${MAC_PREFIX}${next}`;
    const key = this.random.randomBytes(32);
    await this.source.put(name, key);
    this.macs.add(name, key);
    return name;
  }

  /** Retire an HMAC key: everything it tagged stops verifying, deliberately. */
  async retireMac(kid: string): Promise<void> {
    this.macs.retire(kid);
    await this.source.put(`${kid}${RETIRED_SUFFIX}`, new Uint8Array([1]));
  }
}
