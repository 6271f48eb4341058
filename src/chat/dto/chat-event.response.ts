import { ApiProperty } from '@nestjs/swagger';

/** The events of an answer asked for as server-sent events (`Accept: text/event-stream`), in this order. */

export class ChatMetaEventDataDto {
  @ApiProperty({ format: 'uuid' })
  conversationId!: string;

  /** The run's id (the ledger entry's `chatRequestId`); the same on a replay. */
  @ApiProperty({ format: 'uuid' })
  requestId!: string;

  /**
   * The catalog id of the model answering: a fallback when the model asked for failed before its first
   * token (docs/adr/0063-providers-and-routing.md).
   */
  model!: string;

  /** The model asked for, present only when a fallback (`model`) answers instead. */
  requestedModel?: string;
}

/** First: which conversation, run and model. */
export class ChatMetaEventDto {
  @ApiProperty({ enum: ['meta'] })
  event!: 'meta';

  data!: ChatMetaEventDataDto;
}

export class ChatDeltaEventDataDto {
  /** The next piece of the answer. */
  text!: string;
}

/** Each piece of text as the model writes it. */
export class ChatDeltaEventDto {
  @ApiProperty({ enum: ['delta'] })
  event!: 'delta';

  data!: ChatDeltaEventDataDto;
}

export class ChatErrorEventDataDto {
  @ApiProperty({
    enum: [
      'provider_error',
      'provider_timeout',
      'generation_interrupted',
      'quota_exceeded',
    ],
  })
  code!:
    | 'provider_error'
    | 'provider_timeout'
    | 'generation_interrupted'
    | 'quota_exceeded';

  detail!: string;
}

/** When the answer broke off after its first text (a failure before it is a 502 problem instead). */
export class ChatErrorEventDto {
  @ApiProperty({ enum: ['error'] })
  event!: 'error';

  data!: ChatErrorEventDataDto;
}

export class ChatUsageEventDataDto {
  inputTokens!: number;
  /** Of inputTokens, those the provider read from its prompt cache (priced apart). */
  cachedInputTokens!: number;
  outputTokens!: number;
  /** Credits billed for this run (0 when nothing was billed). */
  credits!: number;

  /** The catalog id of the model billed (the one that answered); absent when nothing was billed. */
  model?: string;
}

/** What the run cost, as its ledger entry says (zeros when nothing was billed). */
export class ChatUsageEventDto {
  @ApiProperty({ enum: ['usage'] })
  event!: 'usage';

  data!: ChatUsageEventDataDto;
}

export class ChatDoneEventDataDto {
  @ApiProperty({ enum: ['completed', 'stopped', 'failed'] })
  status!: 'completed' | 'stopped' | 'failed';
}

/** Last: how the run ended. */
export class ChatDoneEventDto {
  @ApiProperty({ enum: ['done'] })
  event!: 'done';

  data!: ChatDoneEventDataDto;
}

export class ChatToolCallEventDataDto {
  /** The execution's id: its `tool_result` and the answer's `toolCalls` entry carry the same. */
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'files.search' })
  tool!: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  arguments!: Record<string, unknown>;
}

/** In a run with `tools`: the model decided to call a tool (sent before it runs). */
export class ChatToolCallEventDto {
  @ApiProperty({ enum: ['tool_call'] })
  event!: 'tool_call';

  data!: ChatToolCallEventDataDto;
}

export class ChatToolApprovalEventDataDto {
  /** What POST /v1/chat/approvals/:approvalId decides. */
  @ApiProperty({ format: 'uuid' })
  approvalId!: string;

  /** The call's id (its `tool_call`). */
  @ApiProperty({ format: 'uuid' })
  id!: string;

  tool!: string;

  @ApiProperty({ type: 'object', additionalProperties: true })
  arguments!: Record<string, unknown>;

  /** Without a decision by then, the call is denied. */
  @ApiProperty({ format: 'date-time' })
  expiresAt!: string;
}

/** A call needs the user's approval: the run waits for POST /v1/chat/approvals/:approvalId. */
export class ChatToolApprovalEventDto {
  @ApiProperty({ enum: ['tool_approval'] })
  event!: 'tool_approval';

  data!: ChatToolApprovalEventDataDto;
}

export class ChatToolResultEventDataDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  tool!: string;

  @ApiProperty({ enum: ['ok', 'error', 'denied', 'timeout', 'unknown'] })
  status!: 'ok' | 'error' | 'denied' | 'timeout' | 'unknown';

  /** What the model reads back (cut at TOOL_RESULT_MAX_CHARS). */
  content!: string;
}

/** In a run with `tools`: a call ended; the calls of one step first, then their results, in call order. */
export class ChatToolResultEventDto {
  @ApiProperty({ enum: ['tool_result'] })
  event!: 'tool_result';

  data!: ChatToolResultEventDataDto;
}

export const CHAT_EVENT_TYPES = [
  ChatMetaEventDto,
  ChatDeltaEventDto,
  ChatToolCallEventDto,
  ChatToolApprovalEventDto,
  ChatToolResultEventDto,
  ChatErrorEventDto,
  ChatUsageEventDto,
  ChatDoneEventDto,
];
