import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { ChangeFeed } from '../database/change-feed';
import { PrismaService } from './prisma.service';

@Global()
@Module({
  providers: [
    {
      provide: PrismaService,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        if (!config.database.url) throw new Error('DATABASE_URL is not resolved: the embedded database must be started before the app');
        return new PrismaService(config.database.url, config.database.poolSize);
      },
    },
    ChangeFeed,
  ],
  exports: [PrismaService, ChangeFeed],
})
export class PrismaModule {}
