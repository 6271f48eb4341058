import { chunkText } from './chunk-text';

describe('chunkText', () => {
  it('keeps every character, in order, within the size', () => {
    const text = Array.from(
      { length: 500 },
      (_, i) => `Sentence ${i} of a paragraph.${i % 7 === 0 ? '\n\n' : ' '}`,
    ).join('');
    const chunks = chunkText(text, 300);
    expect(chunks.join('')).toBe(text);
    expect(
      Math.max(...chunks.map((chunk) => chunk.length)),
    ).toBeLessThanOrEqual(300);
    expect(chunks.length).toBeGreaterThan(text.length / 300);
  });

  it('ends a chunk at a paragraph break when one is near the end', () => {
    const [first] = chunkText(`${'a'.repeat(80)}\n\n${'b'.repeat(80)}`, 100);
    expect(first).toBe(`${'a'.repeat(80)}\n\n`);
  });

  it('cuts text without breaks at the size, never inside a surrogate pair, and drops NUL', () => {
    const emoji = '😀'.repeat(10);
    const chunks = chunkText(`${emoji}\u0000`, 5);
    expect(chunks.join('')).toBe(emoji);
    for (const chunk of chunks)
      expect(Buffer.from(chunk, 'utf8').toString('utf8')).toBe(chunk);
  });

  it('cuts 20 MB without a single break in linear time', () => {
    // A search for a break that scanned back to the start of the text made this quadratic (minutes).
    const chunks = chunkText('a'.repeat(20 * 1024 * 1024));
    expect(chunks).toHaveLength(Math.ceil((20 * 1024 * 1024) / 2000));
  });

  it('gives no chunk for empty text', () => {
    expect(chunkText('')).toEqual([]);
  });
});
