import { Inject, Injectable } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import { Clock } from '../../common/clock';
import { AppError } from '../../common/errors/app-error';
import { isUuid } from '../../common/ids';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { ApprovalSignals } from './approval-signals';
import {
  ApprovalStatus,
  ToolApprovalsRepository,
} from './tool-approvals.repository';

/** The waiting run reads the row at least this often (a lost signal, a decision on an instance without Redis). */
const POLL_MS = 1_000;

/** What POST /v1/chat/approvals/:approvalId answers. */
export interface ApprovalDecision {
  approvalId: string;
  status: 'approved' | 'denied';
}

/**
 * Approvals of `confirm` tool calls (docs/adr/0061-tools.md): the run opens one and waits; the run's owner
 * decides it once, on any instance; TOOL_APPROVAL_TIMEOUT_MS without a decision, or a stop, denies it.
 */
@Injectable()
export class ToolApprovals {
  constructor(
    private readonly approvals: ToolApprovalsRepository,
    private readonly signals: ApprovalSignals,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A pending approval for this execution, expiring after TOOL_APPROVAL_TIMEOUT_MS. */
  async open(approval: {
    id: string;
    executionId: string;
    chatRequestId: string;
    userId: string;
  }): Promise<Date> {
    const expiresAt = new Date(
      this.clock.now().getTime() + this.config.tools.approvalTimeoutMs,
    );
    await this.approvals.create({ ...approval, expiresAt });
    return expiresAt;
  }

  /**
   * Resolves with the decision: `approved`, or `denied` (by the owner, at expiry, or because `stop`
   * aborted; a stop denies even a call approved meanwhile: the run is ending).
   */
  async waitFor(
    approvalId: string,
    expiresAt: Date,
    stop: AbortSignal,
  ): Promise<'approved' | 'denied'> {
    for (;;) {
      if (stop.aborted) {
        await this.approvals.close(approvalId, 'denied', this.clock.now());
        return 'denied';
      }
      const status = await this.approvals.statusOf(approvalId);
      if (status && status !== 'pending') return outcomeOf(status);
      const left = expiresAt.getTime() - this.clock.now().getTime();
      if (left <= 0) {
        if (await this.approvals.close(approvalId, 'expired', this.clock.now()))
          return 'denied';
        continue; // Decided at the last moment: read it.
      }
      await this.wake(approvalId, Math.min(left, POLL_MS), stop);
    }
  }

  /** The owner's decision: 404 for an approval not theirs, 409 once decided or expired. */
  async decide(
    user: SessionUser,
    approvalId: string,
    decision: 'approve' | 'deny',
  ): Promise<ApprovalDecision> {
    const status = decision === 'approve' ? 'approved' : 'denied';
    const id = approvalId.toLowerCase();
    if (!isUuid(id)) throw notFound();
    if (await this.approvals.decide(id, user.id, status, this.clock.now())) {
      this.signals.decided(id);
      return { approvalId: id, status };
    }
    if (!(await this.approvals.isOwned(id, user.id))) throw notFound();
    throw new AppError(
      'conflict',
      'This approval was already decided, or it expired (and the call was denied).',
    );
  }

  private wake(
    approvalId: string,
    ms: number,
    stop: AbortSignal,
  ): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unlisten();
        stop.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const unlisten = this.signals.listen(approvalId, done);
      stop.addEventListener('abort', done, { once: true });
    });
  }
}

function outcomeOf(status: ApprovalStatus): 'approved' | 'denied' {
  return status === 'approved' ? 'approved' : 'denied';
}

function notFound(): AppError {
  return new AppError('not_found', 'There is no such approval.');
}
