import { Module } from '@nestjs/common';
import { AccountExportController } from './account-export.controller';
import { AccountExportRepository } from './account-export.repository';
import { AccountExportService } from './account-export.service';

/** GET /v1/auth/me/export: the caller's data as one streamed JSON document. */
@Module({
  controllers: [AccountExportController],
  providers: [AccountExportRepository, AccountExportService],
})
export class AccountExportModule {}
