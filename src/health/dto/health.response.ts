import { ApiProperty } from '@nestjs/swagger';
import { ADMISSION_REASONS } from '../../infra/metrics/metrics';

export class LivenessDto {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}

export class ReadinessChecksDto {
  @ApiProperty({ enum: ['up', 'down'] })
  database!: 'up' | 'down';

  /** `not_configured` when REDIS_URL is unset (in-process stores). */
  @ApiProperty({ enum: ['up', 'down', 'not_configured'] })
  redis!: 'up' | 'down' | 'not_configured';
}

/** Whether this instance admits new chat and Skill runs now, and the signals it judges (docs/adr/0065). */
export class ReadinessAdmissionDto {
  /** `refusing`: new runs get 503 `overloaded` with Retry-After; everything else is still served. */
  @ApiProperty({ enum: ['admitting', 'refusing'] })
  state!: 'admitting' | 'refusing';

  /** Why it refuses (null while admitting). */
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ADMISSION_REASONS,
  })
  reason!: string | null;

  /** Chat and Skill responses open on this instance (starting or streaming). */
  openStreams!: number;

  /** Runs admitted whose first byte is not known yet (body, session, checks, claim, first token). */
  startingRuns!: number;

  /** Runs that may be starting at once now: the best measured start rate times CHAT_START_TIMEOUT_MS. */
  startingLimit!: number;

  /** The event loop's current stall, or its worst delay of the last second if larger (ms). */
  eventLoopDelayMs!: number;

  /** The share of the last half second the event loop was busy, in percent (100: saturated). */
  eventLoopUtilizationPercent!: number;

  /** Resident memory (or V8's heap if higher) as a percentage of its limit. */
  memoryPercent!: number;

  /** How long the oldest claim or query still waiting for the database has waited (ms). */
  databaseWaitMs!: number;
}

export class ReadinessDto {
  /** `degraded` while Redis is down: everything is served, rate limits count per instance. */
  @ApiProperty({ enum: ['ok', 'degraded'] })
  status!: 'ok' | 'degraded';

  checks!: ReadinessChecksDto;

  admission!: ReadinessAdmissionDto;
}
