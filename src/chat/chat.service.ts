import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { RunRequest } from './admission/chat-admission';
import { ChatPipelineService } from './chat-pipeline.service';
import { ChatStream } from './chat-stream';
import { ChatRequestDto } from './dto/chat-request.dto';
import { fingerprintOf } from './fingerprint';

@Injectable()
export class ChatService {
  constructor(private readonly pipeline: ChatPipelineService) {}

  send(user: SessionUser, request: ChatRequestDto, runRequest: RunRequest = {}): Promise<ChatStream> {
    const messages = request.messages.map(({ role, content }) => ({ role, content }));
    return this.pipeline.start(
      user,
      {
        model: request.model,
        idempotencyKey: request.idempotencyKey,
        // fileIds is left out of a request without files, so its fingerprint is the one it always had.
        fingerprint: fingerprintOf({ kind: 'chat', model: request.model, conversationId: request.conversationId ?? null, messages, fileIds: request.fileIds }),
        conversationId: request.conversationId,
        fileIds: request.fileIds,
        messages,
      },
      runRequest,
    );
  }
}
