import { Injectable } from '@nestjs/common';
import { ADMIN_ACTIONS_LOCK } from '../../admin/admin-users.repository';
import { subscriptionLockKey } from '../../billing/billing.repository';
import { PaymentProviderName } from '../../billing/providers/payment-gateway';
import { grantEndsAt } from '../../billing/subscription-state';
import { FREE_PLAN } from '../../billing/subscriptions.service';
import { Prisma } from '../../infra/prisma/generated/client';
import { Db, PrismaService } from '../../infra/prisma/prisma.service';

/** Subscriptions that still grant a plan or may bill again: these are canceled at the provider first. */
export const BILLABLE_STATUSES = [
  'active',
  'past_due',
  'incomplete',
  'paused',
] as const;

export interface ErasableAccount {
  id: string;
  role: 'user' | 'admin';
  planCode: string;
  disabledAt: Date | null;
  deletedAt: Date | null;
}

export interface BillableSubscription {
  id: string;
  provider: PaymentProviderName;
  providerSubscriptionId: string;
}

/** What the erasure removed, counted for the audit entry (no content, no email). */
export interface ErasedData {
  sessions: number;
  identities: number;
  skills: number;
  conversations: number;
  chatRequests: number;
  files: number;
  tokens: number;
  /** Organizations the account was the only member of (deleted with it) and memberships it left. */
  organizations: number;
  memberships: number;
  /** Storage keys of the File rows removed: an upload that finished after the objects were listed is among them. */
  storageKeys: string[];
}

/** An organization the account belongs to, with what decides whether the account may go. */
export interface ErasableMembership {
  organizationId: string;
  name: string;
  role: 'owner' | 'admin' | 'member';
  members: number;
  owners: number;
}

export interface ErasureAudit {
  adminId: string | null;
  userId: string;
  reason: string;
  before: Prisma.InputJsonObject;
  after: Prisma.InputJsonObject;
}

const ACCOUNT = {
  id: true,
  role: true,
  planCode: true,
  disabledAt: true,
  deletedAt: true,
} as const;

/** The domain the tombstone's address is in: `.invalid` is reserved (RFC 2606), no mail can ever reach it. */
export function tombstoneEmail(userId: string): string {
  return `deleted-${userId}@deleted.invalid`;
}

