/**
 * The shape of a mock stream is named by its upstream model: `bench-<tokens>x<intervalMs>`, e.g.
 * `bench-50x100` = 50 tokens 100 ms apart (the first one immediately). Token i is the word `w<i> `, so the
 * load generator can tell lost, duplicated and out-of-order tokens apart.
 */
export interface StreamShape {
  tokens: number;
  intervalMs: number;
}

const SHAPE = /^bench-(\d{1,5})x(\d{1,6})$/;

export function shapeOf(upstreamModel: string): StreamShape | undefined {
  const match = SHAPE.exec(upstreamModel);
  if (!match) return undefined;
  return { tokens: Number(match[1]), intervalMs: Number(match[2]) };
}

export function upstreamName(shape: StreamShape): string {
  return `bench-${shape.tokens}x${shape.intervalMs}`;
}

export function tokenText(index: number): string {
  return `w${index} `;
}

export function expectedText(tokens: number): string {
  let text = '';
  for (let index = 0; index < tokens; index++) text += tokenText(index);
  return text;
}

/** How a received body compares to the expected `w0 w1 ... w<n-1> `. */
export interface TokenCheck {
  received: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  /** Characters that are not part of a token word. */
  garbage: number;
}

const TOKEN = /w(\d+) /g;

export function checkTokens(text: string, tokens: number): TokenCheck {
  const seen = new Uint8Array(tokens);
  let received = 0;
  let duplicated = 0;
  let outOfOrder = 0;
  let previous = -1;
  let matchedChars = 0;
  let unknown = 0;
  for (const match of text.matchAll(TOKEN)) {
    const index = Number(match[1]);
    received += 1;
    matchedChars += match[0].length;
    if (index >= tokens) {
      unknown += 1;
      continue;
    }
    if (seen[index]) duplicated += 1;
    seen[index] = 1;
    if (index < previous) outOfOrder += 1;
    previous = index;
  }
  let distinct = 0;
  for (const flag of seen) distinct += flag;
  return {
    received,
    lost: tokens - distinct,
    duplicated,
    outOfOrder,
    garbage: text.length - matchedChars + unknown,
  };
}
