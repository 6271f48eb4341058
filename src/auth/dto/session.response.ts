import { ApiProperty } from '@nestjs/swagger';

/** One signed-in session of the account (never its token). */
export class SessionDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'date-time', description: 'When it signed in.' })
  createdAt!: string;

  @ApiProperty({
    format: 'date-time',
    description: 'Its last request (recorded at most once a minute).',
  })
  lastSeenAt!: string;

  @ApiProperty({ format: 'date-time' })
  expiresAt!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Mozilla/5.0 (X11; Linux x86_64)',
  })
  userAgent!: string | null;

  @ApiProperty({ type: String, nullable: true, example: '203.0.113.7' })
  ip!: string | null;

  @ApiProperty({ description: 'The session of this request.' })
  current!: boolean;
}

export class SessionListDto {
  @ApiProperty({
    type: [SessionDto],
    description: 'Live sessions, most recently active first (at most 100).',
  })
  items!: SessionDto[];
}
