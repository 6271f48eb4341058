import { ApiProperty } from '@nestjs/swagger';

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

export class ReadinessDto {
  /** `degraded` while Redis is down: everything is served, rate limits count per instance. */
  @ApiProperty({ enum: ['ok', 'degraded'] })
  status!: 'ok' | 'degraded';

  checks!: ReadinessChecksDto;
}
