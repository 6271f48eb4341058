import {
  EVENT_STREAM,
  eventsOrRefusal,
  type ChatEvent,
  type ChatRequest,
  type Usage,
} from '../../api/chat-stream';
import { api, failureOf, type Schemas } from '../../api/client';
import type { Feedback } from '../../api/shares';
import type { ToolView } from '../ToolCalls';
import { TurnFailure } from './chat-failure';
import type { OpenStream, StreamedAnswer } from './use-streamed-turn';

type ConversationMessage = Schemas['ConversationMessageDto'];
type RegenerateBody = Schemas['RegenerateDto'];
type EditBody = Schemas['EditMessageDto'];

/** One message of the conversation on screen: stored, or still local (sent, or streaming in). */
export interface Message {
  /** React key: the message id once known, else a local one. */
  key: string;
  /** The stored message's id (absent while its answer streams in). */
  id?: string;
  role: 'user' | 'assistant';
  text: string;
  usage?: Usage;
  failure?: string;
  stopped?: boolean;
  files?: { id: string; name: string }[];
  /** Ids of the messages following the same parent, this one included (several after a regenerate or an edit). */
  alternatives?: string[];
  /** The tools an answer called. */
  tools?: ToolView[];
  /** The person's rating of a stored answer. */
  feedback?: Feedback | null;
}

export function messagesOf(messages: ConversationMessage[]): Message[] {
  return messages
    .filter((message) => message.role !== 'system')
    .map((message) => ({
      key: message.id,
      id: message.id,
      role: message.role as Message['role'],
      text: message.content,
      usage: message.usage ?? undefined,
      files: message.files.map((file) => ({ id: file.id, name: file.name })),
      alternatives: message.alternatives,
      tools: message.toolCalls.map((call) => ({
        id: call.id,
        tool: call.tool,
        arguments: call.arguments,
        status: call.status,
        content: call.content,
      })),
      feedback: message.feedback,
    }));
}

/**
 * The stored messages, keeping what only the stream said (stopped, failed), the messages not stored, and the
 * local keys (React keeps the elements of what was just streamed instead of drawing them again).
 */
export function merge(stored: Message[], local: Message[]): Message[] {
  const merged = stored.map((message, index) => {
    const mine = local[index];
    if (!mine || mine.role !== message.role) return message;
    return {
      ...message,
      key: mine.key,
      usage: message.usage ?? mine.usage,
      stopped: mine.stopped,
      failure: mine.failure,
      text: message.text || mine.text,
      tools: message.tools?.length ? message.tools : mine.tools,
    };
  });
  return [...merged, ...local.slice(stored.length)];
}

/** A streamed answer as a message of the conversation. */
export function answerMessage(key: string, answer: StreamedAnswer): Message {
  return {
    key,
    role: 'assistant',
    text: answer.text,
    tools: answer.tools,
    usage: answer.usage,
    failure: answer.failure,
    stopped: answer.stopped,
  };
}

/** One question and its answer, as the screen shows them: either may be missing (a conversation cut short). */
export interface Exchange {
  question?: { message: Message; index: number };
  answer?: { message: Message; index: number };
}

/** The messages paired into exchanges: each user message with the answer that follows it. */
export function exchangesOf(messages: Message[]): Exchange[] {
  const exchanges: Exchange[] = [];
  messages.forEach((message, index) => {
    const last = exchanges[exchanges.length - 1];
    if (message.role === 'user')
      exchanges.push({ question: { message, index } });
    else if (last && !last.answer) last.answer = { message, index };
    else exchanges.push({ answer: { message, index } });
  });
  return exchanges;
}

/** What starts an answer: a new message, the last answer again, or a user message replaced. */
export type TurnStart =
  | { kind: 'chat'; body: ChatRequest }
  | { kind: 'regenerate'; conversationId: string; body: RegenerateBody }
  | { kind: 'edit'; conversationId: string; messageId: string; body: EditBody };

/** Any of the three answer routes as server-sent events; a refusal before the first byte is thrown. */
export function openTurn(
  request: (idempotencyKey: string) => TurnStart,
): OpenStream {
  return (idempotencyKey, signal) =>
    streamTurn(request(idempotencyKey), signal);
}

async function* streamTurn(
  start: TurnStart,
  signal: AbortSignal,
): AsyncGenerator<ChatEvent> {
  const options = { ...EVENT_STREAM, signal };
  const result =
    start.kind === 'chat'
      ? await api.POST('/v1/chat', { ...options, body: start.body })
      : start.kind === 'regenerate'
        ? await api.POST('/v1/conversations/{id}/regenerate', {
            ...options,
            params: { path: { id: start.conversationId } },
            body: start.body,
          })
        : await api.POST('/v1/conversations/{id}/messages/{messageId}/edit', {
            ...options,
            params: {
              path: { id: start.conversationId, messageId: start.messageId },
            },
            body: start.body,
          });
  yield* eventsOrRefusal(result, (problem) => {
    const resetsAt =
      typeof problem === 'object' && problem !== null && 'resetsAt' in problem
        ? String(problem.resetsAt)
        : undefined;
    return new TurnFailure(failureOf(result.response, problem), resetsAt);
  });
}
