import { ToolsModule } from '../tools/tools.module';
import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module';
import { CatalogModule } from '../catalog/catalog.module';
import { FilesModule } from '../files/files.module';
import { OrgsModule } from '../orgs/orgs.module';
import { ModelsModule } from '../models/models.module';
import { ChatAdmission } from './admission/chat-admission';
import { ChatController } from './chat.controller';
import { ChatPipelineService } from './chat-pipeline.service';
import { ChatRequestsRepository } from './chat-requests.repository';
import { ChatService } from './chat.service';
import { ChatSweeperService } from './chat-sweeper.service';
import { LeaseKeeper } from './lease-keeper';
import { RunStore } from './run-store';
import { LiveStreams } from './live/live-streams';
import { ConversationTurnsController } from './conversation-turns.controller';
import { ConversationTurnsService } from './conversation-turns.service';
import { RunStops } from './stop/run-stops';
import { RemoteRunFollower } from './live/remote-run-follower';
import { RunClaimer } from './run/run-claimer';
import { RunExecutor } from './run/run-executor';
import { ModelRouter } from './run/model-router';
import { RunPlanner } from './run/run-planner';
import { RunSettler } from './run/run-settler';

/** POST /v1/chat, stop, the conversation routes that run the pipeline, and the pipeline Skill runs reuse (exported for the skills module). */
@Module({
  imports: [
    CatalogModule,
    ModelsModule,
    ConversationsModule,
    FilesModule,
    OrgsModule,
    ToolsModule,
  ],
  controllers: [ChatController, ConversationTurnsController],
  providers: [
    ChatAdmission,
    ChatPipelineService,
    ChatRequestsRepository,
    ChatService,
    ChatSweeperService,
    ConversationTurnsService,
    LeaseKeeper,
    LiveStreams,
    RemoteRunFollower,
    RunClaimer,
    RunExecutor,
    ModelRouter,
    RunPlanner,
    RunSettler,
    RunStops,
    RunStore,
  ],
  // RunStops: account erasure stops the account's live runs.
  exports: [ChatAdmission, ChatPipelineService, OrgsModule, RunStops],
})
export class ChatModule {}
