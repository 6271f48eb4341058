import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppLogger } from './app-logger';
import { Logger } from './logger';

/** Injection token of the root pino logger (created once in server.ts or by the test harness). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

@Global()
@Module({})
export class LoggingModule {
  static forRoot(root: Logger): DynamicModule {
    return {
      module: LoggingModule,
      providers: [
        { provide: ROOT_LOGGER, useValue: root },
        { provide: AppLogger, useFactory: () => new AppLogger(root) },
      ],
      exports: [ROOT_LOGGER, AppLogger],
    };
  }
}
