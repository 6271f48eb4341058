import { EventEmitter } from 'node:events';
import { Response } from 'express';
import { AppLogger } from '../../common/logging/app-logger';
import { sendJsonAttachment } from './json-attachment';
import { PagedArray } from './json-stream.writer';

/** The parts of an Express response the download uses: headers, writes, close and destroy. */
class FakeResponse extends EventEmitter {
  readonly headers = new Map<string, string>([['cache-control', 'private']]);
  readonly chunks: string[] = [];
  headersSent = false;
  writableFinished = false;
  destroyed = false;
  statusCode = 0;

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  set(headers: Record<string, string>): this {
    for (const [name, value] of Object.entries(headers))
      this.setHeader(name, value);
    return this;
  }

  getHeader(name: string): string | undefined {
    return this.headers.get(name.toLowerCase());
  }

  setHeader(name: string, value: string): void {
    this.headers.set(name.toLowerCase(), value);
  }

  removeHeader(name: string): void {
    this.headers.delete(name.toLowerCase());
  }

  write(chunk: string): boolean {
    this.headersSent = true;
    this.chunks.push(chunk);
    return true;
  }

  end(): void {
    this.writableFinished = true;
  }

  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

/** A PagedArray of a fake's pages, which may come from a plain generator (a fake that never waits). */
function pagedArray<Item>(
  pages: () => Iterable<readonly Item[]> | AsyncIterable<readonly Item[]>,
): PagedArray<Item> {
  return new PagedArray(async function* () {
    for await (const page of pages()) yield page;
  });
}

function fakeLog() {
  const log = { info: jest.fn(), error: jest.fn() };
  return { log, appLogger: log as unknown as AppLogger };
}

const failingAfter = (pages: number, onPage: () => void = () => undefined) =>
  pagedArray(function* () {
    for (let page = 1; ; page += 1) {
      if (page > pages) throw new Error('database gone');
      onPage();
      yield [{ page }];
    }
  });

describe('sendJsonAttachment', () => {
  it('sends the document with the download headers and ends it', async () => {
    const res = new FakeResponse();
    const { log, appLogger } = fakeLog();
    await sendJsonAttachment(
      res as unknown as Response,
      'account-export-2026-01-02.json',
      { a: [1] },
      appLogger,
    );
    expect(res.statusCode).toBe(200);
    expect(Object.fromEntries(res.headers)).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'content-disposition':
        'attachment; filename="account-export-2026-01-02.json"',
      'cache-control': 'no-store',
    });
    expect(JSON.parse(res.chunks.join(''))).toEqual({ a: [1] });
    expect(res.writableFinished).toBe(true);
    expect(log.error).not.toHaveBeenCalled();
  });

  it('rethrows a failure before the first byte, with the headers as they were, for the problem+json filter', async () => {
    const res = new FakeResponse();
    const { log, appLogger } = fakeLog();
    // A BigInt is not JSON: the writer fails on it before anything is written.
    await expect(
      sendJsonAttachment(
        res as unknown as Response,
        'x.json',
        { bad: 1n },
        appLogger,
      ),
    ).rejects.toThrow(TypeError);
    expect(res.chunks).toEqual([]);
    expect(Object.fromEntries(res.headers)).toEqual({
      'cache-control': 'private',
    });
    expect(res.destroyed).toBe(false);
    expect(log.error).not.toHaveBeenCalled();
  });

  it('destroys the connection and logs when a read fails after the first byte, never ending the document', async () => {
    const res = new FakeResponse();
    const { log, appLogger } = fakeLog();
    await sendJsonAttachment(
      res as unknown as Response,
      'x.json',
      { list: failingAfter(2) },
      appLogger,
    );
    expect(res.chunks.join('')).toContain('{"page":2}');
    expect(res.destroyed).toBe(true);
    expect(res.writableFinished).toBe(false);
    expect(log.error).toHaveBeenCalledWith(
      expect.objectContaining<{ err: unknown }>({
        err: expect.objectContaining({ message: 'database gone' }),
      }),
      expect.any(String),
    );
  });

  it('stops reading and logs no error when the client leaves', async () => {
    const res = new FakeResponse();
    const { log, appLogger } = fakeLog();
    let pages = 0;
    // Bounded, so a writer that kept reading fails here rather than running forever.
    const list = failingAfter(20, () => {
      pages += 1;
      if (pages === 3) res.emit('close'); // the client goes away while page 3 is read
    });
    await sendJsonAttachment(
      res as unknown as Response,
      'x.json',
      { list },
      appLogger,
    );
    expect(pages).toBe(3);
    expect(res.destroyed).toBe(true);
    expect(log.error).not.toHaveBeenCalled();
    expect(log.info).toHaveBeenCalledTimes(1);
  });
});
