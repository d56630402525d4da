/**
 * @module witness/app
 * The witness HTTP service (C2SP tlog-witness): `POST /add-checkpoint`, plus `GET /healthz`
 * and `GET /vkey`. The decision is core's (`core/merkle/witness-protocol`); this module adds
 * the body limit, the per-log atomic check-and-persist, the cosignature and the statuses.
 *
 * No authentication beyond the checkpoint's signature (tlog-witness §Introduction: "there is
 * no authentication of requests beyond the validation of the signature on the checkpoint").
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isMemwardenError } from '../core/errors.js';
import {
  type WitnessDecision,
  type WitnessedLog,
  MAX_ADD_CHECKPOINT_BYTES,
  TLOG_SIZE_CONTENT_TYPE,
  authenticateCheckpoint,
  cosignCheckpoint,
  decideAddCheckpoint,
  parseAddCheckpointRequest,
} from '../core/merkle/index.js';
import type { WitnessIdentity, WitnessStore } from './store.js';

/** Where the witness reports what it saw (a pino logger satisfies it). */
export interface WitnessLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface WitnessAppOptions {
  readonly identity: WitnessIdentity;
  readonly store: WitnessStore;
  /** Trusted logs by origin. */
  readonly logs: ReadonlyMap<string, WitnessedLog>;
  /** POSIX seconds (default: wall clock). */
  readonly now?: () => number;
  readonly logger?: WitnessLogger;
}

const TEXT = { 'content-type': 'text/plain; charset=utf-8' };

/** Build the witness app. */
export function createWitnessApp(opts: WitnessAppOptions): Hono {
  const { identity, store, logs } = opts;
  const now = opts.now ?? ((): number => Math.floor(Date.now() / 1000));
  const log = opts.logger;
  const app = new Hono();
  const cosigner = {
    name: identity.name,
    publicKey: identity.signer.publicKey.raw,
    sign: (m: Uint8Array) => identity.signer.sign(m),
  };
  const plain = (
    c: { body: (b: string, s: ContentfulStatusCode, h: Record<string, string>) => Response },
    status: ContentfulStatusCode,
    text: string,
  ): Response => c.body(`${text}\n`, status, TEXT);

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/vkey', (c) => c.body(`${identity.vkey}\n`, 200, TEXT));

  app.post(
    '/add-checkpoint',
    bodyLimit({
      maxSize: MAX_ADD_CHECKPOINT_BYTES,
      onError: (c) => c.body('request body too large\n', 413, TEXT),
    }),
    async (c) => {
      let body: string;
      try {
        body = new TextDecoder('utf-8', { fatal: true }).decode(await c.req.arrayBuffer());
      } catch {
        return plain(c, 400, 'body is not UTF-8');
      }
      let req;
      try {
        req = parseAddCheckpointRequest(body);
      } catch (e) {
        if (isMemwardenError(e)) return plain(c, 400, e.message);
        throw e;
      }
      const auth = authenticateCheckpoint(req, logs);
      if (!auth.ok) return plain(c, auth.status, auth.reason);
      const origin = auth.checkpoint.origin;
      type Outcome =
        Exclude<WitnessDecision, { status: 200 }> | { status: 200; line: string; size: number };
      const outcome = await store.update<Outcome>(origin, (current) => {
        const d = decideAddCheckpoint(req, auth.checkpoint, current);
        if (d.status !== 200) return { result: d };
        const ts = now();
        const line = cosignCheckpoint(auth.text, cosigner, ts);
        return {
          next: {
            origin,
            size: d.next.size,
            root: d.next.root,
            note: req.checkpoint,
            cosignedAt: ts,
          },
          result: { status: 200, line, size: d.next.size },
        };
      });
      if (outcome.status === 200) {
        log?.info({ origin, old: req.oldSize, size: outcome.size }, 'cosigned');
        return c.body(outcome.line, 200, TEXT);
      }
      if (outcome.status === 409) {
        log?.warn(
          {
            origin,
            old: req.oldSize,
            size: auth.checkpoint.size,
            known: outcome.knownSize,
            reason: outcome.reason,
          },
          'conflict',
        );
        return c.body(`${outcome.knownSize}\n`, 409, { 'content-type': TLOG_SIZE_CONTENT_TYPE });
      }
      // tlog-witness: a signed checkpoint with a bad proof "might be proof of log misbehavior";
      // keep the evidence in the log (the note is public data).
      log?.warn(
        {
          origin,
          old: req.oldSize,
          size: auth.checkpoint.size,
          reason: outcome.reason,
          ...(outcome.status === 422 ? { note: req.checkpoint } : {}),
        },
        'refused',
      );
      return plain(c, outcome.status, outcome.reason);
    },
  );

  app.notFound((c) => c.body('not found\n', 404, TEXT));
  app.onError((err, c) => {
    log?.error(
      { err: { name: err.name, code: (err as { code?: unknown }).code, stack: err.stack } },
      'witness failure',
    );
    return c.body('internal error\n', 500, TEXT);
  });
  return app;
}
