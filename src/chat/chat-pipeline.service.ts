import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { requestContext } from '../common/logging/request-context';
import { inSpan } from '../common/tracing/spans';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Metrics } from '../infra/metrics/metrics';
import { RunRequest } from './admission/chat-admission';
import { ChatStream, toChatStream } from './chat-stream';
import { RemoteRunFollower } from './live/remote-run-follower';
import { billedModel, ChatTurn } from './run/chat-turn';
import { replay } from './run/replay';
import { Claimed, RunClaimer } from './run/run-claimer';
import { RunExecutor } from './run/run-executor';

/**
 * The one path of every billed model call (chat, Skill runs, regenerate, edit), in four steps: plan the
 * run (RunPlanner), claim its key and reserve its quota in one statement (RunClaimer), execute it detached
 * from the client (RunExecutor), settle it in one statement (RunSettler). A retry of a key already used
 * replays or joins that request instead (replay, RemoteRunFollower). docs/adr/0027-idempotent-chat-claim-and-reserve.md
 */
@Injectable()
export class ChatPipelineService implements OnModuleDestroy {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly claimer: RunClaimer,
    private readonly executor: RunExecutor,
    private readonly follower: RemoteRunFollower,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: Metrics,
  ) {
    metrics.observeLiveStreams(() => this.running.size);
  }

  /**
   * Starts the turn, or replays / joins the request already made with its key. Resolves once the first
   * byte of the answer is known, so a failure before it is still a problem response.
   */
  async start(
    user: SessionUser,
    turn: ChatTurn,
    request: RunRequest = {},
  ): Promise<ChatStream> {
    // Until the first byte of the answer is known (or the start failed), the run counts as starting for
    // admission: what an instance cannot start in time is refused at the door (docs/adr/0065).
    try {
      return await this.startUntilFirstByte(user, turn, request);
    } finally {
      request.started?.();
    }
  }

  private async startUntilFirstByte(
    user: SessionUser,
    turn: ChatTurn,
    request: RunRequest,
  ): Promise<ChatStream> {
    const begun = await inSpan(
      'chat.start',
      { 'gen_ai.request.model': turn.model },
      async (span) => {
        const result = await this.planAndClaim(user, turn, request);
        span.setAttribute('chat.replayed', result.kind === 'replay');
        if (result.kind === 'claimed')
          span.setAttribute('chat.run_id', result.plan.runId);
        return result;
      },
    );
    if (begun.kind === 'replay')
      return replay(begun.request, turn, this.follower, request.signal);
    const { plan, writer } = begun;
    // Detached from the request: outside its async context (nothing of the request stays reachable from the
    // run), its log lines carry the request id explicitly.
    const requestId = requestContext.getStore()?.requestId;
    this.track(
      requestContext.exit(() =>
        this.executor.execute(
          user,
          begun.turn,
          plan,
          writer,
          requestId,
          request.canApprove,
        ),
      ),
    );
    const stream = await toChatStream(
      {
        runId: plan.runId,
        model: plan.model.id,
        conversationId: plan.conversationId,
        replayed: false,
        answer: writer.answer,
        contextFiles: plan.files.map((file) => file.id),
      },
      request.signal,
    );
    // The first text came: the router knows which model answers it (a fallback, perhaps).
    const answered = billedModel(plan).id;
    return answered === plan.model.id
      ? stream
      : { ...stream, model: answered, requestedModel: plan.model.id };
  }

  /** Plan -> claim, each step answering the earlier request instead when the key already holds one. */
  private async planAndClaim(
    user: SessionUser,
    turn: ChatTurn,
    request: RunRequest,
  ): Promise<Claimed> {
    const prepared = await this.claimer.prepare(user, turn);
    if (prepared.kind === 'replay') return prepared;
    const planned = await this.claimer.plan(user, prepared.turn);
    if (planned.kind === 'replay') return planned;
    return this.claimer.claim(user, prepared.turn, planned.plan, request);
  }

  /**
   * Waits for detached generations so they settle before the database pool closes: at most half the
   * shutdown budget (the HTTP drain used some already); runs still going after that are left to the sweeper.
   */
  async onModuleDestroy(): Promise<void> {
    if (this.running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise(
      (resolve) =>
        (timer = setTimeout(resolve, this.config.http.shutdownTimeoutMs / 2)),
    );
    await Promise.race([Promise.allSettled([...this.running]), timeout]);
    clearTimeout(timer);
  }

  private track(run: Promise<void>): void {
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }
}
