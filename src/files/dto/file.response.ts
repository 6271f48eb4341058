import { ApiProperty } from '@nestjs/swagger';

export class FileDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** The client's file name, without directories or control characters. */
  name!: string;

  /** Decided from the content, never from the client's Content-Type. */
  @ApiProperty({ enum: ['pdf', 'docx', 'text', 'markdown'] })
  kind!: 'pdf' | 'docx' | 'text' | 'markdown';

  @ApiProperty({ example: 'application/pdf' })
  mediaType!: string;

  sizeBytes!: number;

  /** Hex SHA-256 of the content. */
  sha256!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class FilePageDto {
  data!: FileDto[];

  /** Pass as `cursor` to get the next page; null on the last page. */
  @ApiProperty({ nullable: true, type: String })
  nextCursor!: string | null;
}
