import {
  IncomingHttpHeaders,
  IncomingMessage,
  ServerResponse,
} from 'node:http';
import { LoopbackServer, readBody } from './loopback-server';

/** The counts of a GenerateContentResponse's `usageMetadata` (Google leaves a zero count out). */
export interface FakeGeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export type FakeGeminiMode =
  /** The words as text chunks (after a thought summary, if given), the last with finishReason STOP and the usage. */
  | {
      kind: 'ok';
      words: string[];
      thought?: string;
      usage?: FakeGeminiUsage;
      holdLast?: Promise<void>;
    }
  /** Text (if any), then the calls as functionCall parts, finishReason STOP (as Gemini ends a call step). */
  | {
      kind: 'tool-call';
      text?: string;
      calls: { name: string; args: Record<string, unknown> }[];
    }
  /** Google's JSON error; `retryAfter` is sent as the Retry-After header, `retryDelay` as RetryInfo (as a 429 has). */
  | {
      kind: 'http-error';
      status: number;
      message: string;
      retryAfter?: string;
      retryDelay?: string;
    }
  /** Some words, then a chunk `{"error": {...}}` and the end of the body. */
  | { kind: 'error-after'; words: string[]; message: string }
  /** Some words, then the socket is destroyed. */
  | { kind: 'break-after'; words: string[] }
  /** Some words, then a clean end of the body without any finishReason. */
  | { kind: 'cut-after'; words: string[] };

export interface RecordedGeminiRequest {
  method: string | undefined;
  path: string | undefined;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** The canonical status names Google puts in `error.status`. */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const PATH = /^\/v1beta\/models\/([^/:?]+):streamGenerateContent$/;
const DEFAULT_USAGE: FakeGeminiUsage = {
  promptTokenCount: 1200,
  cachedContentTokenCount: 1024,
};

/**
 * Google's Gemini API (v1beta streamGenerateContent with `alt=sse`) on loopback, answering as the real one
 * does: `data: <GenerateContentResponse>\r\n\r\n` chunks, its JSON error shapes (404 NOT_FOUND for another
 * path or model, 400 API_KEY_INVALID for a wrong `x-goog-api-key`, 403 for none). Keeps every request.
 */
export class FakeGeminiServer extends LoopbackServer {
  readonly requests: RecordedGeminiRequest[] = [];
  mode: FakeGeminiMode = { kind: 'ok', words: ['Hello', ' world'] };
  /** Responses whose connection the client closed before the fake finished them (an abort upstream). */
  closedEarly = 0;

  /** `keys`: the API keys accepted; `models`: the models served (any, when not given). */
  constructor(
    private readonly keys: string[],
    private readonly models?: string[],
  ) {
    super();
  }

