import { createHash, createHmac, Hash, Hmac, randomUUID } from 'node:crypto';
import {
  createServer as createHttp1Server,
  IncomingMessage,
  Server as Http1Server,
  ServerResponse,
} from 'node:http';
import {
  createServer as createHttp2Server,
  Http2Server,
  Http2ServerRequest,
  Http2ServerResponse,
  ServerHttp2Session,
} from 'node:http2';
import {
  AddressInfo,
  createServer as createTcpServer,
  Server as TcpServer,
  Socket,
} from 'node:net';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';

export interface FakeBedrockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** `metadata.usage` as Bedrock reports it (`totalTokens` is added). */
export interface FakeBedrockUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export type FakeBedrockMode =
  /** The words as text deltas, then messageStop and metadata; `holdLast` delays the last word. */
  | {
      kind: 'ok';
      words: string[];
      usage?: FakeBedrockUsage;
      holdLast?: Promise<void>;
    }
  /** Some words, then one toolUse block whose input JSON comes in `inputPieces`; stop reason tool_use. */
  | {
      kind: 'tool-use';
      words: string[];
      toolUseId: string;
      name: string;
      inputPieces: string[];
      usage?: FakeBedrockUsage;
    }
  /** An error status with Bedrock's JSON error and `x-amzn-errortype` (and a Retry-After, if given). */
  | {
      kind: 'http-error';
      status: number;
      errorType: string;
      message: string;
      retryAfter?: string;
    }
  /** A 200 stream: some words, then an exception message (`:message-type` exception), then the end. */
  | {
      kind: 'exception-after';
      words: string[];
      exceptionType: string;
      message: string;
    }
  /** Some words, half of the next event's frame, then the connection is destroyed. */
  | { kind: 'cut-after'; words: string[] };

/** One request as the fake received it. */
export interface FakeBedrockRequest {
  method: string;
  path: string;
  /** The model id of `/model/<modelId>/converse-stream`, decoded. */
  modelId: string | undefined;
  /** `2.0` (h2c) or `1.1`. */
  httpVersion: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** Whether the SigV4 signature, recomputed from the request and the fake's credentials, matched. */
  signatureVerified: boolean;
}

/** The default usage of the `ok` and `tool-use` answers. */
export const FAKE_BEDROCK_USAGE: FakeBedrockUsage = {
  inputTokens: 7,
  outputTokens: 2,
  cacheReadInputTokens: 0,
  cacheWriteInputTokens: 0,
};

/** The message AWS answers a wrong signature with (its first line; the canonical request follows). */
export const INVALID_SIGNATURE_MESSAGE =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;:-]+), ?Signature=([0-9a-f]{64})$/;

type Request = Http2ServerRequest | IncomingMessage;
type Response = Http2ServerResponse | ServerResponse;
/** What both responses can do with event-stream bytes. */
type Sink = { write(chunk: Uint8Array): unknown; end(): unknown };

/** How an HTTP/2 connection with prior knowledge starts (its preface is `PRI * HTTP/2.0...`). */
const HTTP2_PREFACE_START = Buffer.from('PRI ');
type Verdict = 'verified' | 'mismatch' | 'unknown-key' | 'missing';

/**
 * Amazon Bedrock's ConverseStream on 127.0.0.1 (`POST /model/<modelId>/converse-stream`), speaking
 * cleartext HTTP/2 with prior knowledge (what the SDK sends to an `http:` endpoint) and HTTP/1.1 on the
 * same port. Each connection goes to an HTTP/2 or an HTTP/1.1 server by its first bytes: Node's
 * `allowHTTP1` works only with TLS (it picks by ALPN), a cleartext http2 server refuses HTTP/1.1.
 * It checks each request's SigV4 signature with the credentials it knows (403 InvalidSignatureException
 * or UnrecognizedClientException otherwise, as AWS answers), and answers in the AWS event-stream
 * framing, as Bedrock does.
 */
export class FakeBedrockServer {
  readonly requests: FakeBedrockRequest[] = [];
  mode: FakeBedrockMode = { kind: 'ok', words: ['Hello', ' world'] };
  /** Responses whose stream the client closed before the fake finished them (an abort upstream). */
  closedEarly = 0;
  baseUrl = '';
  private tcp!: TcpServer;
  private readonly http2: Http2Server;
  private readonly http1: Http1Server;
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly codec = new EventStreamCodec(
    (bytes) => Buffer.from(bytes).toString('utf8'),
    (text) => Buffer.from(text, 'utf8'),
  );

  constructor(
    readonly region: string,
    private readonly credentials: FakeBedrockCredentials,
  ) {
    this.http2 = createHttp2Server((req, res) => void this.handle(req, res));
    this.http2.on('session', (session: ServerHttp2Session) => {
      this.sessions.add(session);
      session.once('close', () => this.sessions.delete(session));
    });
    this.http1 = createHttp1Server((req, res) => void this.handle(req, res));
  }

