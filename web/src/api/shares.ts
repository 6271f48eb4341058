import { api, unwrap, type Schemas } from './client';

export type Share = Schemas['ShareDto'];
export type SharedConversation = Schemas['SharedConversationDto'];
export type SharedMessage = SharedConversation['messages'][number];
export type Feedback = Schemas['MessageFeedbackDto'];
export type Rating = Feedback['rating'];

/** Shares the conversation as it is now (again: a new link, and the previous one stops working). */
export async function shareConversation(
  conversationId: string,
): Promise<Share> {
  return unwrap(
    await api.POST('/v1/conversations/{id}/share', {
      params: { path: { id: conversationId } },
    }),
  );
}

/** Takes the link down (fine when it was not shared). */
export async function stopSharing(conversationId: string): Promise<void> {
  unwrap(
    await api.DELETE('/v1/conversations/{id}/share', {
      params: { path: { id: conversationId } },
    }),
  );
}

/** The snapshot a link shows: public, no session needed. */
export async function readShared(shareId: string): Promise<SharedConversation> {
  return unwrap(
    await api.GET('/v1/shared/{shareId}', {
      params: { path: { shareId } },
    }),
  );
}

/** Copies the snapshot into a new conversation of the signed-in person; answers its id. */
export async function forkShared(shareId: string): Promise<string> {
  return unwrap(
    await api.POST('/v1/shared/{shareId}/fork', {
      params: { path: { shareId } },
    }),
  ).id;
}

/** Rates an answer (replacing any earlier rating of it, comment and tags included). */
export async function rateAnswer(
  conversationId: string,
  messageId: string,
  body: { rating: Rating; tags?: string[]; comment?: string | null },
): Promise<Feedback> {
  return unwrap(
    await api.PUT('/v1/conversations/{id}/messages/{messageId}/feedback', {
      params: { path: { id: conversationId, messageId } },
      body,
    }),
  );
}

/** Removes the rating of an answer (fine when there was none). */
export async function clearRating(
  conversationId: string,
  messageId: string,
): Promise<void> {
  unwrap(
    await api.DELETE('/v1/conversations/{id}/messages/{messageId}/feedback', {
      params: { path: { id: conversationId, messageId } },
    }),
  );
}
