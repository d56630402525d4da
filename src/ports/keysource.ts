/**
 * @module ports/keysource
 * Where secret key material lives. The embedded default is a local key file (0600) in the
 * data folder; an environment or secrets-manager source can implement the same port.
 */

export interface KeySource {
  /** Secret bytes stored under `name`, or undefined when absent. */
  get(name: string): Promise<Uint8Array | undefined>;
  /**
   * Store a new secret under `name`. Never overwrites: an existing name is a
   * `STORAGE_CONFLICT`. Read-only sources throw `KEY_SOURCE_FAILED`.
   */
  put(name: string, secret: Uint8Array): Promise<void>;
  /** Names of the stored secrets (never the secrets). */
  list(): Promise<string[]>;
  /**
   * Store or overwrite the host's own state under `name` — the latest checkpoint this host
   * signed (`Ledger`'s anchor, ADR 0033), kept beside the keys and outside the database, so a
   * database rolled back to an earlier log is a finding of `memwarden audit`. Optional: a
   * read-only source has none, and the audit then relies on a checkpoint it is given.
   */
  replace?(name: string, value: Uint8Array): Promise<void>;
}
