import { ChatMessage } from '../models/providers/model-provider';

const TITLE_MAX_CHARACTERS = 80;

/**
 * The first user message (or the first message), on one line, as text without its Markdown marks (a
 * heading's #, emphasis, code ticks, a link's address), cut at 80 characters.
 */
export function titleFrom(messages: ChatMessage[]): string {
  const source =
    messages.find((message) => message.role === 'user') ?? messages[0];
  const line = withoutMarkdown(source?.content ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  const characters = [...line];
  if (characters.length === 0) return 'New conversation';
  return characters.length <= TITLE_MAX_CHARACTERS
    ? line
    : `${characters.slice(0, TITLE_MAX_CHARACTERS - 1).join('')}…`;
}

/** Block marks at the start of each line, then links, emphasis and code ticks; the words stay. */
function withoutMarkdown(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d{1,9}[.)])\s+/, ''))
    .join('\n')
    .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, '$1')
    .replace(/(\*\*|__|~~)(?=\S)([^\n]*?\S)\1/g, '$2')
    .replace(/(^|[\s(])[*_](?=\S)([^*_\n]*?\S)[*_](?=$|[\s.,;:!?)])/gm, '$1$2')
    .replace(/`+/g, '');
}
