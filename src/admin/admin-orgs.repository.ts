import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { Db, PrismaService } from '../infra/prisma/prisma.service';

const SUMMARY = {
  id: true,
  name: true,
  planCode: true,
  seats: true,
  planSetByAdmin: true,
  createdAt: true,
  _count: { select: { members: true } },
} as const;

export interface LockedOrganization {
  planCode: string;
  seats: number;
  planSubscriptionId: string | null;
  planSetByAdmin: boolean;
  members: number;
}

export interface OrganizationPlan {
  planCode: string;
  seats: number;
  planSubscriptionId: string | null;
  planSetByAdmin: boolean;
}

/** Organizations as admins see them and set their plans (docs/adr/0062-organizations.md). */
@Injectable()
export class AdminOrgsRepository {
  constructor(private readonly prisma: PrismaService) {}

  inTransaction<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: 15_000 });
  }

  findPage(nameContains: string | undefined, limit: number, after?: Cursor) {
    return this.prisma.organization.findMany({
      where: {
        ...(nameContains
          ? { name: { contains: nameContains, mode: 'insensitive' as const } }
          : {}),
        ...olderThan('createdAt', after),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: SUMMARY,
    });
  }

  findOne(id: string) {
    return this.prisma.organization.findUnique({
      where: { id },
      select: SUMMARY,
    });
  }

  findActivePlanCode(code: string) {
    return this.prisma.plan.findFirst({
      where: { code, active: true },
      select: { code: true },
    });
  }

  /**
   * The organization's plan and member count, locked for the transaction: membership changes lock the row
   * first too, so the count holds until the commit. Null when there is no such organization.
   */
  async lockOrganization(
    db: Db,
    id: string,
  ): Promise<LockedOrganization | null> {
    const [row] = await db.$queryRaw<LockedOrganization[]>`
      SELECT o."planCode", o.seats, o."planSubscriptionId"::text AS "planSubscriptionId", o."planSetByAdmin",
             (SELECT count(*)::int FROM "OrgMember" m WHERE m."organizationId" = o.id) AS members
        FROM "Organization" o WHERE o.id = ${id}::uuid FOR NO KEY UPDATE`;
    return row ?? null;
  }

  async setPlan(db: Db, id: string, plan: OrganizationPlan): Promise<void> {
    await db.organization.update({
      where: { id },
      data: plan,
      select: { id: true },
    });
  }
}

export type AdminOrgRow = NonNullable<
  Awaited<ReturnType<AdminOrgsRepository['findOne']>>
>;
