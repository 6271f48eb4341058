import { request as httpRequest, IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import { TestApp } from './test-app';

export interface StreamedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Each piece as it arrived, with the time it arrived. */
  chunks: { text: string; at: number }[];
  body: string;
  /** False when the connection ended without the final chunk (an answer that broke off). */
  complete: boolean;
}

/** The base URL of a test app, listening on a loopback port (supertest buffers bodies; streams need a socket). */
export async function listen(t: TestApp): Promise<string> {
  const server = t.app.getHttpServer();
  if (!server.listening) await t.app.listen(0, '127.0.0.1');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export interface ChatCall {
  response: Promise<StreamedResponse>;
  /** Resolves with the first piece of body (or '' when the response has none). */
  firstChunk: Promise<string>;
  /** Closes the connection from the client side. */
  abort: () => void;
}

/** POSTs JSON and records the streamed answer piece by piece. */
export function post(
  baseUrl: string,
  path: string,
  cookie: string,
  body: unknown,
  headers: Record<string, string> = {},
): ChatCall {
  let abort = () => undefined as void;
  let resolveFirst!: (text: string) => void;
  const firstChunk = new Promise<string>((resolve) => (resolveFirst = resolve));
  const response = new Promise<StreamedResponse>((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(`${baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(payload),
        Cookie: cookie,
        Connection: 'close',
        ...headers,
      },
    });
    abort = () => req.destroy();
    req.on('error', (error) => {
      resolveFirst('');
      reject(error);
    });
    req.on('response', (res) => {
      const chunks: { text: string; at: number }[] = [];
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        if (chunks.length === 0) resolveFirst(text);
        chunks.push({ text, at: Date.now() });
      });
      const finish = () => {
        resolveFirst('');
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          chunks,
          body: chunks.map((chunk) => chunk.text).join(''),
          complete: res.complete,
        });
      };
      res.on('end', finish);
      res.on('error', finish);
      res.on('aborted', finish);
      res.on('close', finish);
    });
    req.end(payload);
  });
  return { response, firstChunk, abort: () => abort() };
}

export function chat(baseUrl: string, cookie: string, body: unknown): ChatCall {
  return post(baseUrl, '/v1/chat', cookie, body);
}

/** One server-sent event as received: its name and its parsed JSON data. */
export interface ReceivedEvent {
  event: string;
  data: Record<string, unknown>;
}

/** The events of a text/event-stream body, in order. */
export function parseEvents(body: string): ReceivedEvent[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event =
        lines
          .find((line) => line.startsWith('event: '))
          ?.slice('event: '.length) ?? 'message';
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}
