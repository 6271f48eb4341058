import { ApiProperty } from '@nestjs/swagger';

/** A read-only link to a snapshot of one of the caller's conversations. */
export class ShareDto {
  /** 24 characters (144 random bits); sharing the conversation again gives a new one. */
  @ApiProperty({ example: 'q3Vn0cT2pXb8YhLw1aRz7KdE' })
  shareId!: string;

  /** The web client's page for the link (`APP_URL/shared/{shareId}`). */
  @ApiProperty({
    example: 'http://localhost:3000/shared/q3Vn0cT2pXb8YhLw1aRz7KdE',
  })
  url!: string;

  @ApiProperty({ format: 'uuid' })
  conversationId!: string;

  /** The conversation's title when it was shared. */
  title!: string;

  /** Messages in the snapshot. */
  messageCount!: number;

  /** When the snapshot was taken. */
  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class SharePageDto {
  data!: ShareDto[];

  /** Pass as `cursor` to get the next page; null on the last page. */
  @ApiProperty({ nullable: true, type: String })
  nextCursor!: string | null;
}

/** What a share row is read with. */
export const SHARE = {
  id: true,
  conversationId: true,
  title: true,
  messageCount: true,
  createdAt: true,
} as const;

export interface ShareRow {
  id: string;
  conversationId: string;
  title: string;
  messageCount: number;
  createdAt: Date;
}

export function toShareDto(row: ShareRow, appUrl: string): ShareDto {
  return {
    shareId: row.id,
    url: `${appUrl}/shared/${row.id}`,
    conversationId: row.conversationId,
    title: row.title,
    messageCount: row.messageCount,
    createdAt: row.createdAt.toISOString(),
  };
}
