import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { ChangeFeed } from '../database/change-feed';
import { Metrics } from '../metrics/metrics';
import { PrismaService } from './prisma.service';

@Global()
@Module({
  providers: [
    {
      provide: PrismaService,
      inject: [APP_CONFIG, Metrics],
      useFactory: (config: AppConfig, metrics: Metrics) => {
        if (!config.database.url)
          throw new Error(
            'DATABASE_URL is not resolved: the embedded database must be started before the app',
          );
        const prisma = new PrismaService(
          config.database.url,
          config.database.poolSize,
        );
        metrics.observeDatabasePool(() => prisma.poolUsage());
        return prisma;
      },
    },
    ChangeFeed,
  ],
  exports: [PrismaService, ChangeFeed],
})
export class PrismaModule {}
