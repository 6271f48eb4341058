import { Inject, Injectable } from '@nestjs/common';
import { ReauthenticationService } from '../../auth/reauthentication.service';
import { SessionUser } from '../../auth/session-user';
import { SessionsService } from '../../auth/sessions.service';
import { PaymentGateways } from '../../billing/providers/payment-gateways';
import { RunStops } from '../../chat/stop/run-stops';
import { Clock } from '../../common/clock';
import { AppError } from '../../common/errors/app-error';
import { isDatabaseUnavailable } from '../../common/errors/database-unavailable';
import { doublingDelays, retrying } from '../../common/waiting';
import { AppLogger } from '../../common/logging/app-logger';
import { Db } from '../../infra/prisma/prisma.service';
import {
  OBJECT_STORAGE,
  ObjectStorage,
} from '../../infra/storage/object-storage';
import {
  AccountDeletionRepository,
  ErasableAccount,
  ErasableMembership,
  ErasedData,
} from './account-deletion.repository';
import { DeleteAccountDto } from './dto/delete-account.dto';

/** How long the erasure's transaction is tried again after a deadlock or a lost connection, and the waits. */
const ERASE_RETRY_FOR_MS = 5_000;
const ERASE_RETRY_FIRST_MS = 50;
const ERASE_RETRY_MAX_MS = 500;

/** Object deletions in flight at once: an account with thousands of files must not take one round trip each in turn. */
const PARALLEL_OBJECT_DELETES = 8;

export interface ErasureRequest {
  userId: string;
  /** The admin erasing the account (audited as such); null when its owner does. */
  adminId: string | null;
  reason: string;
  /** Runs first inside the erasure's transaction: the admin route's gate (lock, then "still an active admin?"). */
  enter?: (db: Db) => Promise<void>;
}

/**
 * Account erasure (GDPR art. 17), for DELETE /v1/auth/me and DELETE /v1/admin/users/:id. The steps that
 * cannot be rolled back come first and are each safe to repeat: subscriptions canceled at their provider,
 * file objects removed from storage, live runs asked to stop. Only then one transaction removes the personal
 * rows and turns the user row into a tombstone. A failure before it leaves the database untouched and a
 * retry completes the work; the transaction is all or nothing.
 * docs/adr/0024-account-erasure.md
 */
@Injectable()
export class AccountDeletionService {
  constructor(
    private readonly accounts: AccountDeletionRepository,
    private readonly reauthentication: ReauthenticationService,
    private readonly gateways: PaymentGateways,
    @Inject(OBJECT_STORAGE) private readonly storage: ObjectStorage,
    private readonly stops: RunStops,
    private readonly sessions: SessionsService,
    private readonly clock: Clock,
    private readonly log: AppLogger,
  ) {}

  /** The password, or for an account without one a sign-in in the last 10 minutes, then the erasure. */
  async deleteOwnAccount(
    user: SessionUser,
    input: DeleteAccountDto,
  ): Promise<void> {
    await this.reauthentication.confirm(user, input.password);
    await this.erase({
      userId: user.id,
      adminId: null,
      reason: 'Deleted by the account owner',
    });
  }

  async erase(request: ErasureRequest): Promise<void> {
    const { userId } = request;
    // Checked before anything irreversible happens, and again under the locks.
    await this.refuseUnerasable(
      userId,
      await this.accounts.findAccount(userId),
    );
    refuseLastOwner(await this.accounts.findMemberships(userId));
    const canceledSubscriptions = await this.cancelSubscriptions(userId);
    const removedObjects = await this.removeFileObjects(userId);
    await this.stops.stop(await this.accounts.findLiveRunIds(userId));

    // All or nothing, so tried again when PostgreSQL ends it to break a deadlock (a claim of the account's
    // that takes the same rows in another order) or loses the connection.
    const erased = await retrying(
      () => this.eraseRows(request, canceledSubscriptions),
      {
        delays: doublingDelays(ERASE_RETRY_FIRST_MS, ERASE_RETRY_MAX_MS),
        giveUpAt: Date.now() + ERASE_RETRY_FOR_MS,
        retryable: isDatabaseUnavailable,
        onRetry: (error, retryInMs) =>
          this.log.warn(
            { err: error, user: userId, retryInMs },
            'account erasure transaction failed: trying again',
          ),
      },
    );
    // Every instance hears of it from the database (sessions and user changed); this one forgets it before answering.
    this.sessions.forgetUser(userId);
    await this.removeLateObjects(erased.storageKeys, removedObjects);
    this.log.info(
      { user: userId, admin: request.adminId, ...counts(erased) },
      'account erased',
    );
  }

