import { EventEmitter } from 'node:events';
import { keysetArray } from './keyset-pages';
import {
  JsonSink,
  PagedArray,
  ReaderGone,
  writeJson,
} from './json-stream.writer';

/** One event of a run: a page read from a source, or a chunk written to the sink (with its text). */
type Event =
  | { type: 'read'; source: string; page: number }
  | { type: 'write'; text: string };

/**
 * A writable like an HTTP response: records every chunk. From its `fullAfter`-th write on, every write
 * answers false and 'drain' comes only when the test calls `drain()`, so the writer must wait for the reader.
 */
class FakeSink extends EventEmitter implements JsonSink {
  readonly events: Event[];
  waitingForDrain = false;
  private writes = 0;

  constructor(
    events: Event[],
    private readonly fullAfter = Infinity,
  ) {
    super();
    this.events = events;
  }

  write(chunk: string): boolean {
    if (this.waitingForDrain)
      throw new Error('written while full: the writer did not wait for drain');
    this.events.push({ type: 'write', text: chunk });
    this.writes += 1;
    this.waitingForDrain = this.writes > this.fullAfter;
    return !this.waitingForDrain;
  }

  drain(): void {
    this.waitingForDrain = false;
    this.emit('drain');
  }

  get text(): string {
    return this.events
      .flatMap((event) => (event.type === 'write' ? [event.text] : []))
      .join('');
  }
}

/** A paged source of `count` items in pages of `size`, recording each read; optionally failing at a page. */
function source(
  name: string,
  events: Event[],
  count: number,
  size: number,
  options: { onRead?: () => void; failAtPage?: number; closed?: string[] } = {},
) {
  const items = Array.from({ length: count }, (_, index) => ({
    id: `${name}-${index}`,
    text: `item ${index} of ${name} "quoted" \u2028 ✓`,
  }));
  let pages = 0;
  return {
    items,
    array: new PagedArray(async function* () {
      try {
        for (let first = 0; first < count; first += size) {
          pages += 1;
          options.onRead?.();
          events.push({ type: 'read', source: name, page: pages });
          if (pages === options.failAtPage)
            throw new Error(`page ${pages} of ${name} failed`);
          await Promise.resolve(); // a query takes at least a tick
          yield items.slice(first, first + size);
        }
      } finally {
        options.closed?.push(name);
      }
    }),
  };
}

/** A PagedArray of a fake's pages, which may come from a plain generator (a fake that never waits). */
function pagedArray<Item>(
  pages: () => Iterable<readonly Item[]> | AsyncIterable<readonly Item[]>,
): PagedArray<Item> {
  return new PagedArray(async function* () {
    for await (const page of pages()) yield page;
  });
}

