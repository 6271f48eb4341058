import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module';
import { CatalogModule } from '../catalog/catalog.module';
import { ModelsModule } from '../models/models.module';
import { ChatController } from './chat.controller';
import { ChatPipelineService } from './chat-pipeline.service';
import { ChatRequestsRepository } from './chat-requests.repository';
import { ChatService } from './chat.service';
import { ChatSweeperService } from './chat-sweeper.service';
import { LiveStreams } from './live/live-streams';

/** POST /v1/chat and the pipeline Skill runs reuse (exported for the skills module). */
@Module({
  imports: [CatalogModule, ModelsModule, ConversationsModule],
  controllers: [ChatController],
  providers: [ChatPipelineService, ChatRequestsRepository, ChatService, ChatSweeperService, LiveStreams],
  exports: [ChatPipelineService],
})
export class ChatModule {}
