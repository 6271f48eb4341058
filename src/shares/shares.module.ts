import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { NextFunction, Request, Response } from 'express';
import { ConversationsModule } from '../conversations/conversations.module';
import { SharedConversationsController } from './shared-conversations.controller';
import { SharesController } from './shares.controller';
import { SharesRepository } from './shares.repository';
import { SharesService } from './shares.service';

/** Set before the guards run, so a rate-limit refusal or a 404 of a shared link is not indexed either. */
function noIndex(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Robots-Tag', 'noindex');
  next();
}

@Module({
  imports: [ConversationsModule],
  controllers: [SharesController, SharedConversationsController],
  providers: [SharesRepository, SharesService],
})
export class SharesModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(noIndex).forRoutes(SharedConversationsController);
  }
}