const open = () => new AbortController().signal;
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('writeJson', () => {
  it('writes one valid document equal to JSON.stringify of the same data read whole', async () => {
    const events: Event[] = [];
    const sink = new FakeSink(events);
    const messages = source('messages', events, 5, 2);
    const value = {
      format: 'x/1',
      at: new Date('2026-01-02T03:04:05.006Z'),
      skipped: undefined,
      nested: { list: [1, 'two', null, undefined, { deep: true }], empty: {} },
      conversations: pagedArray(function* () {
        yield [{ id: 'c1', archivedAt: null, messages: messages.array }];
      }),
      empty: pagedArray(function* () {}),
    };
    await writeJson(value, sink, { signal: open() });
    const parsed: unknown = JSON.parse(sink.text);
    expect(sink.text).toBe(
      JSON.stringify({
        ...value,
        conversations: [
          { id: 'c1', archivedAt: null, messages: messages.items },
        ],
        empty: [],
      }),
    );
    expect(parsed).toEqual(
      expect.objectContaining({ at: '2026-01-02T03:04:05.006Z', empty: [] }),
    );
  });

  it('reads page by page, writing what each page produced before reading the next', async () => {
    const events: Event[] = [];
    const sink = new FakeSink(events);
    const ledger = source('ledger', events, 10, 3);
    await writeJson({ ledger: ledger.array }, sink, {
      signal: open(),
      chunkChars: 1_000_000,
    });

    const reads = events.flatMap((event, index) =>
      event.type === 'read' ? [index] : [],
    );
    expect(reads).toHaveLength(4);
    // Between two reads there is a write, and it carries the items of the page just read.
    for (let page = 1; page < reads.length; page += 1) {
      const between = events.slice(reads[page - 1] + 1, reads[page]);
      expect(between.map((event) => event.type)).toEqual(['write']);
      const lastOfPage = ledger.items[page * 3 - 1];
      expect(
        between
          .map((event) => (event.type === 'write' ? event.text : ''))
          .join(''),
      ).toContain(lastOfPage.id);
    }
    expect(JSON.parse(sink.text)).toEqual({ ledger: ledger.items });
  });

  it('never holds more than chunkChars of text within a page: a page of large items goes out in several writes', async () => {
    const events: Event[] = [];
    const sink = new FakeSink(events);
    const big = pagedArray(function* () {
      yield Array.from({ length: 10 }, (_, index) => ({
        index,
        content: 'x'.repeat(1_000),
      }));
    });
    await writeJson({ big }, sink, { signal: open(), chunkChars: 2_500 });
    const writes = events.filter(
      (event): event is Extract<Event, { type: 'write' }> =>
        event.type === 'write',
    );
    expect(writes.length).toBeGreaterThanOrEqual(4);
    for (const write of writes)
      expect(write.text.length).toBeLessThan(2_500 + 1_100);
    expect((JSON.parse(sink.text) as { big: unknown[] }).big).toHaveLength(10);
  });

  it('reads a nested list (a conversation’s messages) only when the writer reaches it', async () => {
    const events: Event[] = [];
    const sink = new FakeSink(events);
    const first = source('messages-1', events, 3, 2);
    const second = source('messages-2', events, 3, 2);
    const conversations = pagedArray(function* () {
      events.push({ type: 'read', source: 'conversations', page: 1 });
      yield [
        { id: 'c1', messages: first.array },
        { id: 'c2', messages: second.array },
      ];
    });
    await writeJson({ conversations }, sink, { signal: open() });
    const reads = events.flatMap((event) =>
      event.type === 'read' ? [`${event.source}#${event.page}`] : [],
    );
    expect(reads).toEqual([
      'conversations#1',
      'messages-1#1',
      'messages-1#2',
      'messages-2#1',
      'messages-2#2',
    ]);
    expect(JSON.parse(sink.text)).toEqual({
      conversations: [
        { id: 'c1', messages: first.items },
        { id: 'c2', messages: second.items },
      ],
    });
  });

  it('waits for drain when the sink is full and reads nothing meanwhile', async () => {
    const events: Event[] = [];
    const sink = new FakeSink(events, 0);
    let readsWhileFull = 0;
    const files = source('files', events, 9, 2, {
      onRead: () => (readsWhileFull += sink.waitingForDrain ? 1 : 0),
    });
    let done = false;
    const writing = writeJson({ files: files.array }, sink, {
      signal: open(),
    }).then(() => (done = true));
    let drains = 0;
    while (!done) {
      await tick();
      if (sink.waitingForDrain) {
        // While the writer waits, nothing more is read or written.
        const before = events.length;
        await tick();
        expect(events.length).toBe(before);
        drains += 1;
        sink.drain();
      }
    }
    await writing;
    expect(readsWhileFull).toBe(0);
    expect(drains).toBeGreaterThanOrEqual(5);
    expect(JSON.parse(sink.text)).toEqual({ files: files.items });
  });

  it('stops reading once the reader leaves: a stalled write is given up and the source is closed', async () => {
    const events: Event[] = [];
    // The head and the first page go through; the second page's write fills the sink and no drain ever comes.
    const sink = new FakeSink(events, 2);
    const closed: string[] = [];
    const messages = source('messages', events, 1_000, 10, { closed });
    const reader = new AbortController();
    const writing = writeJson({ messages: messages.array }, sink, {
      signal: reader.signal,
    });
    while (!sink.waitingForDrain) await tick();
    const readsBeforeLeaving = events.filter(
      (event) => event.type === 'read',
    ).length;
    reader.abort();
    await expect(writing).rejects.toBeInstanceOf(ReaderGone);
    expect(events.filter((event) => event.type === 'read')).toHaveLength(
      readsBeforeLeaving,
    );
    expect(readsBeforeLeaving).toBe(2);
    expect(closed).toEqual(['messages']);
  });

  it('reads nothing when the reader is already gone', async () => {
    const events: Event[] = [];
    const reader = new AbortController();
    reader.abort();
    await expect(
      writeJson({ a: source('a', events, 5, 2).array }, new FakeSink(events), {
        signal: reader.signal,
      }),
    ).rejects.toBeInstanceOf(ReaderGone);
    expect(events).toEqual([]);
  });

  it('rejects with the source’s error and reads no further', async () => {
    const events: Event[] = [];
    const sink = new FakeSink(events);
    const closed: string[] = [];
    const failing = source('ledger', events, 10, 2, { failAtPage: 2, closed });
    const after = source('after', events, 2, 2);
    await expect(
      writeJson({ ledger: failing.array, after: after.array }, sink, {
        signal: open(),
      }),
    ).rejects.toThrow('page 2 of ledger failed');
    expect(events.filter((event) => event.type === 'read')).toHaveLength(2);
    expect(closed).toEqual(['ledger']);
  });
});

describe('keysetArray', () => {
  it('continues each page after the key of the last row and stops at a short page', async () => {
    const rows = Array.from({ length: 7 }, (_, index) => ({
      seq: BigInt(index + 1),
      content: `m${index + 1}`,
    }));
    const calls: (bigint | undefined)[] = [];
    const array = keysetArray(
      (after: bigint | undefined, limit: number) => {
        calls.push(after);
        return Promise.resolve(
          rows
            .filter((row) => after === undefined || row.seq > after)
            .slice(0, limit),
        );
      },
      (row) => row.seq,
      (row) => row.content,
      3,
    );
    const sink = new FakeSink([]);
    await writeJson(array, sink, { signal: open() });
    expect(JSON.parse(sink.text)).toEqual([
      'm1',
      'm2',
      'm3',
      'm4',
      'm5',
      'm6',
      'm7',
    ]);
    expect(calls).toEqual([undefined, 3n, 6n]);
  });

  it('asks once more after an exactly full last page, and writes an empty list for no rows', async () => {
    const calls: (number | undefined)[] = [];
    const read = (after: number | undefined, limit: number) => {
      calls.push(after);
      return Promise.resolve(
        [1, 2, 3, 4]
          .filter((n) => after === undefined || n > after)
          .slice(0, limit),
      );
    };
    const sink = new FakeSink([]);
    await writeJson(
      {
        full: keysetArray(
          read,
          (n) => n,
          (n) => n,
          2,
        ),
        none: keysetArray(
          () => Promise.resolve([]),
          (n: number) => n,
          (n) => n,
          2,
        ),
      },
      sink,
      { signal: open() },
    );
    expect(JSON.parse(sink.text)).toEqual({ full: [1, 2, 3, 4], none: [] });
    expect(calls).toEqual([undefined, 2, 4]);
  });
});
