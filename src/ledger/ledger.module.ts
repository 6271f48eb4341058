import { Module } from '@nestjs/common';
import { LedgerController } from './ledger.controller';
import { LedgerRepository } from './ledger.repository';
import { LedgerService } from './ledger.service';

@Module({
  controllers: [LedgerController],
  providers: [LedgerRepository, LedgerService],
  exports: [LedgerRepository],
})
export class LedgerModule {}
