/**
 * An array whose items are not in memory: its pages are read one at a time, only once the writer reaches it.
 * `pages` is called at most once per write, so a nested array (a conversation's messages) starts reading late.
 */
export class PagedArray<Item> {
  constructor(readonly pages: () => AsyncIterable<readonly Item[]>) {}
}

/** Where the text goes: an HTTP response, or a fake in tests. `write` answers false when the reader is behind. */
export interface JsonSink {
  write(chunk: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

export interface JsonWriteOptions {
  /** Aborted when the reader has gone: nothing more is read from the source or written. */
  signal: AbortSignal;
  /** Text gathered before it is written within a page (a page of large messages is not held whole). */
  chunkChars?: number;
}

/** The reader went away before the document was complete. */
export class ReaderGone extends Error {
  constructor() {
    super('the reader went away before the document was complete');
    this.name = 'ReaderGone';
  }
}

const DEFAULT_CHUNK_CHARS = 64 * 1024;

/**
 * Writes `value` as one JSON document, reading every PagedArray page by page. What is produced goes out
 * before the next page is read and whenever `chunkChars` gathered, and a full sink is waited for ('drain'),
 * so memory holds about one page whatever the size of the document. Rejects with ReaderGone once
 * `signal` aborts; the page being read is then the last one (its iterator is closed).
 */
export async function writeJson(
  value: unknown,
  sink: JsonSink,
  options: JsonWriteOptions,
): Promise<void> {
  const writer = new JsonStreamWriter(
    sink,
    options.signal,
    options.chunkChars ?? DEFAULT_CHUNK_CHARS,
  );
  await writer.value(value);
  await writer.flush();
}

class JsonStreamWriter {
  private pending = '';

  constructor(
    private readonly sink: JsonSink,
    private readonly signal: AbortSignal,
    private readonly chunkChars: number,
  ) {}

  async value(value: unknown): Promise<void> {
    // Only what holds a PagedArray is walked here; the rest (a message, a file record) is one native stringify.
    if (!holdsPagedArray(value)) this.push(JSON.stringify(value) ?? 'null');
    else if (value instanceof PagedArray) await this.pagedArray(value);
    else if (Array.isArray(value)) await this.array(value);
    else if (isPlainObject(value)) await this.object(value);
    if (this.pending.length >= this.chunkChars) await this.flush();
  }

  async flush(): Promise<void> {
    this.ensureReaderThere();
    if (this.pending === '') return;
    const chunk = this.pending;
    this.pending = '';
    if (!this.sink.write(chunk)) await this.drained();
  }

  private async pagedArray(paged: PagedArray<unknown>): Promise<void> {
    this.push('[');
    let first = true;
    const pages = paged.pages()[Symbol.asyncIterator]();
    try {
      for (;;) {
        // What the previous page produced goes out before the database is asked for the next one.
        await this.flush();
        const page = await pages.next();
        if (page.done) break;
        for (const item of page.value) {
          if (!first) this.push(',');
          first = false;
          await this.value(item);
        }
      }
    } finally {
      // Stopping early (the reader left, a failure) closes the source so it reads no further.
      await pages.return?.();
    }
    this.push(']');
  }

  private async array(items: readonly unknown[]): Promise<void> {
    this.push('[');
    for (const [index, item] of items.entries()) {
      if (index > 0) this.push(',');
      // JSON.stringify writes null for what JSON cannot hold (undefined, functions) inside arrays.
      await this.value(
        item === undefined || typeof item === 'function' ? null : item,
      );
    }
    this.push(']');
  }

  private async object(object: Record<string, unknown>): Promise<void> {
    this.push('{');
    let first = true;
    for (const [key, item] of Object.entries(object)) {
      // As JSON.stringify does: members without a JSON value are left out.
      if (item === undefined || typeof item === 'function') continue;
      this.push(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      await this.value(item);
    }
    this.push('}');
  }

  private push(text: string): void {
    this.pending += text;
  }

  private ensureReaderThere(): void {
    if (this.signal.aborted) throw new ReaderGone();
  }

  /** Resolves on 'drain'; rejects when the reader leaves first (a gone client never drains). */
  private drained(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.signal.aborted) {
        reject(new ReaderGone());
        return;
      }
      const onDrain = () => {
        this.signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.sink.off('drain', onDrain);
        reject(new ReaderGone());
      };
      this.sink.once('drain', onDrain);
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** Whether a PagedArray is in `value`, at any depth of its arrays and plain objects. */
function holdsPagedArray(value: unknown): boolean {
  if (value instanceof PagedArray) return true;
  if (Array.isArray(value)) return value.some(holdsPagedArray);
  return isPlainObject(value) && Object.values(value).some(holdsPagedArray);
}

/** An object literal (or null-prototype object): walked member by member; anything else (Date, ...) is JSON.stringify'd. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
