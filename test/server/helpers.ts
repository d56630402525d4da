/** Test wiring: a FakeMemory behind the real app, two principals with static keys, captured logs. */
import { Writable } from 'node:stream';
import { createApp } from '../../src/server/app.js';
import { createStaticKeyAuthenticator, type Authenticator } from '../../src/server/auth.js';
import { createLogger } from '../../src/server/logger.js';
import { Metrics } from '../../src/server/metrics.js';
import { FakeMemory } from './fake-memory.js';

export const ALICE = 'user:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
export const BOB = 'user:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
export const ALICE_KEY = 'mw_alice_0123456789abcdef';
export const BOB_KEY = 'mw_bob_fedcba9876543210';

export function setup(
  opts: { auth?: Authenticator; metricsAccess?: 'public' | 'authenticated' | 'disabled' } = {},
) {
  const metrics = new Metrics();
  const memory = new FakeMemory(metrics);
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l) as Record<string, unknown>);
      }
      cb();
    },
  });
  const logger = createLogger({ destination, level: 'info' });
  const auth = opts.auth ?? createStaticKeyAuthenticator({ [ALICE]: ALICE_KEY, [BOB]: BOB_KEY });
  const app = createApp({
    memory,
    auth,
    metrics,
    logger,
    ...(opts.metricsAccess === undefined ? {} : { metricsAccess: opts.metricsAccess }),
  });

  /** An in-process request; `key: null` sends no Authorization header. */
  const call = async (
    method: string,
    path: string,
    o: { body?: unknown; raw?: string; key?: string | null; headers?: Record<string, string> } = {},
  ) => {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? ALICE_KEY : o.key;
    if (key !== null) headers['authorization'] = `Bearer ${key}`;
    let body: string | undefined = o.raw;
    if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined && headers['content-type'] === undefined)
      headers['content-type'] = 'application/json';
    const res = await app.request(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json: json as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  return { app, memory, metrics, lines, raw, call };
}
