import { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer, readBody } from './loopback-server';

export type FakeMode =
  | { kind: 'ok'; words: string[]; holdLast?: Promise<void> }
  | { kind: 'fail-before' }
  | { kind: 'break-after'; words: string[] }
  /** An HTTP error with the provider's JSON error body (`message`), or with an HTML page (`html`). */
  | { kind: 'http-error'; status: number; message: string; html?: boolean }
  /** Some words, then the provider's mid-stream error: OpenAI `data: {"error": ...}`, Anthropic `event: error`. */
  | { kind: 'error-after'; words: string[]; message: string };

/**
 * An OpenAI-compatible (`POST /chat/completions`, SSE) and an Anthropic (`POST /messages`, SSE) model on
 * loopback, streaming as the real APIs do, counting calls and keeping the request bodies.
 */
export class FakeModelServer extends LoopbackServer {
  readonly requests: Record<string, unknown>[] = [];
  mode: FakeMode = { kind: 'ok', words: ['Hello', ' world'] };
  /** Responses whose connection the client closed before the fake finished them (an abort upstream). */
  closedEarly = 0;

  protected async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const body = JSON.parse((await readBody(req)) || '{}') as Record<
      string,
      unknown
    >;
    this.requests.push({
      path: req.url,
      authorization: req.headers.authorization,
      apiKey: req.headers['x-api-key'],
      anthropicVersion: req.headers['anthropic-version'],
      contentType: req.headers['content-type'],
      remotePort: req.socket.remotePort,
      ...body,
    });
    const anthropic = req.url?.endsWith('/messages') ?? false;
    let ended = false;
    res.on('close', () => {
      if (!ended && !res.writableFinished) this.closedEarly += 1;
    });
    const mode = this.mode;
    if (mode.kind === 'fail-before') {
      res.writeHead(500, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          error: { message: 'upstream exploded', type: 'server_error' },
        }),
      );
      return;
    }
    if (mode.kind === 'http-error') {
      if (mode.html)
        res
          .writeHead(mode.status, { 'Content-Type': 'text/html' })
          .end(`<html><body><h1>${mode.message}</h1></body></html>`);
      else {
        const error = anthropic
          ? {
              type: 'error',
              error: { type: 'api_error', message: mode.message },
            }
          : {
              error: {
                message: mode.message,
                type: 'invalid_request_error',
                param: null,
                code: null,
              },
            };
        res
          .writeHead(mode.status, { 'Content-Type': 'application/json' })
          .end(JSON.stringify(error));
      }
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
    });
    const send = (event: string | null, data: unknown) =>
      res.write(
        `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
      );
    const words = mode.words;
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
          usage: { input_tokens: 7, output_tokens: 1 },
        },
      });
      send('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      });
    }
    for (const [index, word] of words.entries()) {
      if (index === words.length - 1 && mode.kind === 'ok' && mode.holdLast)
        await mode.holdLast;
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
      await new Promise((done) => setTimeout(done, 5));
    }
    if (mode.kind === 'break-after') {
      ended = true;
      res.destroy();
      return;
    }
    if (mode.kind === 'error-after') {
      if (anthropic)
        send('error', {
          type: 'error',
          error: { type: 'overloaded_error', message: mode.message },
        });
      else
        send(null, {
          error: {
            message: mode.message,
            type: 'server_error',
            param: null,
            code: null,
          },
        });
      ended = true;
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
          prompt_tokens: 7,
          completion_tokens: words.length,
          total_tokens: 7 + words.length,
        },
      });
      send(null, '[DONE]');
    }
    ended = true;
    res.end();
  }
}
