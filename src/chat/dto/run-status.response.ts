import { ApiProperty } from '@nestjs/swagger';

/** A run as POST /v1/chat/stop leaves it. */
export class RunStatusDto {
  idempotencyKey!: string;

  /** The run's id (its ledger entry's `chatRequestId`). */
  @ApiProperty({ format: 'uuid' })
  requestId!: string;

  /** Null once the conversation was deleted. */
  @ApiProperty({ format: 'uuid', nullable: true, type: String })
  conversationId!: string | null;

  /**
   * `stopped` when this stop (or an earlier one) ended it; `completed` or `failed` when it had already
   * ended; `streaming` when the instance generating it has not stopped it yet (it will, at the latest
   * within a quarter of CHAT_LEASE_MS).
   */
  @ApiProperty({ enum: ['streaming', 'completed', 'failed', 'stopped'] })
  status!: 'streaming' | 'completed' | 'failed' | 'stopped';
}
