import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Batcher, SubmitOptions } from '../infra/database/batcher';
import {
  ChatRequestsRepository,
  ClaimResult,
  NewChatRequest,
  Settlement,
  StoredRun,
} from './chat-requests.repository';

/** Most claims or settlements in one statement. */
const MAX_BATCH = 32;
/** Connections of the pool left to everything else (sessions, history, the other features). */
const CONNECTIONS_KEPT_FREE = 2;

/**
 * The one door to the chat requests table: every read and write of a run goes through here (the
 * repository is not used elsewhere). Where runs are claimed and settled. Claims and settlements that arrive while others are being written
 * are written together, in one statement and one transaction each (group commit), so a burst of chats
 * costs the database far less per chat; alone, each leaves at once. Within a batch, runs go in user
 * order, so concurrent batches take the users' quota rows in the same order (no deadlock between them).
 * docs/adr/0030-group-commit.md
 */
@Injectable()
export class RunStore implements OnModuleInit {
  private readonly claims: Batcher<NewChatRequest, ClaimResult>;
  private readonly settlements: Batcher<Settlement & Payer, boolean>;

  constructor(
    private readonly requests: ChatRequestsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    // Claims may use most of the pool; settlements keep a share of their own so a flood of new chats
    // cannot hold the running ones back from finishing.
    const available = Math.max(
      2,
      config.database.poolSize - CONNECTIONS_KEPT_FREE,
    );
    const settling = Math.max(1, Math.floor(available / 4));
    this.claims = new Batcher(
      (batch) =>
        inUserOrder(batch, (requests) => this.requests.claimMany(requests)),
      { maxBatch: MAX_BATCH, maxInFlight: available - settling },
    );
    this.settlements = new Batcher(
      (batch) => inUserOrder(batch, (runs) => this.requests.settleMany(runs)),
      { maxBatch: MAX_BATCH, maxInFlight: settling },
    );
  }

  /**
   * Refuses to start on a database without this release's functions: an instance deployed before its
   * migrations ran (MIGRATE_AT_START=false) would otherwise fail every chat.
   */
  async onModuleInit(): Promise<void> {
    const missing = await this.requests.missingDefinitions();
    if (missing.length > 0)
      throw new Error(
        `The database lacks ${missing.join(', ')}: run this release's migrations first (node dist/migrate.js, ` +
          'or MIGRATE_AT_START=true), which also apply prisma/sql.',
      );
  }

  /** Claims waiting for their statement. */
  get waitingClaims(): number {
    return this.claims.waiting;
  }

  /** How long the oldest claim waiting for its statement has waited (ms; 0 when none waits). */
  oldestClaimWaitMs(): number {
    return this.claims.oldestWaitMs();
  }

  /** Rejects with NotDispatched when it is still waiting at `deadline` or its client leaves first. */
  claim(request: NewChatRequest, options: SubmitOptions): Promise<ClaimResult> {
    return this.claims.submit(request, options);
  }

  /** False when the run was no longer streaming (the sweeper failed it first). */
  settle(payer: Payer, run: Settlement): Promise<boolean> {
    return this.settlements.submit({ ...run, ...payer });
  }

  /** Reserves `credits` more for a run about to take another step; false when the day's limit refuses. */
  growReservation(runId: string, credits: number): Promise<boolean> {
    return this.requests.growReservation(runId, credits);
  }

  findByKey(userId: string, idempotencyKey: string): Promise<StoredRun | null> {
    return this.requests.findByKey(userId, idempotencyKey);
  }

  findOutcome(runId: string): Promise<StoredRun | null> {
    return this.requests.findOutcome(runId);
  }

  recordAttachedFiles(
    runId: string,
    files: { id: string; name: string; kind: string }[],
  ): Promise<void> {
    return this.requests.recordAttachedFiles(runId, files);
  }

  recordAnsweringModel(runId: string, modelId: string): Promise<void> {
    return this.requests.recordAnsweringModel(runId, modelId);
  }

  keepInterruptedText(runId: string, text: string): Promise<void> {
    return this.requests.keepInterruptedText(runId, text);
  }

  /** Extends the leases of these runs; answers those whose stop was asked for meanwhile. */
  renewLeases(runIds: string[], leaseMs: number): Promise<string[]> {
    return this.requests.renewLeases(runIds, leaseMs);
  }

  /** Marks these runs (those still streaming) as asked to stop. */
  markStopRequested(runIds: string[]): Promise<void> {
    return this.requests.markStopRequested(runIds);
  }

  /** Fails the runs whose lease expired, except `ownRuns`, and releases their reservations; answers their ids. */
  failExpiredRuns(ownRuns: string[]): Promise<string[]> {
    return this.requests.failExpiredRuns(ownRuns);
  }
}

/** Who pays for a run: its user, or the organization named (its pool and its member's day). */
export interface Payer {
  userId: string;
  organizationId?: string;
}

/**
 * The order quota rows are taken in: users' days first (by user), then organizations' (by organization:
 * its pool, then its members by user), the same order in every batch.
 */
function payerKey(payer: Payer): string {
  return payer.organizationId
    ? `1${payer.organizationId}${payer.userId}`
    : `0${payer.userId}`;
}

/** Runs `write` over the items sorted by payer and answers its results in the items' own order. */
async function inUserOrder<I extends Payer, R>(
  items: I[],
  write: (sorted: I[]) => Promise<R[]>,
): Promise<R[]> {
  const order = items
    .map((item, index) => ({ item, index, key: payerKey(item) }))
    .sort((a, b) =>
      a.key < b.key ? -1 : a.key > b.key ? 1 : a.index - b.index,
    );
  const results = await write(order.map((entry) => entry.item));
  const answered = new Array<R>(items.length);
  order.forEach(
    (entry, position) => (answered[entry.index] = results[position]),
  );
  return answered;
}
