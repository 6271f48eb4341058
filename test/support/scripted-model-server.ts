import { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer, readBody } from './loopback-server';

/** The tokens a successful answer reports (OpenAI `usage`, Anthropic `message_start`/`message_delta`). */
export interface ScriptedUsage {
  inputTokens: number;
  /** Of `inputTokens`, those read from the prompt cache (OpenAI `prompt_tokens_details.cached_tokens`). */
  cachedInputTokens?: number;
}

/** What the server answers one request with. */
export type ScriptedOutcome =
  /**
   * A complete streamed answer of these words (usage: 7 input tokens unless given, one output token a
   * word); `holdLast`: the last word waits for it.
   */
  | {
      kind: 'ok';
      words: string[];
      usage?: ScriptedUsage;
      holdLast?: Promise<void>;
    }
  /** An HTTP error with the provider's JSON error body, and headers such as Retry-After. */
  | {
      kind: 'http';
      status: number;
      headers?: Record<string, string>;
      message?: string;
    }
  /** A 200 stream of these words, then the connection is cut (no end of the answer, no usage). */
  | { kind: 'break-after'; words: string[] }
  /** These words, then the provider's error event (OpenAI `data: {"error"}`, Anthropic `event: error`). */
  | { kind: 'error-after'; words: string[]; message?: string }
  /**
   * The 200 head (and Anthropic's `message_start`), then silence for `ms`, then these words; a client
   * that gives up meanwhile closes the connection and gets nothing more.
   */
  | { kind: 'stall'; ms: number; words: string[] }
  /**
   * Nothing at all (not even the status line) for `ms`, then `then`; a client that gives up meanwhile
   * closes the connection and gets nothing.
   */
  | { kind: 'hang'; ms: number; then: ScriptedOutcome };

/** One request as the server received it. */
export interface RecordedCall {
  path: string;
  /** The key the request carried: the OpenAI Bearer token or the Anthropic `x-api-key`. */
  key: string | undefined;
  authorization: string | undefined;
  apiKey: string | undefined;
  /** `model` of the request body (the catalog model's upstreamModel). */
  model: unknown;
  /** The text of the request's last user message (tells the runs of a test apart). */
  lastUserText: string;
  body: Record<string, unknown>;
  /** When the request arrived (Date.now()). */
  at: number;
  /** What the server answered (decided when the request arrived). */
  outcome: ScriptedOutcome;
  /** The client closed the connection before the response was complete. */
  abandoned: boolean;
}

const DEFAULT_INPUT_TOKENS = 7;

/**
 * An OpenAI-compatible (`POST …/chat/completions`) and Anthropic (`POST …/messages`) model on loopback
 * whose answer is scripted per request: `decide` (when set and answering), else the next outcome queued
 * with `script()`, else `otherwise`. Every request is recorded with its key and body.
 */
export class ScriptedModelServer extends LoopbackServer {
  readonly calls: RecordedCall[] = [];
  /** The answer when nothing is queued and `decide` has none. */
  otherwise: ScriptedOutcome = { kind: 'ok', words: ['Hello', ' world'] };
  /** Decides a request's outcome from the request itself; undefined: the queue decides. */
  decide: ((call: RecordedCall) => ScriptedOutcome | undefined) | undefined;
  private readonly queue: ScriptedOutcome[] = [];

  /** Queues outcomes for the next requests, in order. */
  script(...outcomes: ScriptedOutcome[]): this {
    this.queue.push(...outcomes);
    return this;
  }

  /** Forgets the calls, the queue and `decide`; `otherwise` becomes the given outcome. */
  reset(
    otherwise: ScriptedOutcome = { kind: 'ok', words: ['Hello', ' world'] },
  ): void {
    this.calls.length = 0;
    this.queue.length = 0;
    this.decide = undefined;
    this.otherwise = otherwise;
  }

  /** The outcomes still queued (none once every scripted request came). */
  get pending(): number {
    return this.queue.length;
  }

