/**
 * @module testing/llm/mock-openai-server
 * A protocol-level stand-in for an OpenAI-compatible endpoint: a real `node:http` server on
 * 127.0.0.1 with an ephemeral port, speaking the OpenAI wire format —
 * `POST /v1/chat/completions` (JSON, or Server-Sent Events with `stream: true`) and
 * `POST /v1/embeddings`. A handler scripts each answer, including failures (HTTP errors,
 * rate limits, malformed bodies, hung and dropped connections), and every request is
 * recorded so tests can assert what went over the wire. The bearer key is checked but never
 * recorded.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type MockChatReply,
  type MockChatRequest,
  type MockEmbeddingsReply,
  type MockEmbeddingsRequest,
  defaultVector,
  lastUserText,
  sendError,
  sendFailure,
  sendJson,
  tokens,
  writeCompletion,
} from './mock-openai-wire.js';

/** One request as received (the bearer key itself is never kept). */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Whether the request carried the expected bearer key (always true without `apiKey`). */
  readonly authorized: boolean;
  readonly body: unknown;
}

export interface MockOpenAiServerOptions {
  /** Answers chat completions; `index` counts chat requests from 0. Default: echo the last user message. */
  readonly handler?: (
    req: MockChatRequest,
    index: number,
  ) => MockChatReply | Promise<MockChatReply>;
  /** Answers embeddings; default: deterministic 8-d vectors from SHA-256 of each input. */
  readonly embeddings?: (
    req: MockEmbeddingsRequest,
    index: number,
  ) => MockEmbeddingsReply | Promise<MockEmbeddingsReply>;
  /** Require `Authorization: Bearer <apiKey>` (401 `invalid_api_key` otherwise). */
  readonly apiKey?: string;
}

export interface MockOpenAiServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `${url}/v1`, the API root clients take. */
  readonly baseUrl: string;
  /** Every request received, in order (live array). */
  readonly requests: readonly RecordedRequest[];
  /** Stop listening and destroy open connections (including hung ones). */
  close(): Promise<void>;
}

const MAX_BODY = 10 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Start the mock on 127.0.0.1 with an ephemeral port. */
export async function startMockOpenAiServer(
  opts: MockOpenAiServerOptions = {},
): Promise<MockOpenAiServer> {
  const requests: RecordedRequest[] = [];
  let chatIndex = 0;
  let embedIndex = 0;
  let ids = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const raw = await readBody(req);
    const authorized =
      opts.apiKey === undefined || req.headers.authorization === `Bearer ${opts.apiKey}`;
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      body = raw;
    }
    requests.push({ method: req.method ?? '', path, authorized, body });

    if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/embeddings')) {
      sendError(res, 404, `Unknown request URL: ${req.method ?? ''} ${path}`);
      return;
    }
    if (!authorized) {
      sendError(
        res,
        401,
        'Incorrect API key provided.',
        'invalid_request_error',
        'invalid_api_key',
      );
      return;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      sendError(res, 400, 'We could not parse the JSON body of your request.');
      return;
    }
    const b = body as Record<string, unknown>;
    if (typeof b['model'] !== 'string' || b['model'] === '') {
      sendError(res, 400, 'you must provide a model parameter');
      return;
    }
    const model = b['model'];

    if (path === '/v1/embeddings') {
      const input = typeof b['input'] === 'string' ? [b['input']] : b['input'];
      if (!Array.isArray(input) || !input.every((x) => typeof x === 'string')) {
        sendError(res, 400, "'input' must be a string or an array of strings");
        return;
      }
      const ereq: MockEmbeddingsRequest = { model, input };
      const reply = opts.embeddings
        ? await opts.embeddings(ereq, embedIndex++)
        : { kind: 'embeddings' as const, vectors: input.map(defaultVector) };
      if (sendFailure(res, reply)) return;
      if (reply.kind !== 'embeddings') return;
      sendJson(res, 200, {
        object: 'list',
        data: reply.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
        model,
        usage: {
          prompt_tokens: input.reduce((n, s) => n + tokens(s), 0),
          total_tokens: input.reduce((n, s) => n + tokens(s), 0),
        },
      });
      return;
    }

    if (!Array.isArray(b['messages']) || b['messages'].length === 0) {
      sendError(res, 400, "'messages' must be a non-empty array");
      return;
    }
    const messages = b['messages'] as Record<string, unknown>[];
    const creq: MockChatRequest = {
      model,
      messages,
      ...(Array.isArray(b['tools']) ? { tools: b['tools'] as Record<string, unknown>[] } : {}),
      stream: b['stream'] === true,
      body: b,
    };
    const reply = opts.handler
      ? await opts.handler(creq, chatIndex++)
      : { kind: 'message' as const, text: `echo: ${lastUserText(messages)}` };
    if (sendFailure(res, reply)) return;
    if (reply.kind !== 'message') return;

    writeCompletion(res, reply, creq, ++ids);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendError(res, 500, 'mock handler failed');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