  async start(): Promise<this> {
    this.tcp = createTcpServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      this.route(socket);
    });
    await new Promise<void>((done) => this.tcp.listen(0, '127.0.0.1', done));
    this.baseUrl = `http://127.0.0.1:${(this.tcp.address() as AddressInfo).port}`;
    return this;
  }

  /** Also drops the connections still open (HTTP/2 sessions, keep-alive), or close() would wait for them. */
  close(): Promise<void> {
    const closed = new Promise<void>((done) => this.tcp.close(() => done()));
    for (const session of this.sessions) session.destroy();
    for (const socket of this.sockets) socket.destroy();
    return closed;
  }

  /**
   * Hands the connection to the HTTP/2 or the HTTP/1.1 server by its first bytes, put back in front of
   * the socket's buffer (both servers read what is already buffered first). Read in paused mode: peeked
   * from a `data` event in flowing mode, the preface never reached the http2 session whole (Node 20).
   */
  private route(socket: Socket): void {
    const sniff = () => {
      const head = socket.read(HTTP2_PREFACE_START.length) as Buffer | null;
      if (head === null) return; // fewer bytes yet: `readable` comes again
      socket.off('readable', sniff);
      socket.unshift(head);
      const server = head.equals(HTTP2_PREFACE_START) ? this.http2 : this.http1;
      server.emit('connection', socket);
    };
    socket.on('readable', sniff);
  }

  private async handle(req: Request, res: Response): Promise<void> {
    const raw = await readBytes(req);
    const path = req.url ?? '';
    const match = /^\/model\/([^/?]+)\/converse-stream$/.exec(path);
    const verdict = await this.verify(req, path, raw);
    this.requests.push({
      method: req.method ?? '',
      path,
      modelId: match ? decodeURIComponent(match[1]) : undefined,
      httpVersion: req.httpVersion,
      headers: headersOf(req),
      body: parseBody(raw),
      signatureVerified: verdict === 'verified',
    });
    if (verdict === 'unknown-key')
      return this.error(res, 403, 'UnrecognizedClientException', {
        message: 'The security token included in the request is invalid.',
      });
    if (verdict !== 'verified')
      return this.error(res, 403, 'InvalidSignatureException', {
        message: `${INVALID_SIGNATURE_MESSAGE}\n\nThe Canonical String for this request should have been\n'...'`,
      });
    if (!match || req.method !== 'POST')
      return this.error(res, 404, 'UnknownOperationException', {});
    const mode = this.mode;
    if (mode.kind === 'http-error')
      return this.error(
        res,
        mode.status,
        mode.errorType,
        { message: mode.message },
        mode.retryAfter,
      );
    await this.answer(res, mode);
  }

  /** An AWS JSON error: the type in `x-amzn-errortype` (with the service's namespace, as AWS sends it). */
  private error(
    res: Response,
    status: number,
    errorType: string,
    body: Record<string, unknown>,
    retryAfter?: string,
  ): void {
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': randomUUID(),
      ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
    });
    res.end(JSON.stringify(body));
  }

  private async answer(
    res: Response,
    mode: Exclude<FakeBedrockMode, { kind: 'http-error' }>,
  ): Promise<void> {
    const sink: Sink = res;
    let ended = false;
    res.on('close', () => {
      if (!ended) this.closedEarly += 1;
    });
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-requestid': randomUUID(),
    });
    const send = (type: string, payload: Record<string, unknown>) => {
      sink.write(this.event(type, payload));
    };
    send('messageStart', { role: 'assistant' });
    for (const [index, word] of mode.words.entries()) {
      if (index === mode.words.length - 1 && mode.kind === 'ok')
        await mode.holdLast;
      send('contentBlockDelta', {
        contentBlockIndex: 0,
        delta: { text: word },
      });
      await new Promise((done) => setTimeout(done, 5));
    }
    if (mode.kind === 'cut-after') {
      const next = this.event('contentBlockDelta', {
        contentBlockIndex: 0,
        delta: { text: 'never' },
      });
      sink.write(next.subarray(0, Math.floor(next.length / 2)));
      await new Promise((done) => setTimeout(done, 20));
      ended = true;
      destroyConnection(res);
      return;
    }
    if (mode.kind === 'exception-after') {
      sink.write(this.exception(mode.exceptionType, mode.message));
      ended = true;
      res.end();
      return;
    }
    this.complete(send, mode);
    ended = true;
    res.end();
  }

  /** After the words: the text block's stop, the toolUse block, messageStop and metadata (the usage). */
  private complete(
    send: (type: string, payload: Record<string, unknown>) => void,
    mode: Extract<FakeBedrockMode, { kind: 'ok' | 'tool-use' }>,
  ): void {
    if (mode.words.length > 0)
      send('contentBlockStop', { contentBlockIndex: 0 });
    if (mode.kind === 'tool-use') {
      const index = mode.words.length > 0 ? 1 : 0;
      send('contentBlockStart', {
        contentBlockIndex: index,
        start: { toolUse: { toolUseId: mode.toolUseId, name: mode.name } },
      });
      for (const input of mode.inputPieces)
        send('contentBlockDelta', {
          contentBlockIndex: index,
          delta: { toolUse: { input } },
        });
      send('contentBlockStop', { contentBlockIndex: index });
    }
    send('messageStop', {
      stopReason: mode.kind === 'tool-use' ? 'tool_use' : 'end_turn',
    });
    const usage = mode.usage ?? FAKE_BEDROCK_USAGE;
    const totalTokens =
      usage.inputTokens +
      usage.outputTokens +
      (usage.cacheReadInputTokens ?? 0) +
      (usage.cacheWriteInputTokens ?? 0);
    send('metadata', {
      usage: { ...usage, totalTokens },
      metrics: { latencyMs: 42 },
    });
  }

  /** One event message; `p` is the padding Bedrock adds to every event (clients ignore it). */
  private event(type: string, payload: Record<string, unknown>): Uint8Array {
    return this.codec.encode({
      headers: {
        ':event-type': { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'event' },
      },
      body: Buffer.from(JSON.stringify({ ...payload, p: 'abcdefgh' })),
    });
  }

  private exception(type: string, message: string): Uint8Array {
    return this.codec.encode({
      headers: {
        ':exception-type': { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'exception' },
      },
      body: Buffer.from(JSON.stringify({ message })),
    });
  }

  /**
   * Recomputes the request's signature with SignatureV4 (service `bedrock`, the fake's region and
   * credentials) over the headers the client says it signed, the method, the path and the body, at the
   * client's `x-amz-date`, and compares it with the `authorization` header.
   */
  private async verify(
    req: Request,
    path: string,
    body: Buffer,
  ): Promise<Verdict> {
    const parsed = AUTHORIZATION.exec(headerOf(req, 'authorization') ?? '');
    if (!parsed) return 'missing';
    const [, accessKeyId, , region, service, signedHeaders] = parsed;
    if (accessKeyId !== this.credentials.accessKeyId) return 'unknown-key';
    const signingDate = amzDate(headerOf(req, 'x-amz-date'));
    if (region !== this.region || service !== 'bedrock' || !signingDate)
      return 'mismatch';
    const headers: Record<string, string> = {};
    for (const name of signedHeaders.split(';'))
      headers[name] =
        (name === 'host' ? hostOf(req) : headerOf(req, name)) ?? '';
    const [pathname, search = ''] = path.split('?');
    const signer = new SignatureV4({
      service: 'bedrock',
      region: this.region,
      credentials: this.credentials,
      sha256: NodeSha256,
    });
    const signed = await signer.sign(
      {
        method: req.method ?? '',
        protocol: 'http:',
        hostname: headers.host ?? '',
        path: pathname,
        query: Object.fromEntries(new URLSearchParams(search)),
        headers,
        body,
      },
      { signingDate },
    );
    return signed.headers.authorization === headerOf(req, 'authorization')
      ? 'verified'
      : 'mismatch';
  }
}

