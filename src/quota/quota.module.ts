import { Module } from '@nestjs/common';
import { QuotaController } from './quota.controller';
import { QuotaRepository } from './quota.repository';
import { QuotaService } from './quota.service';

@Module({
  controllers: [QuotaController],
  providers: [QuotaRepository, QuotaService],
  exports: [QuotaService, QuotaRepository],
})
export class QuotaModule {}