@Injectable()
export class AccountDeletionRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** A large account (thousands of conversations and chat requests) takes longer than a request's usual transaction. */
  inTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: 60_000 });
  }

  findAccount(
    id: string,
    db: Db = this.prisma,
  ): Promise<ErasableAccount | null> {
    return db.user.findUnique({ where: { id }, select: ACCOUNT });
  }

  countOtherActiveAdmins(id: string, db: Db = this.prisma): Promise<number> {
    return db.user.count({
      where: {
        role: 'admin',
        disabledAt: null,
        deletedAt: null,
        id: { not: id },
      },
    });
  }

  /**
   * Every subscription the account pays for (its own plan, and organizations' seats: a deleted person's
   * card never pays again; such an organization returns to Free at the next sweep), and those of the
   * organizations it is the only member of (deleted with it). docs/adr/0062-organizations.md
   */
  findBillableSubscriptions(
    userId: string,
    db: Db = this.prisma,
  ): Promise<BillableSubscription[]> {
    return db.$queryRaw<BillableSubscription[]>`
      SELECT s.id::text, s.provider::text AS provider, s."providerSubscriptionId"
        FROM "Subscription" s
       WHERE s.status::text IN (${Prisma.join([...BILLABLE_STATUSES])})
         AND (s."userId" = ${userId}::uuid
              OR s."organizationId" IN (
                   SELECT m."organizationId" FROM "OrgMember" m
                    WHERE m."userId" = ${userId}::uuid
                      AND NOT EXISTS (SELECT 1 FROM "OrgMember" o
                                       WHERE o."organizationId" = m."organizationId" AND o."userId" <> m."userId")))
       ORDER BY s.id`;
  }

  /** Locks the rows of the account's organizations until the commit (in id order). */
  async lockOrganizationsOf(db: Db, userId: string): Promise<void> {
    await db.$queryRaw`
      SELECT o.id FROM "Organization" o JOIN "OrgMember" m ON m."organizationId" = o.id
       WHERE m."userId" = ${userId}::uuid ORDER BY o.id FOR UPDATE OF o`;
  }

  /** The account's memberships, with each organization's member and owner counts. */
  findMemberships(
    userId: string,
    db: Db = this.prisma,
  ): Promise<ErasableMembership[]> {
    return db.$queryRaw<ErasableMembership[]>`
      SELECT o.id::text AS "organizationId", o.name, m.role::text AS role,
             (SELECT count(*)::int FROM "OrgMember" a WHERE a."organizationId" = o.id) AS members,
             (SELECT count(*)::int FROM "OrgMember" a WHERE a."organizationId" = o.id AND a.role = 'owner') AS owners
        FROM "OrgMember" m JOIN "Organization" o ON o.id = m."organizationId"
       WHERE m."userId" = ${userId}::uuid
       ORDER BY o.id`;
  }

  async findFileStorageKeys(
    userId: string,
    db: Db = this.prisma,
  ): Promise<string[]> {
    const rows = await db.file.findMany({
      where: { ownerId: userId },
      select: { storageKey: true },
    });
    return rows.map((row) => row.storageKey);
  }

  async findLiveRunIds(userId: string): Promise<string[]> {
    const rows = await this.prisma.chatRequest.findMany({
      where: { userId, status: 'streaming' },
      select: { id: true },
    });
    return rows.map((row) => row.id);
  }

  /** The admin changes' lock: a self-deletion and a demotion of the other admin cannot both pass the last-admin check. */
  async lockAdminActions(db: Db): Promise<void> {
    await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${ADMIN_ACTIONS_LOCK}::text, 0))`;
  }

  /**
   * The user's subscriptions, in the order webhooks and the sweeper take them (provider key lock, then the
   * row, then the user), so the erasure queues behind a webhook of the account instead of deadlocking it.
   * Called before `lockAccount`.
   */
  async lockSubscriptionsOfUser(db: Db, userId: string): Promise<void> {
    const subscriptions = await db.subscription.findMany({
      where: { userId },
      orderBy: { id: 'asc' },
      select: { id: true, provider: true, providerSubscriptionId: true },
    });
    for (const subscription of subscriptions) {
      const key = subscriptionLockKey(
        subscription.provider,
        subscription.providerSubscriptionId,
      );
      await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}::text, 0))`;
    }
    const ids = subscriptions.map((subscription) => subscription.id);
    if (ids.length > 0)
      await db.$queryRaw`SELECT id FROM "Subscription" WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE`;
  }

  /**
   * FOR UPDATE, not NO KEY UPDATE: the erasure changes the email, a unique key. It waits for a sign-in
   * creating a session and for an upload being recorded (both lock the row).
   */
  async lockAccount(db: Db, id: string): Promise<ErasableAccount | null> {
    const [row] = await db.$queryRaw<ErasableAccount[]>`
      SELECT id::text, role::text AS role, "planCode", "disabledAt", "deletedAt" FROM "User" WHERE id = ${id}::uuid FOR UPDATE`;
    return row ?? null;
  }

  /** Canceled here as at the provider: terminal, so later events of these subscriptions change nothing. */
  async markSubscriptionsCanceled(
    db: Db,
    ids: string[],
    at: Date,
  ): Promise<number> {
    if (ids.length === 0) return 0;
    const grantsUntil = grantEndsAt(
      {
        status: 'canceled',
        currentPeriodEnd: null,
        cancelAtPeriodEnd: false,
        pastDueSince: null,
      },
      0,
    );
    const result = await db.subscription.updateMany({
      where: { id: { in: ids }, status: { not: 'canceled' } },
      data: {
        status: 'canceled',
        canceledAt: at,
        cancelAtPeriodEnd: false,
        pastDueSince: null,
        grantsUntil,
      },
    });
    return result.count;
  }

  /**
   * Fails the account's runs still streaming (asked to stop before, they may not have ended) and gives back
   * what they reserved of organizations' pools and member days, as the sweeper does: their rows go next,
   * and a late settlement then finds nothing to settle. A personal day goes with the account.
   */
  private async releaseLiveRuns(db: Db, userId: string): Promise<void> {
    await db.$queryRaw`
      WITH failed AS (
        UPDATE "ChatRequest" SET status = 'failed', "errorCode" = 'generation_interrupted', "finishedAt" = now()
         WHERE "userId" = ${userId}::uuid AND status = 'streaming'
        RETURNING "organizationId", "usageDay", "reservedCredits"
      ), pools AS (
        UPDATE "OrgDailyUsage" d SET reserved = d.reserved - s.total
          FROM (SELECT "organizationId", "usageDay", SUM("reservedCredits")::int AS total FROM failed
                 WHERE "organizationId" IS NOT NULL GROUP BY 1, 2) s
         WHERE d."organizationId" = s."organizationId" AND d.day = s."usageDay"
        RETURNING 1
      ), members AS (
        UPDATE "OrgMemberDailyUsage" d SET reserved = d.reserved - s.total
          FROM (SELECT "organizationId", "usageDay", SUM("reservedCredits")::int AS total FROM failed
                 WHERE "organizationId" IS NOT NULL GROUP BY 1, 2) s
         WHERE d."organizationId" = s."organizationId" AND d."userId" = ${userId}::uuid AND d.day = s."usageDay"
        RETURNING 1
      )
      SELECT count(*)::int AS n FROM failed`;
  }

  /**
   * Everything personal the account holds, in an order that spares needless work: conversations first (their
   * messages cascade; chat requests and ledger lines lose the link), then the chat requests (they hold response
   * bodies; ledger lines lose the link), Skills (versions cascade), files (text chunks cascade), sign-in data.
   * Ledger entries, credit grants, daily usage, checkouts and subscriptions stay: accounting records.
   */
  async deletePersonalData(db: Db, userId: string): Promise<ErasedData> {
    await this.releaseLiveRuns(db, userId);
    const storageKeys = await this.findFileStorageKeys(userId, db);
    const conversations = await db.conversation.deleteMany({
      where: { userId },
    });
    const chatRequests = await db.chatRequest.deleteMany({ where: { userId } });
    // An organization's Skills the account wrote stay the organization's.
    const skills = await db.skill.deleteMany({
      where: { ownerId: userId, organizationId: null },
    });
    // Organizations with no other member go with the account; of the others it leaves.
    const organizations = await db.$executeRaw`
      DELETE FROM "Organization" o
       WHERE o.id IN (SELECT m."organizationId" FROM "OrgMember" m WHERE m."userId" = ${userId}::uuid)
         AND NOT EXISTS (SELECT 1 FROM "OrgMember" a WHERE a."organizationId" = o.id AND a."userId" <> ${userId}::uuid)`;
    const memberships = await db.orgMember.deleteMany({ where: { userId } });
    const files = await db.file.deleteMany({ where: { ownerId: userId } });
    const sessions = await db.session.deleteMany({ where: { userId } });
    const identities = await db.oAuthIdentity.deleteMany({ where: { userId } });
    // One statement after the other: an interactive transaction runs on one connection.
    const tokens = [
      await db.passwordResetToken.deleteMany({ where: { userId } }),
      await db.emailVerificationToken.deleteMany({ where: { userId } }),
      await db.recoveryCode.deleteMany({ where: { userId } }),
      await db.twoFactorChallenge.deleteMany({ where: { userId } }),
    ];
    return {
      sessions: sessions.count,
      identities: identities.count,
      skills: skills.count,
      conversations: conversations.count,
      chatRequests: chatRequests.count,
      files: files.count,
      tokens: tokens.reduce((sum, deleted) => sum + deleted.count, 0),
      organizations,
      memberships: memberships.count,
      storageKeys,
    };
  }

  /**
   * The row stays (ledger, checkouts and subscriptions reference it) with nothing that identifies a person:
   * the address becomes one nobody can own, so the real one can register again; it can never sign in.
   */
  async turnIntoTombstone(db: Db, id: string, at: Date): Promise<void> {
    await db.user.update({
      where: { id },
      data: {
        email: tombstoneEmail(id),
        passwordHash: null,
        totpSecret: null,
        totpEnabledAt: null,
        totpLastStep: null,
        emailVerifiedAt: null,
        role: 'user',
        planCode: FREE_PLAN,
        planSubscriptionId: null,
        planSetByAdmin: false,
        disabledAt: at,
        deletedAt: at,
      },
      select: { id: true },
    });
  }

  async recordErasure(db: Db, audit: ErasureAudit): Promise<void> {
    await db.auditLog.create({
      data: {
        adminId: audit.adminId,
        action: 'user.delete',
        targetType: 'user',
        targetId: audit.userId,
        before: audit.before,
        after: audit.after,
        reason: audit.reason,
      },
      select: { id: true },
    });
  }
}
