/** One stored chunk of an attached file, as ranked for the latest user message. */
export interface RankedChunk {
  fileId: string;
  index: number;
  bytes: number;
  rank: number;
}

/**
 * Which chunks go into the model's context, in document order (files in the order attached): all of them
 * when they fit `budgetBytes`; otherwise the start of each file, then the chunks most relevant to the
 * question (highest rank first; ties keep document order) while they fit.
 */
export function selectChunks(
  chunks: RankedChunk[],
  fileOrder: string[],
  budgetBytes: number,
): RankedChunk[] {
  const position = new Map(fileOrder.map((id, index) => [id, index]));
  const inDocumentOrder = [...chunks].sort(
    (a, b) =>
      position.get(a.fileId)! - position.get(b.fileId)! || a.index - b.index,
  );
  if (
    inDocumentOrder.reduce((sum, chunk) => sum + chunk.bytes, 0) <= budgetBytes
  )
    return inDocumentOrder;
  const chosen = new Set<RankedChunk>();
  let left = budgetBytes;
  const take = (chunk: RankedChunk) => {
    if (chosen.has(chunk) || chunk.bytes > left) return;
    chosen.add(chunk);
    left -= chunk.bytes;
  };
  for (const chunk of inDocumentOrder) if (chunk.index === 0) take(chunk);
  const byRelevance = inDocumentOrder
    .filter((chunk) => chunk.rank > 0)
    .sort((a, b) => b.rank - a.rank);
  for (const chunk of byRelevance) take(chunk);
  return inDocumentOrder.filter((chunk) => chosen.has(chunk));
}

/**
 * A PostgreSQL tsquery matching any word of the text by prefix (`simple` configuration: no stemming, any
 * language), or null when it has no word. Words are letters and digits only, so nothing in them is syntax.
 */
export function relevanceQuery(text: string): string | null {
  const words = [
    ...new Set(
      (text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? []).map((word) =>
        word.slice(0, 64),
      ),
    ),
  ].slice(0, 64);
  return words.length > 0 ? words.map((word) => `${word}:*`).join(' | ') : null;
}

/** The files' text as the model receives it: each file delimited and named, `[...]` where parts were left out. */
export function contextSection(
  files: { id: string; name: string; chunkCount: number }[],
  texts: Map<string, { index: number; text: string }[]>,
): string {
  const parts = [
    'The user attached the files below. The text of each is between <file name="..." id="..."> and </file>; "[...]" marks parts left out.',
  ];
  for (const file of files) {
    const chunks = texts.get(file.id) ?? [];
    let body = '';
    let next = 0;
    for (const chunk of chunks) {
      if (chunk.index !== next) body += '\n[...]\n';
      body += chunk.text;
      next = chunk.index + 1;
    }
    if (next < file.chunkCount) body += '\n[...]';
    parts.push(
      `<file name="${file.name.replace(/[<>"&]/g, (c) => `&#${c.charCodeAt(0)};`)}" id="${file.id}">\n${body}\n</file>`,
    );
  }
  return parts.join('\n\n');
}