  protected async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const text = await readBody(req);
    const body = parseObject(text);
    const authorization = header(req, 'authorization');
    const apiKey = header(req, 'x-api-key');
    const call: RecordedCall = {
      path: req.url ?? '',
      key: apiKey ?? authorization?.replace(/^Bearer /, ''),
      authorization,
      apiKey,
      model: body.model,
      lastUserText: lastUserText(body),
      body,
      at: Date.now(),
      outcome: this.otherwise,
      abandoned: false,
    };
    this.calls.push(call);
    call.outcome = this.decide?.(call) ?? this.queue.shift() ?? this.otherwise;
    let closed = false;
    const whenClosed = new Promise<void>((done) =>
      res.on('close', () => {
        closed = true;
        if (!res.writableFinished) call.abandoned = true;
        done();
      }),
    );
    /** Waits `ms` or until the client closes the connection; true when it is still open. */
    const wait = async (ms: number): Promise<boolean> => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        whenClosed,
        new Promise<void>((done) => (timer = setTimeout(done, ms))),
      ]);
      clearTimeout(timer);
      return !closed;
    };
    const anthropic = call.path.endsWith('/messages');
    let outcome = call.outcome;
    while (outcome.kind === 'hang') {
      if (!(await wait(outcome.ms))) return;
      outcome = outcome.then;
    }
    if (outcome.kind === 'http') {
      res
        .writeHead(outcome.status, {
          'Content-Type': 'application/json',
          ...outcome.headers,
        })
        .end(JSON.stringify(errorBody(anthropic, outcome.message)));
      return;
    }
    await stream(res, anthropic, outcome, wait);
  }
}

/**
 * Streams `words` as the provider does: `break-after` cuts the connection after them, `error-after` sends
 * the provider's error event, `stall` is silent after the head. `wait` answers false once the client left.
 */
async function stream(
  res: ServerResponse,
  anthropic: boolean,
  outcome: Exclude<ScriptedOutcome, { kind: 'http' | 'hang' }>,
  wait: (ms: number) => Promise<boolean>,
): Promise<void> {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  const send = (event: string | null, data: unknown) =>
    res.write(
      `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
    );
  const { words } = outcome;
  const usage =
    outcome.kind === 'ok' && outcome.usage
      ? outcome.usage
      : { inputTokens: DEFAULT_INPUT_TOKENS };
  if (anthropic) {
    send('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.inputTokens, output_tokens: 1 },
      },
    });
    send('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
  }
  if (outcome.kind === 'stall' && !(await wait(outcome.ms))) return;
  for (const [index, word] of words.entries()) {
    if (outcome.kind === 'ok' && outcome.holdLast && index === words.length - 1)
      await outcome.holdLast;
    if (res.destroyed) return;
    if (anthropic)
      send('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: word },
      });
    else
      send(null, {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [
          {
            index: 0,
            delta: { role: 'assistant', content: word },
            finish_reason: null,
          },
        ],
      });
    if (!(await wait(5))) return;
  }
  if (outcome.kind === 'break-after') {
    res.destroy();
    return;
  }
  if (outcome.kind === 'error-after') {
    const message = outcome.message ?? 'scripted stream error';
    if (anthropic)
      send('error', {
        type: 'error',
        error: { type: 'overloaded_error', message },
      });
    else
      send(null, {
        error: { message, type: 'server_error', param: null, code: null },
      });
    res.end();
    return;
  }
  if (anthropic) {
    send('content_block_stop', { type: 'content_block_stop', index: 0 });
    send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: words.length },
    });
    send('message_stop', { type: 'message_stop' });
  } else {
    send(null, {
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
    });
    send(null, {
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [],
      usage: {
        prompt_tokens: usage.inputTokens,
        completion_tokens: words.length,
        total_tokens: usage.inputTokens + words.length,
        ...(usage.cachedInputTokens !== undefined
          ? {
              prompt_tokens_details: {
                cached_tokens: usage.cachedInputTokens,
              },
            }
          : {}),
      },
    });
    send(null, '[DONE]');
  }
  res.end();
}

/** The provider's JSON error body: Anthropic's `{type: 'error', error}` or OpenAI's `{error}`. */
function errorBody(anthropic: boolean, message = 'scripted failure'): object {
  return anthropic
    ? { type: 'error', error: { type: 'api_error', message } }
    : {
        error: { message, type: 'server_error', param: null, code: null },
      };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The last user message's text: a string, or (Anthropic) the text blocks of its content. */
function lastUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message: unknown = messages[index];
    if (!isRecord(message) || message.role !== 'user') continue;
    const content = message.content;
    if (typeof content === 'string') return content;
    if (Array.isArray(content))
      return content
        .map((block: unknown) =>
          isRecord(block) && typeof block.text === 'string' ? block.text : '',
        )
        .join('');
    return '';
  }
  return '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
