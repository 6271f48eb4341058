import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module';
import { FeedbackController } from './feedback.controller';
import { FeedbackRepository } from './feedback.repository';
import { FeedbackService } from './feedback.service';

@Module({
  imports: [ConversationsModule],
  controllers: [FeedbackController],
  providers: [FeedbackRepository, FeedbackService],
  exports: [FeedbackRepository],
})
export class FeedbackModule {}
