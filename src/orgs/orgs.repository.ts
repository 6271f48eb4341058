import { Injectable } from '@nestjs/common';
import type { OrgRole } from '../infra/prisma/generated/client';
import { LIVE_SUBSCRIPTION_STATUSES } from '../billing/billing.repository';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

export type { OrgRole };

const ORGANIZATION = {
  id: true,
  name: true,
  planCode: true,
  seats: true,
  planSetByAdmin: true,
  planSubscriptionId: true,
  createdAt: true,
  plan: { select: { code: true, name: true, dailyCredits: true } },
  planSubscription: {
    select: {
      status: true,
      provider: true,
      seats: true,
      currentPeriodEnd: true,
      cancelAtPeriodEnd: true,
    },
  },
  _count: { select: { members: true } },
} as const;

/** Organizations and their members (docs/adr/0062-organizations.md). Rules live in the services. */
@Injectable()
export class OrgsRepository {
  constructor(private readonly prisma: PrismaService) {}

  inTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /** The organization with its creator as its first owner, in one transaction. */
  createWithOwner(db: Db, ownerId: string, name: string) {
    return db.organization.create({
      data: { name, members: { create: { userId: ownerId, role: 'owner' } } },
      select: ORGANIZATION,
    });
  }

  /** The caller's membership with its organization; null when not a member (or no such organization). */
  findMembership(organizationId: string, userId: string) {
    return this.prisma.orgMember.findUnique({
      where: { organizationId_userId: { organizationId, userId } },
      select: {
        role: true,
        dailyCreditLimit: true,
        organization: { select: ORGANIZATION },
      },
    });
  }

  findMembershipsOfUser(userId: string) {
    return this.prisma.orgMember.findMany({
      where: { userId },
      orderBy: [{ createdAt: 'asc' }, { organizationId: 'asc' }],
      select: { role: true, organization: { select: ORGANIZATION } },
    });
  }

  /**
   * Locks the organization's row for the rest of the transaction: every membership change takes it
   * first, so checks on owners and seats hold until the commit. NO KEY UPDATE: the claims' foreign-key
   * and KEY SHARE locks on it do not wait for it (nor it for them). Null when it no longer exists.
   */
  async lockOrganization(db: Db, organizationId: string) {
    const [row] = await db.$queryRaw<
      { planCode: string; seats: number; members: number }[]
    >`
      SELECT o."planCode", o.seats,
             (SELECT count(*)::int FROM "OrgMember" m WHERE m."organizationId" = o.id) AS members
        FROM "Organization" o WHERE o.id = ${organizationId}::uuid FOR NO KEY UPDATE`;
    return row ?? null;
  }

  findMemberInTransaction(db: Db, organizationId: string, userId: string) {
    return db.orgMember.findUnique({
      where: { organizationId_userId: { organizationId, userId } },
      select: { role: true, dailyCreditLimit: true },
    });
  }

  countOwners(db: Db, organizationId: string): Promise<number> {
    return db.orgMember.count({ where: { organizationId, role: 'owner' } });
  }

  addMember(db: Db, organizationId: string, userId: string, role: OrgRole) {
    return db.orgMember.create({
      data: { organizationId, userId, role },
      select: { role: true },
    });
  }

  updateMember(
    db: Db,
    organizationId: string,
    userId: string,
    data: { role?: OrgRole; dailyCreditLimit?: number | null },
  ) {
    return db.orgMember.update({
      where: { organizationId_userId: { organizationId, userId } },
      data,
      select: { role: true, dailyCreditLimit: true },
    });
  }

  async removeMember(
    db: Db,
    organizationId: string,
    userId: string,
  ): Promise<void> {
    await db.orgMember.deleteMany({ where: { organizationId, userId } });
  }

  rename(db: Db, organizationId: string, name: string) {
    return db.organization.update({
      where: { id: organizationId },
      data: { name },
      select: ORGANIZATION,
    });
  }

  async hasLiveSubscription(db: Db, organizationId: string): Promise<boolean> {
    const live = await db.subscription.count({
      where: {
        organizationId,
        status: { in: [...LIVE_SUBSCRIPTION_STATUSES] },
      },
    });
    return live > 0;
  }

  async delete(db: Db, organizationId: string): Promise<void> {
    await db.organization.delete({
      where: { id: organizationId },
      select: { id: true },
    });
  }

  findMembersPage(organizationId: string) {
    return this.prisma.orgMember.findMany({
      where: { organizationId },
      orderBy: [{ createdAt: 'asc' }, { userId: 'asc' }],
      select: {
        userId: true,
        role: true,
        dailyCreditLimit: true,
        createdAt: true,
        user: { select: { email: true } },
      },
    });
  }

  /** The pool's and the member's usage rows of one UTC day (absent rows: nothing used yet). */
  async findUsageOfDay(organizationId: string, userId: string, day: Date) {
    const [pool, member] = await Promise.all([
      this.prisma.orgDailyUsage.findUnique({
        where: { organizationId_day: { organizationId, day } },
        select: { used: true, reserved: true },
      }),
      this.prisma.orgMemberDailyUsage.findUnique({
        where: {
          organizationId_userId_day: { organizationId, userId, day },
        },
        select: { used: true, reserved: true },
      }),
    ]);
    return { pool, member };
  }

  /** Credits and runs per member per UTC day from the ledger, for days in [from, to]. */
  usagePerMemberPerDay(organizationId: string, from: Date, toExclusive: Date) {
    return this.prisma.$queryRaw<
      {
        day: string;
        userId: string;
        email: string | null;
        credits: number;
        runs: number;
      }[]
    >`
      SELECT to_char((l."createdAt" AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, l."userId"::text AS "userId",
             CASE WHEN u."deletedAt" IS NULL THEN u.email END AS email,
             SUM(l.credits)::int AS credits, count(*)::int AS runs
        FROM "LedgerEntry" l JOIN "User" u ON u.id = l."userId"
       WHERE l."organizationId" = ${organizationId}::uuid
         AND l."createdAt" >= ${from} AND l."createdAt" < ${toExclusive}
       GROUP BY 1, 2, 3
       ORDER BY 1, 3, 2`;
  }

  /** The account's email and whether it is verified, as the database has them now. */
  findAccount(db: Db, userId: string) {
    return db.user.findUnique({
      where: { id: userId },
      select: { email: true, emailVerifiedAt: true, deletedAt: true },
    });
  }
}

export type OrganizationRow = NonNullable<
  Awaited<ReturnType<OrgsRepository['findMembership']>>
>['organization'];
