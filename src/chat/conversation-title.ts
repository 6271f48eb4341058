import { ChatMessage } from '../models/providers/model-provider';

const TITLE_MAX_CHARACTERS = 80;

/** The first user message (or the first message), on one line, cut at 80 characters. */
export function titleFrom(messages: ChatMessage[]): string {
  const source =
    messages.find((message) => message.role === 'user') ?? messages[0];
  const line = (source?.content ?? '').replace(/\s+/g, ' ').trim();
  const characters = [...line];
  if (characters.length === 0) return 'New conversation';
  return characters.length <= TITLE_MAX_CHARACTERS
    ? line
    : `${characters.slice(0, TITLE_MAX_CHARACTERS - 1).join('')}…`;
}
