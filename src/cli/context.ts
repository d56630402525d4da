/**
 * @module cli/context
 * Where the CLI picks its adapters: the data folder, its storage backend and key file.
 */
import path from 'node:path';
import { KeyFileSource } from '../adapters/keyfile/keyfile.js';
import { MemoryBackend } from '../adapters/memory/index.js';
import { systemClock, systemRandom } from '../adapters/system/index.js';
import { Ledger } from '../memory/ledger.js';

/** Default data folder, relative to the working directory (or MEMWARDEN_DATA). */
export function defaultDataDir(): string {
  return process.env.MEMWARDEN_DATA ?? '.memwarden';
}

/** Open the ledger stored in `dataDir` (created on first use). */
export async function openLedger(dataDir: string): Promise<Ledger> {
  const dir = path.resolve(dataDir);
  return Ledger.open({
    storage: await MemoryBackend.open({ journalPath: path.join(dir, 'journal.jsonl') }),
    keys: new KeyFileSource(dir),
    clock: systemClock,
    random: systemRandom,
  });
}