/** SHA-256 and HMAC-SHA-256 from node:crypto, in the shape SignatureV4 takes. */
class NodeSha256 {
  private readonly hash: Hash | Hmac;

  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash =
      secret === undefined
        ? createHash('sha256')
        : createHmac('sha256', bytesOf(secret));
  }

  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytesOf(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

function bytesOf(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data))
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** `20260102T030405Z` → its Date. */
function amzDate(value: string | undefined): Date | undefined {
  const parts = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(
    value ?? '',
  );
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1).map(Number);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second));
}

function headerOf(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** The `host` the client signed: HTTP/1.1's header, HTTP/2's `:authority` when it sent no `host`. */
function hostOf(req: Request): string | undefined {
  return headerOf(req, 'host') ?? headerOf(req, ':authority');
}

function headersOf(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of Object.keys(req.headers)) {
    const value = headerOf(req, name);
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

function readBytes(req: Request): Promise<Buffer> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => done(Buffer.concat(chunks)));
    req.on('error', fail);
  });
}

function parseBody(raw: Buffer): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw.toString('utf8') || '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** Cuts the TCP connection under the response: the HTTP/2 session, or the HTTP/1.1 socket. */
function destroyConnection(res: Response): void {
  if (res instanceof Http2ServerResponse) res.stream.session?.destroy();
  else res.socket?.destroy();
}
