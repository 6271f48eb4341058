import { AppError } from '../../common/errors/app-error';
import { StoredRun } from '../chat-requests.repository';
import { ChatStream, toChatStream } from '../chat-stream';
import { RemoteRunFollower } from '../live/remote-run-follower';
import { storedAnswer } from '../stored-run';

/**
 * The answer to a retry of the request that holds the key: its stored answer when it has ended, the
 * running one from its first byte when it has not. Refused when the key stood for another request (422)
 * or the conversation, and the answer with it, was deleted (410). Nothing is claimed or billed.
 */
export function replay(
  request: StoredRun,
  turn: { fingerprint: string; fileIds?: string[] },
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
  const answer =
    request.status === 'streaming'
      ? follower.answerOf(request.id, signal)
      : storedAnswer(request);
  return toChatStream(
    {
      runId: request.id,
      model: request.modelId,
      conversationId: request.conversationId,
      replayed: true,
      answer,
      // A replay names the same files: the fingerprint, which covers fileIds, matched.
      contextFiles: turn.fileIds,
    },
    signal,
  );
}
