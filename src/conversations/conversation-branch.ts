/** A message of a conversation's tree: its id and the message it follows. */
export interface TreeMessage {
  id: string;
  parentId: string | null;
}

/**
 * The current branch of a conversation, from its first message to `currentId`, each message with its
 * alternatives (all messages following the same parent, itself included, in stored order; empty when it
 * is the only one). `messages` come in stored order. Without a current message (or one not found), the
 * last stored message ends the branch.
 */
export function currentBranch<M extends TreeMessage>(
  messages: M[],
  currentId: string | null,
): { message: M; alternatives: string[] }[] {
  const byId = new Map(messages.map((message) => [message.id, message]));
  const children = new Map<string | null, string[]>();
  for (const message of messages) {
    const siblings = children.get(message.parentId) ?? [];
    siblings.push(message.id);
    children.set(message.parentId, siblings);
  }
  const branch: { message: M; alternatives: string[] }[] = [];
  const seen = new Set<string>();
  for (
    let message =
      (currentId ? byId.get(currentId) : undefined) ?? messages.at(-1);
    message && !seen.has(message.id);
    message = message.parentId ? byId.get(message.parentId) : undefined
  ) {
    seen.add(message.id);
    const siblings = children.get(message.parentId) ?? [];
    branch.push({ message, alternatives: siblings.length > 1 ? siblings : [] });
  }
  return branch.reverse();
}
