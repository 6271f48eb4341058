import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * What the fake streams for one request. The bench puts it in the user message as
 * `bench:<id>:<tokens>:<delayMs>`, so concurrent requests can each ask for their own stream and the
 * fake can tell whose stream it is writing.
 */
export interface StreamSpec {
  id: string;
  tokens: number;
  delayMs: number;
}

/** What the fake did for one request, on the process-wide `performance.now()` clock. */
export interface UpstreamRecord {
  /** When the request's body had been read (the app's call reached the model). */
  receivedAt: number;
  /** When each token's SSE event had been handed to the socket, in order. */
  tokenWrittenAt: number[];
  /** The text of each token, in order (the client matches them against its received bytes). */
  tokens: string[];
  /** When the response (with usage and [DONE]) was ended. */
  endedAt?: number;
}

export function specMessage(spec: StreamSpec): string {
  return `bench:${spec.id}:${spec.tokens}:${spec.delayMs}`;
}

/** Token i is `w<i>` padded with dots to a fixed 8 characters: easy to find in the received text. */
export function tokenText(index: number): string {
  return `w${index} `.padEnd(8, '.');
}

/**
 * An OpenAI-compatible chat-completions endpoint (`POST /chat/completions`, SSE) on loopback that streams
 * `tokens` text deltas `delayMs` apart with no delay before the first, then the finish chunk, a usage chunk
 * and `[DONE]`, and records when it wrote each token.
 */
export class FakeOpenAi {
  readonly records = new Map<string, UpstreamRecord>();
  private server: Server | undefined;
  baseUrl = '';

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  /** Also drops the keep-alive connections the app's fetch keeps open, or close() would wait for them. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((done) => server.close(() => done()));
    server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const receivedAt = performance.now();
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const spec = parseSpec(body);
    if (!spec) {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'no bench spec in the prompt', type: 'invalid_request_error' } }));
      return;
    }
    const record: UpstreamRecord = { receivedAt, tokenWrittenAt: [], tokens: [] };
    this.records.set(spec.id, record);
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    res.flushHeaders();
    const send = (data: unknown) => res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    const chunk = (delta: Record<string, string>, finishReason: string | null) => ({
      id: `chatcmpl-${spec.id}`,
      object: 'chat.completion.chunk',
      created: 0,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
    for (let index = 0; index < spec.tokens; index++) {
      if (index > 0 && spec.delayMs > 0) await sleep(spec.delayMs);
      if (res.destroyed) return;
      const text = tokenText(index);
      send(chunk(index === 0 ? { role: 'assistant', content: text } : { content: text }, null));
      record.tokenWrittenAt.push(performance.now());
      record.tokens.push(text);
    }
    send(chunk({}, 'stop'));
    send({ id: `chatcmpl-${spec.id}`, object: 'chat.completion.chunk', created: 0, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 12, completion_tokens: spec.tokens, total_tokens: 12 + spec.tokens } });
    send('[DONE]');
    res.end();
    record.endedAt = performance.now();
  }
}

/** The spec in the request body (it is in the user message's text). */
function parseSpec(body: string): StreamSpec | undefined {
  const match = /bench:([A-Za-z0-9_-]+):(\d+):(\d+)/.exec(body);
  return match ? { id: match[1], tokens: Number(match[2]), delayMs: Number(match[3]) } : undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
