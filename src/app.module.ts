import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER, APP_PIPE, HttpAdapterHost } from '@nestjs/core';
import { AccountExportModule } from './account/export/account-export.module';
import { AccountDeletionModule } from './account/deletion/account-deletion.module';
import { AdminModule } from './admin/admin.module';
import { AuthModule } from './auth/auth.module';
import { BillingModule } from './billing/billing.module';
import { ChatModule } from './chat/chat.module';
import { CatalogModule } from './catalog/catalog.module';
import { ClockModule } from './common/clock';
import { ProblemDetailsFilter } from './common/errors/problem-details.filter';
import { Logger } from './common/logging/logger';
import { LifecycleModule } from './common/lifecycle/drain-state';
import { LoggingModule, ROOT_LOGGER } from './common/logging/logging.module';
import { RateLimitModule } from './common/rate-limit/rate-limit.module';
import { createValidationPipe } from './common/validation/validation.pipe';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { ToolsModule } from './tools/tools.module';
import { FilesModule } from './files/files.module';
import { HealthModule } from './health/health.module';
import { LedgerModule } from './ledger/ledger.module';
import { MailModule } from './infra/mail/mail.module';
import { MetricsModule } from './infra/metrics/metrics.module';
import { ModelsModule } from './models/models.module';
import { ConversationsModule } from './conversations/conversations.module';
import { QuotaModule } from './quota/quota.module';
import { PrismaModule } from './infra/prisma/prisma.module';
import { RedisModule } from './infra/redis/redis.module';
import { StorageModule } from './infra/storage/storage.module';
import { PlansModule } from './plans/plans.module';
import { SkillsModule } from './skills/skills.module';
import { OrgsModule } from './orgs/orgs.module';
import { SharesModule } from './shares/shares.module';
import { FeedbackModule } from './feedback/feedback.module';

@Module({})
export class AppModule {
  /**
   * The whole service, built from an already validated config and the root logger. `extraModules` lets
   * tests mount probe routes beside the real ones; production passes none.
   */
  static forRoot(
    config: AppConfig,
    logger: Logger,
    extraModules: Type[] = [],
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        LifecycleModule,
        ClockModule,
        MetricsModule,
        PrismaModule,
        RedisModule,
        StorageModule,
        RateLimitModule,
        MailModule,
        CatalogModule,
        HealthModule,
        PlansModule,
        AuthModule,
        ModelsModule,
        QuotaModule,
        ConversationsModule,
        SharesModule,
        FeedbackModule,
        LedgerModule,
        ChatModule,
        OrgsModule,
        SkillsModule,
        FilesModule,
        ToolsModule,
        BillingModule,
        AdminModule,
        AccountDeletionModule,
        AccountExportModule,
        ...extraModules,
      ],
      providers: [
        { provide: APP_PIPE, useFactory: createValidationPipe },
        {
          provide: APP_FILTER,
          inject: [HttpAdapterHost, ROOT_LOGGER],
          useFactory: (adapterHost: HttpAdapterHost, root: Logger) =>
            new ProblemDetailsFilter(adapterHost, root),
        },
      ],
    };
  }
}
