import type { ScreenProps } from '../App';

/** Placeholder: being built (issue 21). */
export function ConversationsScreen(_props: ScreenProps) {
  return <h1>Conversations</h1>;
}
