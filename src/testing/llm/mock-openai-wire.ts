/**
 * @module testing/llm/mock-openai-wire
 * The OpenAI wire format for the mock server: the scripted reply types, the error envelope,
 * and chat completions rendered as one JSON body or as Server-Sent Events.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** A tool call the mock model makes; string arguments are sent verbatim (may be invalid JSON). */
export interface MockToolCall {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>> | string;
  readonly id?: string;
}

/** A scripted failure, for chat completions and embeddings alike. */
export type MockFailure =
  /** An HTTP error with the OpenAI error envelope `{ error: { message, type, code } }`. */
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly message?: string;
      readonly type?: string;
      readonly code?: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** Any body, verbatim (default status 200): the malformed-response case. */
  | {
      readonly kind: 'raw';
      readonly status?: number;
      readonly body: string;
      readonly contentType?: string;
    }
  /** Never answer (the client's timeout fires); released by `close()`. */
  | { readonly kind: 'hang' }
  /** Destroy the connection without a response (a network error). */
  | { readonly kind: 'drop' };

export type MockChatReply =
  | {
      readonly kind: 'message';
      readonly text?: string;
      readonly toolCalls?: readonly MockToolCall[];
      /** Default `tool_calls` when there are tool calls, else `stop`. */
      readonly finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
      /** Reported model (default: the requested one). */
      readonly model?: string;
    }
  | MockFailure;

export type MockEmbeddingsReply =
  { readonly kind: 'embeddings'; readonly vectors: readonly (readonly number[])[] } | MockFailure;

/** A chat-completions request as the handler sees it. */
export interface MockChatRequest {
  readonly model: string;
  readonly messages: readonly Record<string, unknown>[];
  readonly tools?: readonly Record<string, unknown>[];
  readonly stream: boolean;
  /** The whole parsed body. */
  readonly body: Readonly<Record<string, unknown>>;
}

export interface MockEmbeddingsRequest {
  readonly model: string;
  readonly input: readonly string[];
}

const DEFAULT_ERROR_TYPE: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  403: 'permission_denied',
  404: 'not_found_error',
  429: 'rate_limit_exceeded',
};

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type?: string,
  code?: string,
  headers?: Readonly<Record<string, string>>,
): void {
  sendJson(
    res,
    status,
    {
      error: {
        message,
        type: type ?? DEFAULT_ERROR_TYPE[status] ?? 'server_error',
        param: null,
        code: code ?? null,
      },
    },
    { ...headers },
  );
}

/** Apply a failure reply; false when `reply` is not a failure. */
export function sendFailure(
  res: ServerResponse,
  reply: MockChatReply | MockEmbeddingsReply,
): boolean {
  switch (reply.kind) {
    case 'error':
      sendError(
        res,
        reply.status,
        reply.message ?? `mock error ${reply.status}`,
        reply.type,
        reply.code,
        reply.headers,
      );
      return true;
    case 'raw':
      res.writeHead(reply.status ?? 200, {
        'content-type': reply.contentType ?? 'application/json',
      });
      res.end(reply.body);
      return true;
    case 'hang':
      return true; // leave the response open; close() destroys the socket
    case 'drop':
      res.socket?.destroy();
      return true;
    default:
      return false;
  }
}

export const tokens = (s: string): number => Math.max(1, Math.ceil(s.length / 4));

export function lastUserText(messages: readonly Record<string, unknown>[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.['role'] !== 'user') continue;
    const c = m['content'];
    if (typeof c === 'string') return c;
    if (Array.isArray(c)) {
      return c
        .map((p: unknown) =>
          typeof p === 'object' && p !== null && 'text' in p ? String(p.text) : '',
        )
        .join('');
    }
  }
  return '';
}

export function defaultVector(text: string): number[] {
  const h = createHash('sha256').update(text).digest();
  const v = Array.from({ length: 8 }, (_, i) => (h[i] ?? 0) / 255 - 0.5);
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** Write a successful chat completion (JSON, or SSE when `req.stream`); `n` numbers the ids. */
export function writeCompletion(
  res: ServerResponse,
  reply: Extract<MockChatReply, { kind: 'message' }>,
  req: MockChatRequest,
  n: number,
): void {
  const id = `chatcmpl-mock-${n}`;
  const created = 1_700_000_000 + n;
  const toolCalls = (reply.toolCalls ?? []).map((t, i) => ({
    id: t.id ?? `call_mock_${n}_${i}`,
    type: 'function' as const,
    function: {
      name: t.name,
      arguments: typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments),
    },
  }));
  const text = reply.text ?? (toolCalls.length > 0 ? null : '');
  const finish = reply.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
  const promptTokens = tokens(JSON.stringify(req.messages));
  const completionTokens = tokens((text ?? '') + JSON.stringify(toolCalls));
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  const outModel = reply.model ?? req.model;

  if (!req.stream) {
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: outModel,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: text,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          logprobs: null,
          finish_reason: finish,
        },
      ],
      usage,
    });
    return;
  }

  // Server-Sent Events, one `chat.completion.chunk` per delta, then `[DONE]`.
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const chunk = (
    delta: Record<string, unknown>,
    finishReason: string | null,
    extra: Record<string, unknown> = {},
  ): void => {
    const c = {
      id,
      object: 'chat.completion.chunk',
      created,
      model: outModel,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...extra,
    };
    res.write(`data: ${JSON.stringify(c)}\n\n`);
  };
  chunk({ role: 'assistant', content: '' }, null);
  if (text !== null && text !== '') {
    for (let i = 0; i < text.length; i += 16) chunk({ content: text.slice(i, i + 16) }, null);
  }
  toolCalls.forEach((t, index) => {
    chunk(
      {
        tool_calls: [
          {
            index,
            id: t.id,
            type: 'function',
            function: { name: t.function.name, arguments: '' },
          },
        ],
      },
      null,
    );
    chunk({ tool_calls: [{ index, function: { arguments: t.function.arguments } }] }, null);
  });
  chunk({}, finish);
  const so = req.body['stream_options'];
  if (
    typeof so === 'object' &&
    so !== null &&
    (so as Record<string, unknown>)['include_usage'] === true
  ) {
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: outModel, choices: [], usage })}\n\n`,
    );
  }
  res.write('data: [DONE]\n\n');
  res.end();
}
