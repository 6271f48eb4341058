import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import {
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  PageQueryDto,
  toPage,
} from '../common/pagination';
import { LedgerPageDto } from './dto/ledger-entry.response';
import { LedgerRepository, runDetails } from './ledger.repository';

@Injectable()
export class LedgerService {
  constructor(private readonly ledger: LedgerRepository) {}

  async listUsage(
    user: SessionUser,
    query: PageQueryDto,
  ): Promise<LedgerPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.ledger.findPageOfUser(
      user.id,
      limit,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    return toPage(
      rows,
      limit,
      (row) => ({ at: row.createdAt, id: row.id }),
      ({ modelId, createdAt, steps, toolCalls, ...row }) => ({
        ...row,
        ...runDetails({ steps, toolCalls }),
        model: modelId,
        createdAt: createdAt.toISOString(),
      }),
    );
  }
}
