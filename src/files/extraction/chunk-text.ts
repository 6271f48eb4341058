/** About how many characters a stored chunk of a file's text holds. */
export const CHUNK_CHARS = 2_000;

/**
 * Cuts text into pieces of at most `size` characters, in order, preferring to end a piece at a paragraph
 * break, then a line break, then a space, in its last quarter; joined again they are the text. NUL (which
 * PostgreSQL text cannot hold) is dropped.
 */
export function chunkText(text: string, size = CHUNK_CHARS): string[] {
  const clean = text.replaceAll('\u0000', '');
  const chunks: string[] = [];
  let start = 0;
  while (start < clean.length) {
    let end = Math.min(start + size, clean.length);
    if (end < clean.length)
      end = breakBefore(clean, start + Math.floor(size * 0.75), end);
    // Never split a surrogate pair.
    if (end < clean.length && /[\ud800-\udbff]/.test(clean[end - 1])) end -= 1;
    chunks.push(clean.slice(start, end));
    start = end;
  }
  return chunks;
}

/** Searches only the window [from, end): lastIndexOf on the whole text would scan back to its start. */
function breakBefore(text: string, from: number, end: number): number {
  const window = text.slice(from, end);
  for (const separator of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(separator);
    if (at >= 0) return from + at + separator.length;
  }
  return end;
}
