import { Injectable } from '@nestjs/common';
import { AppError } from '../common/errors/app-error';
import { AdminFeedbackQueryDto } from '../feedback/dto/feedback.input';
import { AdminFeedbackDto } from '../feedback/dto/admin-feedback.response';
import {
  FeedbackFilter,
  FeedbackRepository,
} from '../feedback/feedback.repository';

const DEFAULT_COMMENTS = 20;
const DAY_MS = 86_400_000;

/** How answers were rated: operators use it to choose models. */
@Injectable()
export class AdminFeedbackService {
  constructor(private readonly feedback: FeedbackRepository) {}

  async summary(query: AdminFeedbackQueryDto): Promise<AdminFeedbackDto> {
    const filter = filterOf(query);
    const [byModel, bySkill, comments] = await Promise.all([
      this.feedback.countByModel(filter),
      this.feedback.countBySkill(filter),
      this.feedback.latestComments(filter, query.limit ?? DEFAULT_COMMENTS),
    ]);
    return {
      from: filter.from?.toISOString() ?? null,
      to: filter.to?.toISOString() ?? null,
      byModel,
      bySkill,
      comments: comments.map((row) => ({
        ...row,
        updatedAt: row.updatedAt.toISOString(),
      })),
    };
  }
}

/** A day means all of it: `from` at its start, `to` at the start of the next one (so it is included). */
function filterOf(query: AdminFeedbackQueryDto): FeedbackFilter {
  const from = query.from ? instant('from', query.from, 0) : undefined;
  const to = query.to ? instant('to', query.to, DAY_MS) : undefined;
  if (from && to && to < from)
    throw invalid('to', 'to must not be before from');
  // The day after 9999-12-31 has no ISO 8601 form: a `to` there bounds nothing.
  return { model: query.model, from, to: to && to <= LATEST ? to : undefined };
}

const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999));

/** The pattern of the query DTO admits 2026-02-31 and year 0; Date would roll the one over and the database refuse the other. */
function instant(field: string, value: string, afterDay: number): Date {
  const day = value.slice(0, 10);
  const isDay = value.length === 10;
  const start = new Date(`${day}T00:00:00Z`);
  const at = isDay ? start : new Date(value);
  if (
    Number.isNaN(at.getTime()) ||
    start.toISOString().slice(0, 10) !== day ||
    at.getTime() < EARLIEST ||
    at > LATEST
  )
    throw invalid(field, `${field} must be a real date between 1970 and 9999`);
  return new Date(at.getTime() + (isDay ? afterDay : 0));
}

function invalid(field: string, message: string): AppError {
  return new AppError('validation_failed', message, {
    errors: [{ field, code: 'invalid_date', message }],
  });
}
