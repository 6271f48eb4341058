import {
  createServer,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import { AddressInfo } from 'node:net';

/** Base of the fake upstream servers: an HTTP server on 127.0.0.1 with a random port. */
export abstract class LoopbackServer {
  private server!: Server;
  baseUrl = '';

  protected abstract handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void>;

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Also drops the keep-alive connections the service's fetch keeps open, or close() would wait for them. */
  close(): Promise<void> {
    const closed = new Promise<void>((done) => this.server.close(() => done()));
    this.server.closeAllConnections();
    return closed;
  }
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => done(body));
  });
}
