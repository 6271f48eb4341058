import { AppError } from '../../common/errors/app-error';
import { StoredRun } from '../chat-requests.repository';
import { ChatStream, toChatStream } from '../chat-stream';
import { RemoteRunFollower } from '../live/remote-run-follower';

/**
 * The answer to a retry of the request that holds the key: its stored answer when it has ended, the
 * running one from its first byte when it has not. Refused when the key stood for another request (422)
 * or the conversation, and the answer with it, was deleted (410). Nothing is claimed or billed.
 */
export async function replay(
  request: StoredRun,
  turn: {
    fingerprint: string;
    fileIds?: string[];
    tools?: string[];
    skill?: unknown;
  },
  follower: RemoteRunFollower,
  signal?: AbortSignal,
): Promise<ChatStream> {
  if (request.fingerprint !== turn.fingerprint)
    throw new AppError(
      'idempotency_key_reused',
      'This idempotencyKey was already used for a different request. Use a new key for a new request.',
    );
  if (request.conversationId === null)
    throw new AppError(
      'conversation_deleted',
      'The conversation of this request was deleted, and its answer with it. Nothing was billed again; ' +
        'send a new idempotencyKey to ask again.',
    );
  const streaming = request.status === 'streaming';
  const answer = streaming
    ? follower.answerOf(request.id, signal)
    : await follower.finishedAnswerOf(request, mayHaveCalledTools(turn));
  const stream = await toChatStream(
    {
      runId: request.id,
      model: request.modelId,
      ...(request.requestedModelId
        ? { requestedModel: request.requestedModelId }
        : {}),
      conversationId: request.conversationId,
      replayed: true,
      answer,
      // A replay names the same files: the fingerprint, which covers fileIds, matched.
      contextFiles: turn.fileIds,
    },
    signal,
  );
  if (!streaming) return stream;
  // Joined before its first text: a fallback may have taken over meanwhile (docs/adr/0063).
  const answering = await follower.answeringModelOf(request.id);
  return answering ? { ...stream, ...answering } : stream;
}

/**
 * Whether the request may have called tools: it named some (the fingerprint, which matched, covers them),
 * or it ran a Skill (whose binding is not in the fingerprint). A plain chat's replay reads no executions.
 */
function mayHaveCalledTools(turn: {
  tools?: string[];
  skill?: unknown;
}): boolean {
  return (turn.tools?.length ?? 0) > 0 || turn.skill !== undefined;
}
