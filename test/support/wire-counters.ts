import { createServer, connect, Server, Socket } from 'node:net';
import { AddressInfo } from 'node:net';

/** What a client sent, one entry per request that waits for an answer (a round trip). */
export interface WireRequest {
  at: number;
  text: string;
}

type Parser = (chunk: Buffer) => void;

/**
 * A TCP proxy on loopback between the service and a real server that reads the client's side of the wire
 * protocol and records every request that makes the client wait for an answer. It counts what the service
 * really sends, whatever library sends it.
 */
export class CountingProxy {
  readonly requests: WireRequest[] = [];
  private server!: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly target: { host: string; port: number },
    private readonly parserFor: (record: (text: string) => void) => Parser,
  ) {}

  /** PostgreSQL: every Sync (end of an extended-protocol query) and every simple Query is a round trip. */
  static postgres(target: {
    host: string;
    port: number;
  }): Promise<CountingProxy> {
    return new CountingProxy(target, postgresParser).start();
  }

  /** Redis: every RESP command is a round trip. */
  static redis(target: { host: string; port: number }): Promise<CountingProxy> {
    return new CountingProxy(target, redisParser).start();
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The requests recorded from `since` (Date.now()) on. */
  since(since: number): WireRequest[] {
    return this.requests.filter((request) => request.at >= since);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private async start(): Promise<this> {
    this.server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      this.sockets.add(client).add(upstream);
      const parse = this.parserFor((text) =>
        this.requests.push({ at: Date.now(), text }),
      );
      client.on('data', (chunk: Buffer) => {
        parse(chunk);
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      const closeBoth = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('close', closeBoth).on('error', closeBoth);
      upstream.on('close', closeBoth).on('error', closeBoth);
    });
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    return this;
  }
}

/** Frontend messages: an untyped startup (or SSL request) first, then `type, int32 length, payload`. */
function postgresParser(record: (text: string) => void): Parser {
  let pending = Buffer.alloc(0);
  let started = false;
  let lastQuery = '';
  /** Prepared statements of this connection by name ('' is the unnamed one): a Bind names what runs. */
  const statements = new Map<string, string>();
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (!started) {
        if (pending.length < 8) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        const code = pending.readInt32BE(4);
        // 80877103 asks for SSL (answered 'N', then the real startup follows); anything else is the startup.
        if (code !== 80877103) started = true;
        pending = pending.subarray(length);
        continue;
      }
      if (pending.length < 5) return;
      const type = String.fromCharCode(pending[0]);
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      const payload = pending.subarray(5, 1 + length);
      pending = pending.subarray(1 + length);
      if (type === 'P') {
        // Parse: statement name \0 query \0 ...
        const nameEnd = payload.indexOf(0);
        statements.set(
          payload.subarray(0, nameEnd).toString('utf8'),
          payload
            .subarray(nameEnd + 1, payload.indexOf(0, nameEnd + 1))
            .toString('utf8'),
        );
      } else if (type === 'B') {
        // Bind: portal name \0 statement name \0 ...
        const portalEnd = payload.indexOf(0);
        lastQuery =
          statements.get(
            payload
              .subarray(portalEnd + 1, payload.indexOf(0, portalEnd + 1))
              .toString('utf8'),
          ) ?? '';
      } else if (type === 'S') {
        record(lastQuery);
      } else if (type === 'Q') {
        record(payload.subarray(0, payload.indexOf(0)).toString('utf8'));
      }
    }
  };
}

/** RESP: a command is an array of bulk strings (`*n`, then n × `$len` + bytes); inline commands are lines. */
function redisParser(record: (text: string) => void): Parser {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      const parsed = parseCommand(pending);
      if (!parsed) return;
      record(parsed.words.join(' ').slice(0, 200));
      pending = pending.subarray(parsed.length);
    }
  };
}

function parseCommand(
  buffer: Buffer,
): { words: string[]; length: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n');
  if (lineEnd === -1) return undefined;
  if (buffer[0] !== 0x2a)
    return {
      words: buffer.subarray(0, lineEnd).toString('utf8').split(' '),
      length: lineEnd + 2,
    };
  const count = Number(buffer.subarray(1, lineEnd).toString('utf8'));
  const words: string[] = [];
  let offset = lineEnd + 2;
  for (let index = 0; index < count; index += 1) {
    const headerEnd = buffer.indexOf('\r\n', offset);
    if (headerEnd === -1) return undefined;
    const size = Number(
      buffer.subarray(offset + 1, headerEnd).toString('utf8'),
    );
    const start = headerEnd + 2;
    if (buffer.length < start + size + 2) return undefined;
    words.push(buffer.subarray(start, start + size).toString('utf8'));
    offset = start + size + 2;
  }
  return { words, length: offset };
}
