/**
 * Mock OpenAI-compatible provider, its own process. `POST /v1/chat/completions` streams SSE exactly like
 * OpenAI's chat completions: content chunks, a finish chunk, a usage chunk when
 * `stream_options.include_usage` is set, then `data: [DONE]`. The stream's shape comes from the upstream
 * model name (`bench-50x100` = 50 tokens 100 ms apart, the first at once; see support/tokens.ts).
 *
 * All streams are driven by ONE timer over a min-heap of due tokens (not a timer per stream), so thousands of
 * concurrent streams cost little. `GET /stats` reports requests received, streams active/completed/aborted.
 *
 * Env: MOCK_PORT (default 0 = any); prints/sends `{type:'ready', ports:{mock}}` when listening.
 */
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isObject, ReadyMessage } from '../support/protocol';
import { shapeOf, tokenText } from '../support/tokens';

interface ActiveStream {
  res: ServerResponse;
  id: string;
  model: string;
  tokens: number;
  intervalMs: number;
  startedAt: number;
  next: number;
  includeUsage: boolean;
  promptTokens: number;
  due: number;
}

const stats = { requests: 0, active: 0, completed: 0, aborted: 0, rejected: 0 };
let sequence = 0;

/** Min-heap of streams by the due time of their next token. */
const heap: ActiveStream[] = [];
let timer: NodeJS.Timeout | undefined;
let timerDue = Number.POSITIVE_INFINITY;

function push(stream: ActiveStream): void {
  heap.push(stream);
  let index = heap.length - 1;
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (heap[parent].due <= heap[index].due) break;
    [heap[parent], heap[index]] = [heap[index], heap[parent]];
    index = parent;
  }
  arm();
}

function pop(): ActiveStream | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length > 0 && last) {
    heap[0] = last;
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && heap[left].due < heap[smallest].due)
        smallest = left;
      if (right < heap.length && heap[right].due < heap[smallest].due)
        smallest = right;
      if (smallest === index) break;
      [heap[smallest], heap[index]] = [heap[index], heap[smallest]];
      index = smallest;
    }
  }
  return top;
}

/** Keeps the single timer set for the earliest due token. */
function arm(): void {
  if (heap.length === 0) return;
  const due = heap[0].due;
  if (timer && due >= timerDue) return;
  if (timer) clearTimeout(timer);
  timerDue = due;
  timer = setTimeout(tick, Math.max(0, due - performance.now()));
}

function tick(): void {
  timer = undefined;
  timerDue = Number.POSITIVE_INFINITY;
  // Everything due within the next millisecond goes out in this turn.
  const horizon = performance.now() + 1;
  while (heap.length > 0 && heap[0].due <= horizon) {
    const stream = pop();
    if (stream) advance(stream);
  }
  arm();
}

function chunk(
  stream: ActiveStream,
  delta: string,
  finishReason: string | null,
): string {
  return `data: {"id":"${stream.id}","object":"chat.completion.chunk","created":${Math.floor(stream.startedAt / 1000)},"model":"${stream.model}","system_fingerprint":null,"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finishReason === null ? 'null' : `"${finishReason}"`}}]}\n\n`;
}

/** Writes the tokens now due (and the end after the last); reschedules the stream otherwise. */
function advance(stream: ActiveStream): void {
  const { res } = stream;
  if (res.destroyed || res.writableEnded) return;
  let out = '';
  do {
    const index = stream.next;
    const delta =
      index === 0
        ? `{"role":"assistant","content":"${tokenText(index)}"}`
        : `{"content":"${tokenText(index)}"}`;
    out += chunk(stream, delta, null);
    stream.next += 1;
  } while (stream.intervalMs === 0 && stream.next < stream.tokens);
  if (stream.next >= stream.tokens) {
    out += chunk(stream, '{}', 'stop');
    if (stream.includeUsage) {
      const total = stream.promptTokens + stream.tokens;
      out += `data: {"id":"${stream.id}","object":"chat.completion.chunk","created":${Math.floor(stream.startedAt / 1000)},"model":"${stream.model}","choices":[],"usage":{"prompt_tokens":${stream.promptTokens},"completion_tokens":${stream.tokens},"total_tokens":${total}}}\n\n`;
    }
    out += 'data: [DONE]\n\n';
    res.end(out);
    return;
  }
  res.write(out);
  stream.due = stream.startedAt + stream.next * stream.intervalMs;
  push(stream);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function promptTokensOf(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let chars = 0;
  for (const message of messages) {
    if (isObject(message) && typeof message.content === 'string')
      chars += message.content.length;
  }
  return Math.ceil(chars / 4) + 4 * messages.length;
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method === 'GET' && req.url === '/stats') {
    sendJson(res, 200, stats);
    return;
  }
  if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
    sendJson(res, 404, {
      error: {
        message: `no route ${req.method} ${req.url}`,
        type: 'invalid_request_error',
      },
    });
    return;
  }
  stats.requests += 1;
  let body: unknown;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    stats.rejected += 1;
    sendJson(res, 400, {
      error: { message: 'body is not JSON', type: 'invalid_request_error' },
    });
    return;
  }
  const model =
    isObject(body) && typeof body.model === 'string' ? body.model : '';
  const shape = shapeOf(model);
  if (!isObject(body) || !shape || body.stream !== true) {
    stats.rejected += 1;
    sendJson(res, 404, {
      error: {
        message: `The model '${model}' does not exist (or stream is not true)`,
        type: 'invalid_request_error',
        code: 'model_not_found',
      },
    });
    return;
  }
  sequence += 1;
  const streamOptions = body.stream_options;
  const stream: ActiveStream = {
    res,
    id: `chatcmpl-bench${sequence}`,
    model,
    tokens: shape.tokens,
    intervalMs: shape.intervalMs,
    startedAt: performance.now(),
    next: 0,
    includeUsage:
      isObject(streamOptions) && streamOptions.include_usage === true,
    promptTokens: promptTokensOf(body.messages),
    due: 0,
  };
  stats.active += 1;
  res.on('close', () => {
    stats.active -= 1;
    if (res.writableFinished) stats.completed += 1;
    else stats.aborted += 1;
  });
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  if (shape.tokens === 0) {
    res.end('data: [DONE]\n\n');
    return;
  }
  advance(stream);
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    if (!res.headersSent)
      sendJson(res, 500, {
        error: { message: String(error), type: 'server_error' },
      });
    else res.destroy();
  });
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 70_000;
// A deep accept queue: the mock must never be the reason a connection waits.
server.listen(Number(process.env.MOCK_PORT ?? 0), '127.0.0.1', 4096, () => {
  const ready: ReadyMessage = {
    type: 'ready',
    ports: { mock: (server.address() as AddressInfo).port },
  };
  if (process.send) process.send(ready);
  else process.stdout.write(`${JSON.stringify(ready)}\n`);
});

// Forked by the orchestrator: go away with it.
process.on('disconnect', () => process.exit(0));
