import { Module } from '@nestjs/common';
import { AccountDeletionModule } from '../account/deletion/account-deletion.module';
import { AuditModule } from '../audit/audit.module';
import { AuthModule } from '../auth/auth.module';
import { BillingModule } from '../billing/billing.module';
import { CatalogModule } from '../catalog/catalog.module';
import { FeedbackModule } from '../feedback/feedback.module';
import { ModelsModule } from '../models/models.module';
import { QuotaModule } from '../quota/quota.module';
import { SkillsModule } from '../skills/skills.module';
import { ToolsModule } from '../tools/tools.module';
import { AdminCatalogController } from './admin-catalog.controller';
import { AdminCatalogRepository } from './admin-catalog.repository';
import { AdminCatalogService } from './admin-catalog.service';
import { AdminMcpController } from './admin-mcp.controller';
import { AdminMcpService } from './admin-mcp.service';
import { AdminBillingController } from './admin-billing.controller';
import { AdminBillingRepository } from './admin-billing.repository';
import { AdminBillingService } from './admin-billing.service';
import { AdminActionsGate } from './admin-actions.gate';
import { AdminOrgsController } from './admin-orgs.controller';
import { AdminOrgsRepository } from './admin-orgs.repository';
import { AdminOrgsService } from './admin-orgs.service';
import { AdminFeedbackController } from './admin-feedback.controller';
import { AdminFeedbackService } from './admin-feedback.service';
import { AdminProvidersController } from './admin-providers.controller';
import { AdminProvidersService } from './admin-providers.service';
import { AdminGuard } from './admin.guard';
import { AdminUsersController } from './admin-users.controller';
import { AdminUsersRepository } from './admin-users.repository';
import { AdminUsersService } from './admin-users.service';
import { AuditController } from './audit.controller';
import { AuditService } from './audit.service';
import { ConfiguredAdminsService } from './configured-admins.service';

/** The internal /v1/admin surface: admins only (AdminGuard after the global session guard). */
@Module({
  imports: [
    AccountDeletionModule,
    AuditModule,
    AuthModule,
    BillingModule,
    CatalogModule,
    FeedbackModule,
    ModelsModule,
    QuotaModule,
    SkillsModule,
    ToolsModule,
  ],
  controllers: [
    AdminUsersController,
    AdminOrgsController,
    AdminBillingController,
    AdminCatalogController,
    AdminMcpController,
    AdminProvidersController,
    AdminFeedbackController,
    AuditController,
  ],
  providers: [
    AdminActionsGate,
    AdminFeedbackService,
    AdminCatalogRepository,
    AdminCatalogService,
    AdminMcpService,
    AdminBillingRepository,
    AdminBillingService,
    AdminGuard,
    AdminOrgsRepository,
    AdminOrgsService,
    AdminProvidersService,
    AdminUsersRepository,
    AdminUsersService,
    AuditService,
    ConfiguredAdminsService,
  ],
})
export class AdminModule {}
