/**
 * @module witness/serve
 * Run a witness: open its folder (lock, key, state), build the app, listen.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { MemwardenError } from '../core/errors.js';
import { type WitnessedLog, parseVerifierKey } from '../core/merkle/index.js';
import { type WitnessLogger, createWitnessApp } from './app.js';
import { WitnessStore, loadIdentity, type WitnessIdentity } from './store.js';

/**
 * Group log vkeys (signed-note type 0x01) by origin. The origin of a log is its key name
 * (tlog-checkpoint: the key name SHOULD be the origin; memwarden's always is).
 */
export function witnessedLogs(vkeys: readonly string[]): Map<string, WitnessedLog> {
  if (vkeys.length === 0)
    throw new MemwardenError('INPUT_INVALID', 'a witness needs at least one --log-vkey');
  const out = new Map<
    string,
    { origin: string; keys: { keyName: string; publicKey: Uint8Array }[] }
  >();
  for (const v of vkeys) {
    const k = parseVerifierKey(v);
    const e = out.get(k.keyName) ?? { origin: k.keyName, keys: [] };
    e.keys.push({ keyName: k.keyName, publicKey: k.publicKey });
    out.set(k.keyName, e);
  }
  return out;
}

export interface RunningWitness {
  readonly url: string;
  readonly identity: WitnessIdentity;
  close(): Promise<void>;
}

/** Open `dir`, listen on `port` (0 = any free port), resolve when listening. */
export async function startWitness(o: {
  dir: string;
  logVkeys: readonly string[];
  port: number;
  host?: string;
  name?: string;
  logger?: WitnessLogger;
}): Promise<RunningWitness> {
  const logs = witnessedLogs(o.logVkeys);
  const identity = await loadIdentity(o.dir, o.name);
  const store = await WitnessStore.open(o.dir);
  const app = createWitnessApp({
    identity,
    store,
    logs,
    ...(o.logger === undefined ? {} : { logger: o.logger }),
  });
  const host = o.host ?? '127.0.0.1';
  try {
    return await new Promise<RunningWitness>((resolve, reject) => {
      const server = serve({ fetch: app.fetch, port: o.port, hostname: host }) as Server;
      server.once('error', reject);
      server.once('listening', () => {
        server.off('error', reject);
        const addr = server.address() as AddressInfo;
        const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
        resolve({
          url: `http://${h}:${addr.port}`,
          identity,
          close: async () => {
            await new Promise<void>((res) => {
              server.close(() => res());
              server.closeIdleConnections();
            });
            await store.close();
          },
        });
      });
    });
  } catch (e) {
    await store.close();
    throw e;
  }
}