  /** The one transaction that removes the personal rows and turns the user row into a tombstone. */
  private eraseRows(
    request: ErasureRequest,
    canceledSubscriptions: string[],
  ): Promise<ErasedData> {
    const { userId } = request;
    return this.accounts.inTransaction(async (db) => {
      await request.enter?.(db);
      await this.accounts.lockAdminActions(db);
      await this.accounts.lockSubscriptionsOfUser(db, userId);
      // The organizations before the account's row: a claim of the account's takes them in that order too
      // (the organization KEY SHARE, then the user through its foreign keys).
      await this.accounts.lockOrganizationsOf(db, userId);
      const memberships = await this.accounts.findMemberships(userId, db);
      const account = await this.refuseUnerasable(
        userId,
        await this.accounts.lockAccount(db, userId),
        db,
      );
      refuseLastOwner(memberships);
      await this.refuseUncanceledSubscriptions(
        db,
        userId,
        canceledSubscriptions,
      );
      const now = this.clock.now();
      const subscriptionsCanceled =
        await this.accounts.markSubscriptionsCanceled(
          db,
          canceledSubscriptions,
          now,
        );
      const data = await this.accounts.deletePersonalData(db, userId);
      await this.accounts.turnIntoTombstone(db, userId, now);
      await this.accounts.recordErasure(db, {
        adminId: request.adminId,
        userId,
        reason: request.reason,
        before: {
          role: account.role,
          planCode: account.planCode,
          disabled: account.disabledAt !== null,
        },
        after: { deleted: true, subscriptionsCanceled, ...counts(data) },
      });
      return data;
    });
  }

  private async refuseUnerasable(
    userId: string,
    account: ErasableAccount | null,
    db?: Db,
  ): Promise<ErasableAccount> {
    if (!account) throw new AppError('not_found', 'There is no such user.');
    if (account.deletedAt) throw accountDeleted();
    if (
      account.role === 'admin' &&
      (await this.accounts.countOtherActiveAdmins(userId, db)) === 0
    ) {
      throw new AppError(
        'last_admin',
        'The last active admin cannot be deleted; promote another account first.',
      );
    }
    return account;
  }

  /**
   * Canceled at the provider one by one; a provider that cannot be reached stops the erasure (503) before
   * anything is deleted. The ones canceled so far stay canceled there: a retry finds them gone, which counts as done.
   */
  private async cancelSubscriptions(userId: string): Promise<string[]> {
    const subscriptions = await this.accounts.findBillableSubscriptions(userId);
    for (const subscription of subscriptions) {
      await this.gateways
        .get(subscription.provider)
        .cancelSubscription(subscription.providerSubscriptionId);
    }
    return subscriptions.map((subscription) => subscription.id);
  }

  /** A subscription bought between the cancellations and the lock was not canceled at its provider: erasing now would leave it billing. */
  private async refuseUncanceledSubscriptions(
    db: Db,
    userId: string,
    canceled: string[],
  ): Promise<void> {
    const billable = await this.accounts.findBillableSubscriptions(userId, db);
    if (billable.some((subscription) => !canceled.includes(subscription.id))) {
      throw new AppError(
        'conflict',
        'A subscription of the account started during the deletion; nothing was deleted. Retry the request.',
      );
    }
  }

  /** Objects before records (as a file's own deletion does): on a failure every record stays and a retry completes it. */
  private async removeFileObjects(userId: string): Promise<Set<string>> {
    const keys = await this.accounts.findFileStorageKeys(userId);
    try {
      for (
        let first = 0;
        first < keys.length;
        first += PARALLEL_OBJECT_DELETES
      ) {
        await Promise.all(
          keys
            .slice(first, first + PARALLEL_OBJECT_DELETES)
            .map((key) => this.storage.delete(key)),
        );
      }
    } catch (error) {
      this.log.error(
        { err: error, user: userId, driver: this.storage.driver },
        'could not delete a stored object of an account being erased',
      );
      throw new AppError(
        'storage_unavailable',
        'The account’s files could not be deleted right now; the account was not deleted. Retry the request.',
      );
    }
    return new Set(keys);
  }

  /**
   * An upload recorded after the objects were listed lost its record in the transaction: its object is
   * removed now. The account is already erased, so a failure here is logged for an operator, not answered.
   */
  private async removeLateObjects(
    storageKeys: string[],
    removed: Set<string>,
  ): Promise<void> {
    for (const key of storageKeys.filter(
      (candidate) => !removed.has(candidate),
    )) {
      await this.storage
        .delete(key)
        .catch((error: unknown) =>
          this.log.error(
            { err: error, storageKey: key },
            'could not remove an object of an erased account',
          ),
        );
    }
  }
}

/**
 * 409 `last_owner` naming the organizations the account is the last owner of while others are members:
 * ownership is passed on first (docs/adr/0062-organizations.md). Organizations it is alone in go with it.
 */
function refuseLastOwner(memberships: ErasableMembership[]): void {
  const blocking = memberships.filter(
    (m) => m.role === 'owner' && m.owners === 1 && m.members > 1,
  );
  if (blocking.length === 0) return;
  throw new AppError(
    'last_owner',
    `This account is the last owner of ${blocking.map((m) => `"${m.name}" (${m.organizationId})`).join(', ')}, ` +
      'which other members belong to: make one of them an owner first (PATCH /v1/orgs/:id/members/:userId), or remove them.',
    {
      extensions: {
        organizations: blocking.map((m) => ({
          id: m.organizationId,
          name: m.name,
        })),
      },
    },
  );
}

/** The audit entry and the log keep how much was removed, never what. */
function counts(data: ErasedData): Omit<ErasedData, 'storageKeys'> {
  return {
    sessions: data.sessions,
    identities: data.identities,
    skills: data.skills,
    conversations: data.conversations,
    chatRequests: data.chatRequests,
    files: data.files,
    tokens: data.tokens,
    organizations: data.organizations,
    memberships: data.memberships,
  };
}

export function accountDeleted(): AppError {
  return new AppError(
    'account_deleted',
    'This account was deleted; it can no longer be changed.',
  );
}
