import { ConversationMessageDto } from '../conversations/dto/conversation.response';
import { FILE_KINDS, FileKind } from '../files/file-kind';
import { isRecord } from '../models/providers/upstream-error';
import { readStoredToolCall } from '../tools/dto/tool-call.dto';
import { SharedMessageDto } from './dto/shared-conversation.response';

/**
 * What a share stores of a conversation's branch: per message its role, text, model, the tools called
 * (name, arguments, status: never their results) and attached file names. No id of anything, no person.
 * docs/adr/0064-share-links-and-feedback.md
 */
export interface Snapshot {
  messages: SharedMessageDto[];
}

export function snapshotOf(messages: ConversationMessageDto[]): Snapshot {
  return {
    messages: messages.map((message) => ({
      role: message.role,
      content: message.content,
      model: message.model,
      toolCalls: message.toolCalls.map((call) => ({
        tool: call.tool,
        arguments: withoutIds(call.arguments),
        status: call.status,
      })),
      files: message.files.map((file) => ({
        name: file.name,
        kind: file.kind,
      })),
      createdAt: message.createdAt,
    })),
  };
}

/** What an id in a shared tool call's arguments reads as. */
export const HIDDEN_ID = '[hidden id]';
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * The arguments with every UUID replaced: a tool names the owner's things by id (files.search its
 * `fileIds`, an MCP tool a record of another service), which a reader of the link must not learn.
 */
export function withoutIds(
  args: Record<string, unknown>,
): Record<string, unknown> {
  return hideIds(args) as Record<string, unknown>;
}

function hideIds(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UUIDS, HIDDEN_ID);
  if (Array.isArray(value)) return value.map(hideIds);
  if (isRecord(value))
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, hideIds(item)]),
    );
  return value;
}

const ROLES: readonly string[] = ['system', 'user', 'assistant'];

/** A stored snapshot read back, keeping only what has the shape written (nothing else reaches a reader). */
export function readSnapshot(value: unknown): Snapshot {
  const messages =
    isRecord(value) && Array.isArray(value.messages) ? value.messages : [];
  return { messages: messages.flatMap(readMessage) };
}

function readMessage(value: unknown): SharedMessageDto[] {
  if (
    !isRecord(value) ||
    typeof value.role !== 'string' ||
    !ROLES.includes(value.role) ||
    typeof value.content !== 'string' ||
    typeof value.createdAt !== 'string'
  )
    return [];
  return [
    {
      role: value.role as SharedMessageDto['role'],
      content: value.content,
      model: typeof value.model === 'string' ? value.model : null,
      toolCalls: listOf(value.toolCalls).flatMap(
        (call) => readStoredToolCall(call) ?? [],
      ),
      files: listOf(value.files).flatMap((file) =>
        isRecord(file) &&
        typeof file.name === 'string' &&
        typeof file.kind === 'string' &&
        (FILE_KINDS as readonly string[]).includes(file.kind)
          ? [{ name: file.name, kind: file.kind as FileKind }]
          : [],
      ),
      createdAt: value.createdAt,
    },
  ];
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