  protected async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const text = await readBody(req);
    this.requests.push({
      method: req.method,
      path: req.url,
      headers: req.headers,
      body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
    });
    const url = new URL(req.url ?? '/', 'http://fake');
    const model = PATH.exec(url.pathname)?.[1];
    if (
      req.method !== 'POST' ||
      model === undefined ||
      url.searchParams.get('alt') !== 'sse' ||
      (this.models && !this.models.includes(decodeURIComponent(model)))
    )
      return sendError(
        res,
        404,
        model === undefined
          ? `The requested URL ${url.pathname} was not found on this server.`
          : `models/${decodeURIComponent(model)} is not found for API version v1beta, or is not supported for generateContent.`,
      );
    const key = req.headers['x-goog-api-key'];
    if (key === undefined)
      return sendError(
        res,
        403,
        'Method doesn’t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.',
      );
    if (typeof key !== 'string' || !this.keys.includes(key))
      return sendError(
        res,
        400,
        'API key not valid. Please pass a valid API key.',
        [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'API_KEY_INVALID',
            domain: 'googleapis.com',
            metadata: { service: 'generativelanguage.googleapis.com' },
          },
        ],
      );
    await this.answer(res, decodeURIComponent(model));
  }

  private async answer(res: ServerResponse, model: string): Promise<void> {
    const mode = this.mode;
    if (mode.kind === 'http-error') {
      if (mode.retryAfter) res.setHeader('Retry-After', mode.retryAfter);
      return sendError(
        res,
        mode.status,
        mode.message,
        mode.retryDelay
          ? [
              {
                '@type': 'type.googleapis.com/google.rpc.RetryInfo',
                retryDelay: mode.retryDelay,
              },
            ]
          : undefined,
      );
    }
    let ended = false;
    res.on('close', () => {
      if (!ended && !res.writableFinished) this.closedEarly += 1;
    });
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Content-Disposition': 'attachment',
    });
    const send = (chunk: Record<string, unknown>) =>
      res.write(
        `data: ${JSON.stringify({ ...chunk, modelVersion: model, responseId: 'fake-response-1' })}\r\n\r\n`,
      );
    if (mode.kind === 'tool-call') {
      if (mode.text) send(candidateChunk([{ text: mode.text }]));
      send({
        ...candidateChunk(
          mode.calls.map((call, index) => ({
            functionCall: call,
            // Gemini 3 signs the first call of a step.
            ...(index === 0
              ? { thoughtSignature: 'ZmFrZS1zaWduYXR1cmU=' }
              : {}),
          })),
          'STOP',
        ),
        usageMetadata: usageMetadata({
          promptTokenCount: 80,
          candidatesTokenCount: 15 * mode.calls.length,
        }),
      });
      ended = true;
      res.end();
      return;
    }
    const usage = (mode.kind === 'ok' && mode.usage) || {
      ...DEFAULT_USAGE,
      candidatesTokenCount: mode.words.length,
    };
    if (mode.kind === 'ok' && mode.thought)
      send({
        ...candidateChunk([{ text: mode.thought, thought: true }]),
        usageMetadata: usageMetadata({
          promptTokenCount: usage.promptTokenCount,
        }),
      });
    // An answer's last word comes with its finishReason and the final usage, as Gemini sends it.
    const streamed = mode.kind === 'ok' ? mode.words.slice(0, -1) : mode.words;
    for (const [index, word] of streamed.entries()) {
      send({
        ...candidateChunk([{ text: word }]),
        usageMetadata: usageMetadata({
          promptTokenCount: usage.promptTokenCount,
          candidatesTokenCount: index + 1,
        }),
      });
      await new Promise((done) => setTimeout(done, 5));
    }
    if (mode.kind === 'ok') {
      if (mode.holdLast) await mode.holdLast;
      const last = mode.words.at(-1);
      send({
        ...candidateChunk(last === undefined ? [] : [{ text: last }], 'STOP'),
        usageMetadata: usageMetadata(usage),
      });
    }
    ended = true;
    if (mode.kind === 'break-after') res.destroy();
    else if (mode.kind === 'error-after') {
      send({
        error: { code: 503, message: mode.message, status: 'UNAVAILABLE' },
      });
      res.end();
    } else res.end();
  }
}

/** A chunk of the one candidate: its parts, and the finishReason on the last chunk. */
function candidateChunk(
  parts: Record<string, unknown>[],
  finishReason?: string,
): Record<string, unknown> {
  return {
    candidates: [
      {
        content: { parts, role: 'model' },
        ...(finishReason ? { finishReason } : {}),
        index: 0,
      },
    ],
  };
}

/** `usageMetadata` with its total, as Google sends it. */
function usageMetadata(usage: FakeGeminiUsage): Record<string, number> {
  return {
    ...usage,
    totalTokenCount:
      usage.promptTokenCount +
      (usage.candidatesTokenCount ?? 0) +
      (usage.thoughtsTokenCount ?? 0),
  };
}

/** Google's error body: `{error: {code, message, status, details?}}`. */
function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  details?: Record<string, unknown>[],
): void {
  res
    .writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8' })
    .end(
      JSON.stringify({
        error: {
          code: status,
          message,
          status: STATUS_NAMES[status] ?? 'UNKNOWN',
          ...(details ? { details } : {}),
        },
      }),
    );
}
