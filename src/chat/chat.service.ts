import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { pollUntil } from '../common/waiting';
import { RunRequest } from './admission/chat-admission';
import { ChatPipelineService } from './chat-pipeline.service';
import { StoredRun } from './chat-requests.repository';
import { ChatStream } from './chat-stream';
import { ChatRequestDto } from './dto/chat-request.dto';
import { StopRunDto } from './dto/conversation-turn.dto';
import { RunStatusDto } from './dto/run-status.response';
import { fingerprintOf } from './fingerprint';
import { LiveStreams } from './live/live-streams';
import { RunStore } from './run-store';
import { RunStops } from './stop/run-stops';
import { ChatTurn } from './run/chat-turn';
import { OrgAccess } from '../orgs/org-access';

/** How long POST /v1/chat/stop waits for the run to end, so that it can answer `stopped`. */
const STOP_WAIT_MS = 5_000;
const STOP_POLL_MS = 100;

@Injectable()
export class ChatService {
  constructor(
    private readonly pipeline: ChatPipelineService,
    private readonly store: RunStore,
    private readonly stops: RunStops,
    private readonly live: LiveStreams,
    private readonly orgs: OrgAccess,
  ) {}

  send(
    user: SessionUser,
    request: ChatRequestDto,
    runRequest: RunRequest = {},
  ): Promise<ChatStream> {
    const messages = request.messages.map(({ role, content }) => ({
      role,
      content,
    }));
    return this.pipeline.start(
      user,
      {
        model: request.model,
        idempotencyKey: request.idempotencyKey,
        // fileIds is left out of a request without files, so its fingerprint is the one it always had.
        fingerprint: fingerprintOf({
          kind: 'chat',
          model: request.model,
          conversationId: request.conversationId ?? null,
          messages,
          fileIds: request.fileIds,
          tools: request.tools,
          organizationId: request.organizationId,
        }),
        conversationId: request.conversationId,
        fileIds: request.fileIds,
        tools: request.tools,
        messages,
        ...this.orgPayment(user, request.organizationId),
      },
      runRequest,
    );
  }

  /**
   * A run billed to an organization: its membership and pool are checked once the key is known to be
   * new, so a retry of a finished run replays even after its author left the organization.
   */
  private orgPayment(
    user: SessionUser,
    organizationId: string | undefined,
  ): Pick<ChatTurn, 'prepareNewRequest'> {
    if (!organizationId) return {};
    return {
      prepareNewRequest: async () => ({
        payer: await this.orgs.payer(user, organizationId),
      }),
    };
  }

  /**
   * Stops the caller's run under this key, wherever it is generated, and answers its status once it has
   * ended (or after STOP_WAIT_MS, still `streaming`, when its instance has not acted yet). A run that had
   * already ended is left as it is.
   */
  async stop(user: SessionUser, request: StopRunDto): Promise<RunStatusDto> {
    let run = await this.store.findByKey(user.id, request.idempotencyKey);
    if (!run)
      throw new AppError(
        'not_found',
        'No request of yours has this idempotencyKey.',
      );
    if (run.status === 'streaming') {
      await this.stops.stop([run.id]);
      run = await this.untilEnded(run);
    }
    return {
      idempotencyKey: request.idempotencyKey,
      requestId: run.id,
      conversationId: run.conversationId,
      status: run.status,
    };
  }

  /** The run once it is no longer streaming, or as it is after STOP_WAIT_MS. */
  private async untilEnded(run: StoredRun): Promise<StoredRun> {
    const deadline = Date.now() + STOP_WAIT_MS;
    const local = this.live.localAnswer(run.id);
    if (local) await local.whenEnded(STOP_WAIT_MS);
    return pollUntil(
      async () => (await this.store.findOutcome(run.id)) ?? run,
      (now) => now.status !== 'streaming',
      { intervalMs: STOP_POLL_MS, deadline },
    );
  }
}
