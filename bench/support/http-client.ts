import { Agent, IncomingHttpHeaders, request } from 'node:http';
import { performance } from 'node:perf_hooks';

/** One response, every body piece timestamped on the process-wide `performance.now()` clock. */
export interface TimedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** When the request was handed to the socket layer (req.end). */
  sentAt: number;
  /** When the status line and headers had arrived. */
  headersAt: number;
  /** Each body piece as the client's 'data' event delivered it. */
  chunks: { text: string; at: number }[];
  /** When the body had ended (or the connection closed). */
  endedAt: number;
  body: string;
  /** False when the connection ended without the final chunk (an answer that broke off). */
  complete: boolean;
}

/** POSTs JSON with node's http module and records each received body piece with its arrival time. */
export function postJson(baseUrl: string, path: string, body: unknown, options: { agent: Agent; cookie?: string }): Promise<TimedResponse> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) };
    if (options.cookie) headers.Cookie = options.cookie;
    const req = request(`${baseUrl}${path}`, { method: 'POST', headers, agent: options.agent });
    let sentAt = 0;
    req.on('error', reject);
    req.on('response', (res) => {
      const headersAt = performance.now();
      const chunks: { text: string; at: number }[] = [];
      let settled = false;
      res.setEncoding('utf8');
      res.on('data', (text: string) => chunks.push({ text, at: performance.now() }));
      const finish = () => {
        if (settled) return;
        settled = true;
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          sentAt,
          headersAt,
          chunks,
          endedAt: performance.now(),
          body: chunks.map((chunk) => chunk.text).join(''),
          complete: res.complete,
        });
      };
      res.on('end', finish);
      res.on('error', finish);
      res.on('close', finish);
    });
    sentAt = performance.now();
    req.end(payload);
  });
}

/** The `name=value` part of a Set-Cookie header, for the next request's Cookie header. */
export function cookieFrom(headers: IncomingHttpHeaders, name: string): string {
  const cookie = (headers['set-cookie'] ?? []).find((value) => value.startsWith(`${name}=`));
  if (!cookie) throw new Error(`no ${name} cookie in the response`);
  return cookie.split(';')[0];
}
