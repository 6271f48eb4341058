import {
  contextSection,
  relevanceQuery,
  RankedChunk,
  selectChunks,
} from './context-selection';

const chunk = (
  fileId: string,
  index: number,
  rank = 0,
  bytes = 100,
): RankedChunk => ({ fileId, index, bytes, rank });

describe('selectChunks', () => {
  it('takes everything, in document order, when it fits', () => {
    const chunks = [chunk('b', 0), chunk('a', 1), chunk('a', 0)];
    expect(
      selectChunks(chunks, ['a', 'b'], 300).map((c) => `${c.fileId}${c.index}`),
    ).toEqual(['a0', 'a1', 'b0']);
  });

  it('otherwise takes each file’s start, then the most relevant chunks that fit, in document order', () => {
    const chunks = [
      chunk('a', 0),
      chunk('a', 1, 0.1),
      chunk('a', 2, 0.9),
      chunk('a', 3, 0.5),
      chunk('b', 0),
      chunk('b', 1, 0.7),
    ];
    expect(
      selectChunks(chunks, ['a', 'b'], 400).map((c) => `${c.fileId}${c.index}`),
    ).toEqual(['a0', 'a2', 'b0', 'b1']);
  });

  it('never goes over the budget', () => {
    const chunks = [chunk('a', 0, 0, 500), chunk('a', 1, 1, 50)];
    expect(selectChunks(chunks, ['a'], 100).map((c) => c.index)).toEqual([1]);
  });
});

describe('relevanceQuery', () => {
  it('matches every word by prefix, in any script, with nothing of the text as syntax', () => {
    expect(
      relevanceQuery("What's the capital of Zürich's canton? 東京 & | ! :*"),
    ).toBe('what:* | the:* | capital:* | of:* | zürich:* | canton:* | 東京:*');
    expect(relevanceQuery('? !')).toBeNull();
  });
});

describe('contextSection', () => {
  it('names each file and marks what was left out', () => {
    const section = contextSection(
      [
        { id: 'f1', name: 'a "b".txt', chunkCount: 4 },
        { id: 'f2', name: 'c.md', chunkCount: 1 },
      ],
      new Map([
        [
          'f1',
          [
            { index: 0, text: 'start' },
            { index: 2, text: 'middle' },
          ],
        ],
        ['f2', [{ index: 0, text: 'all' }]],
      ]),
    );
    expect(section).toContain(
      '<file name="a &#34;b&#34;.txt" id="f1">\nstart\n[...]\nmiddle\n[...]\n</file>',
    );
    expect(section).toContain('<file name="c.md" id="f2">\nall\n</file>');
  });
});
