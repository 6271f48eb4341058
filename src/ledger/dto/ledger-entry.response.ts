import { ApiProperty } from '@nestjs/swagger';

/** One line of the caller's ledger: a billed chat or Skill run, or credits granted by an admin. */
export class LedgerStepDto {
  inputTokens!: number;
  outputTokens!: number;
}

export class LedgerToolCallDto {
  /** The execution's id (the `id` of its events and of the answer's `toolCalls`). */
  @ApiProperty({ format: 'uuid' })
  id!: string;

  tool!: string;

  @ApiProperty({ enum: ['ok', 'error', 'denied', 'timeout', 'unknown'] })
  status!: string;

  /** Its tool's price when it ran; 0 when it did not. */
  credits!: number;
}

export class LedgerEntryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** `usage` for a run, `grant` for credits added by an admin. */
  @ApiProperty({ enum: ['usage', 'grant'] })
  kind!: 'usage' | 'grant';

  /** `completed`; `partial` when the answer broke off (only what was delivered is billed); `granted`. */
  @ApiProperty({ enum: ['completed', 'partial', 'failed', 'granted'] })
  status!: 'completed' | 'partial' | 'failed' | 'granted';

  /** The model billed: the one that answered (a fallback, when the model asked for did not). */
  @ApiProperty({ nullable: true, type: String, example: 'local/echo' })
  model!: string | null;

  /** The model asked for when a fallback answered; null otherwise. */
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'anthropic/claude-haiku-4-5',
  })
  requestedModelId!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  conversationId!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  skillId!: string | null;

  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  skillVersionId!: string | null;

  /** The organization whose pool paid for the run; null when the account's own quota did. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  organizationId!: string | null;

  inputTokens!: number;

  /** Of inputTokens, those the provider read from its prompt cache (priced apart); 0 for grants. */
  cachedInputTokens!: number;

  outputTokens!: number;

  /** Credits charged (usage) or added (grant). */
  credits!: number;

  /** A run that used tools: each model call's tokens, in order; empty otherwise. */
  steps!: LedgerStepDto[];

  /** A run that used tools: its tool calls and how each ended; empty otherwise. */
  toolCalls!: LedgerToolCallDto[];

  /** The admin's reason, for grants. */
  @ApiProperty({ nullable: true, type: String })
  reason!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class LedgerPageDto {
  data!: LedgerEntryDto[];

  /** Pass as `cursor` to get the next page; null on the last page. */
  @ApiProperty({ nullable: true, type: String })
  nextCursor!: string | null;
}
