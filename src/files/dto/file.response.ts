import { ApiProperty } from '@nestjs/swagger';
import { FILE_KINDS, FileKind } from '../file-kind';

export class FileTextDto {
  /** Extraction runs in the background right after the upload: pending, then ready or failed. */
  @ApiProperty({ enum: ['pending', 'ready', 'failed'] })
  status!: 'pending' | 'ready' | 'failed';

  /** Characters of extracted text, once ready. */
  @ApiProperty({ nullable: true, type: Number })
  chars!: number | null;

  /** A PDF's page count, once ready. */
  @ApiProperty({ nullable: true, type: Number })
  pages!: number | null;

  /** Why there is no text, when failed: pdf_encrypted, pdf_no_text, file_unreadable, extraction_timeout, extraction_too_large, extraction_failed. */
  @ApiProperty({ nullable: true, type: String })
  error!: string | null;
}

export class FileDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** The client's file name, without directories or control characters. */
  name!: string;

  /** Decided from the content, never from the client's Content-Type. */
  @ApiProperty({ enum: FILE_KINDS })
  kind!: FileKind;

  @ApiProperty({ example: 'application/pdf' })
  mediaType!: string;

  sizeBytes!: number;

  /** Hex SHA-256 of the content. */
  sha256!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  text!: FileTextDto;
}

export class FilePageDto {
  data!: FileDto[];

  /** Pass as `cursor` to get the next page; null on the last page. */
  @ApiProperty({ nullable: true, type: String })
  nextCursor!: string | null;
}
