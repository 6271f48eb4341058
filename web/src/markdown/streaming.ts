/**
 * The text of an answer still streaming, minus a code fence line still being typed at its end (a lone "`"
 * or "``" that may become a fence, or "```js" before its line ends): shown, those would flash as text or
 * as a block with half a language name. It appears once its line is whole, or when the answer ends.
 */
const PARTIAL_FENCE = /(^|\n) {0,3}(?:`{1,2}|~{1,2}|(?:`{3,}|~{3,})[^\s`]*)$/;

export function withoutPartialFence(text: string): string {
  return text.replace(PARTIAL_FENCE, '$1');
}
