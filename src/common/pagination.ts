import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { AppError } from './errors/app-error';
import { isUuid } from './ids';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** `?limit=&cursor=` of the newest-first lists. */
export class PageQueryDto {
  /** Items per page, 1 to 100 (default 20). */
  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    default: DEFAULT_PAGE_SIZE,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;

  /** The `nextCursor` of the previous page. */
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

/** Position in a newest-first list: the sort timestamp and id of the last item seen. */
export interface Cursor {
  at: Date;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.at.toISOString()}|${cursor.id}`).toString(
    'base64url',
  );
}

export function decodeCursor(value: string): Cursor {
  const [at, id, ...rest] = Buffer.from(value, 'base64url')
    .toString('utf8')
    .split('|');
  const date = new Date(at ?? '');
  const year = date.getUTCFullYear();
  if (
    rest.length > 0 ||
    !id ||
    !isUuid(id) ||
    Number.isNaN(date.getTime()) ||
    year < 1970 ||
    year > 9999
  ) {
    throw new AppError(
      'validation_failed',
      'The cursor is not one this API gave out.',
      {
        errors: [
          {
            field: 'cursor',
            code: 'invalid_cursor',
            message: 'cursor must be the nextCursor of a previous page',
          },
        ],
      },
    );
  }
  return { at: date, id };
}

/** The page of a newest-first list read with `limit` + 1 rows: the first `limit`, and a cursor if more follow. */
export function toPage<Row, Item>(
  rows: Row[],
  limit: number,
  positionOf: (row: Row) => Cursor,
  map: (row: Row) => Item,
): { data: Item[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map(map),
    nextCursor:
      rows.length > limit && last ? encodeCursor(positionOf(last)) : null,
  };
}

/** The `where` part of a newest-first page after `after`: older by `field`, or as old with a smaller id. */
export function olderThan<Field extends 'createdAt' | 'updatedAt'>(
  field: Field,
  after?: Cursor,
) {
  if (!after) return {};
  const older = { [field]: { lt: after.at } } as Record<Field, { lt: Date }>;
  const tied = { [field]: after.at, id: { lt: after.id } } as Record<
    Field,
    Date
  > & { id: { lt: string } };
  return { OR: [older, tied] };
}

/** Position in a list ranked by relevance (search): how many items came before. */
export function encodeOffsetCursor(offset: number): string {
  return Buffer.from(`offset|${offset}`).toString('base64url');
}

export function decodeOffsetCursor(value: string): number {
  const [kind, offset, ...rest] = Buffer.from(value, 'base64url')
    .toString('utf8')
    .split('|');
  const number = Number(offset);
  if (
    kind !== 'offset' ||
    rest.length > 0 ||
    !/^\d{1,9}$/.test(offset ?? '') ||
    !Number.isSafeInteger(number)
  ) {
    throw new AppError(
      'validation_failed',
      'The cursor is not one this API gave out for this search.',
      {
        errors: [
          {
            field: 'cursor',
            code: 'invalid_cursor',
            message:
              'cursor must be the nextCursor of a previous page of the same search',
          },
        ],
      },
    );
  }
  return number;
}
