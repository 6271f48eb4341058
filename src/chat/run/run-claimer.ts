import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import { Clock } from '../../common/clock';
import { AppError } from '../../common/errors/app-error';
import { AppLogger } from '../../common/logging/app-logger';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { NotDispatched } from '../../infra/database/batcher';
import { Metrics } from '../../infra/metrics/metrics';
import {
  ChatAdmission,
  overloaded,
  RunRequest,
} from '../admission/chat-admission';
import { ClaimResult, StoredRun } from '../chat-requests.repository';
import { titleFrom } from '../conversation-title';
import { LiveStreams, LiveWriter } from '../live/live-streams';
import { RunStore } from '../run-store';
import { ChatTurn, RunPlan } from './chat-turn';
import {
  organizationNotFound,
  organizationPlanRequired,
} from '../../orgs/org-access';
import {
  memberCapReached,
  modelNotAllowed,
  poolExhausted,
  quotaExceeded,
} from './refusals';
import { RunPlanner } from './run-planner';

/** A step of the start of a run: the request already made with the turn's key, or the run going on. */
export type Replay = { kind: 'replay'; request: StoredRun };
export type Prepared = Replay | { kind: 'prepared'; turn: ChatTurn };
export type Planned = Replay | { kind: 'planned'; plan: RunPlan };
export type Claimed =
  | Replay
  | { kind: 'claimed'; turn: ChatTurn; plan: RunPlan; writer: LiveWriter };

/**
 * The start of a run up to its claim. A retry always replays: the key is looked up before the checks
 * that apply only to a new request, again when planning refuses the request, and the claim itself
 * answers the request that holds the key. Otherwise the key is claimed, the quota reserved and a new
 * conversation created in one statement; a refusal leaves the key unused.
 * docs/adr/0027-idempotent-chat-claim-and-reserve.md
 */
@Injectable()
export class RunClaimer {
  constructor(
    private readonly store: RunStore,
    private readonly planner: RunPlanner,
    private readonly live: LiveStreams,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
    private readonly admission: ChatAdmission,
  ) {}

  /** The size check, then, for a turn with checks of its own or files, the key's lookup and those checks. */
  async prepare(user: SessionUser, turn: ChatTurn): Promise<Prepared> {
    this.planner.assertWithinSizeLimit(turn);
    if (!turn.prepareNewRequest && !turn.fileIds?.length)
      return { kind: 'prepared', turn };
    // A retry with files also skips ranking their text again.
    const earlier = await this.replayOf(user, turn);
    if (earlier) return earlier;
    const completion = await turn.prepareNewRequest?.();
    if (!completion) return { kind: 'prepared', turn };
    const completed = { ...turn, ...completion };
    // What the completion added (a Skill's instruction) counts too.
    this.planner.assertWithinSizeLimit(completed);
    return { kind: 'prepared', turn: completed };
  }

  /** The run's plan; when the request cannot be made now but its key holds an earlier one, that one. */
  async plan(user: SessionUser, turn: ChatTurn): Promise<Planned> {
    try {
      return { kind: 'planned', plan: await this.planner.plan(user, turn) };
    } catch (error) {
      const earlier =
        turn.prepareNewRequest || !(error instanceof AppError)
          ? null
          : await this.replayOf(user, turn);
      if (!earlier) throw error;
      return earlier;
    }
  }

  /** Claims the key (503 overloaded when the claim could not be written within the start deadline). */
  async claim(
    user: SessionUser,
    turn: ChatTurn,
    plan: RunPlan,
    request: RunRequest,
  ): Promise<Claimed> {
    // Before the claim: a refusal says when the quota of the claim's day resets, even across midnight.
    const now = this.clock.now();
    const writer = this.live.open(plan.runId);
    let claimed: ClaimResult;
    try {
      claimed = await this.write(user, turn, plan, request);
    } catch (error) {
      writer.discard();
      throw error;
    }
    if (claimed.outcome !== 'claimed') {
      writer.discard();
      if (claimed.outcome === 'taken')
        return { kind: 'replay', request: claimed.request };
      throw this.refusal(user, plan, claimed.outcome, now);
    }
    if (plan.files.length > 0) await this.recordAttachedFiles(plan);
    return { kind: 'claimed', turn, plan, writer };
  }

  /** The one lookup of the request already made with the turn's key. */
  private async replayOf(
    user: SessionUser,
    turn: ChatTurn,
  ): Promise<Replay | null> {
    const request = await this.store.findByKey(user.id, turn.idempotencyKey);
    return request ? { kind: 'replay', request } : null;
  }

  private async write(
    user: SessionUser,
    turn: ChatTurn,
    plan: RunPlan,
    request: RunRequest,
  ): Promise<ClaimResult> {
    try {
      return await this.store.claim(
        {
          id: plan.runId,
          userId: user.id,
          idempotencyKey: turn.idempotencyKey,
          fingerprint: turn.fingerprint,
          conversationId: plan.conversationId,
          newConversationTitle: plan.newConversation
            ? titleFrom(turn.messages)
            : undefined,
          modelId: plan.model.id,
          ...turn.skill,
          usageDay: plan.usageDay,
          reservedCredits: plan.reservedCredits,
          leaseMs: this.config.chat.leaseMs,
          organizationId: plan.organizationId,
        },
        { deadline: request.startBy, signal: request.signal },
      );
    } catch (error) {
      if (error instanceof NotDispatched) {
        if (error.reason === 'deadline') this.admission.refusedAfterAdmission();
        throw overloaded(
          `${this.store.waitingClaims} chats are waiting to start.`,
        );
      }
      throw error;
    }
  }

  /** Why the database refused the claim; the key stays unused. */
  private refusal(
    user: SessionUser,
    plan: RunPlan,
    outcome: Exclude<ClaimResult['outcome'], 'claimed' | 'taken'>,
    now: Date,
  ): AppError {
    switch (outcome) {
      case 'quota_exceeded':
        this.metrics.quotaRefused(user.planCode);
        return plan.organizationId
          ? poolExhausted(plan.reservedCredits, now)
          : quotaExceeded(plan.reservedCredits, now);
      case 'member_quota_exceeded':
        this.metrics.quotaRefused(user.planCode);
        return memberCapReached(plan.reservedCredits, now);
      case 'model_not_allowed':
        // The plan changed since this instance read it; the database's answer is the one that counts.
        return modelNotAllowed(plan.model.id, plan);
      case 'not_found':
        return new AppError('not_found', 'No such conversation.');
      case 'not_member':
        return organizationNotFound();
      case 'org_plan_required':
        return organizationPlanRequired();
    }
  }

  /** Kept for the conversation's history; a failure here does not stop the answer (it is logged). */
  private async recordAttachedFiles(plan: RunPlan): Promise<void> {
    await this.store
      .recordAttachedFiles(plan.runId, plan.files)
      .catch((error: unknown) =>
        this.log.warn(
          { err: error, runId: plan.runId },
          'attached files not recorded',
        ),
      );
  }
}
