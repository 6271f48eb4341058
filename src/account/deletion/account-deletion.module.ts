import { Module } from '@nestjs/common';
import { AuthModule } from '../../auth/auth.module';
import { BillingModule } from '../../billing/billing.module';
import { ChatModule } from '../../chat/chat.module';
import { AccountDeletionController } from './account-deletion.controller';
import { AccountDeletionRepository } from './account-deletion.repository';
import { AccountDeletionService } from './account-deletion.service';

/** DELETE /v1/auth/me, and the erasure the admin route reuses (exported). */
@Module({
  imports: [AuthModule, BillingModule, ChatModule],
  controllers: [AccountDeletionController],
  providers: [AccountDeletionRepository, AccountDeletionService],
  exports: [AccountDeletionService],
})
export class AccountDeletionModule {}
