import { Injectable } from '@nestjs/common';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../common/pagination';
import { AuditRepository, AuditRow } from '../audit/audit.repository';
import {
  AuditEntryDto,
  AuditPageDto,
  AuditQueryDto,
} from './dto/audit-entry.dto';

@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  async list(query: AuditQueryDto): Promise<AuditPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.audit.findPage(
      { targetId: query.targetId },
      limit,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    return toPage(
      rows,
      limit,
      (row) => ({ at: row.createdAt, id: row.id }),
      toEntry,
    );
  }
}

function toEntry(row: AuditRow): AuditEntryDto {
  return {
    id: row.id,
    admin: row.admin,
    action: row.action,
    targetType: row.targetType,
    targetId: row.targetId,
    before: row.before,
    after: row.after,
    reason: row.reason,
    createdAt: row.createdAt.toISOString(),
  };
}
