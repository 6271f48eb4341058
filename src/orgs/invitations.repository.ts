import { Injectable } from '@nestjs/common';
import { Db, PrismaService } from '../infra/prisma/prisma.service';
import type { OrgRole } from './orgs.repository';

const INVITATION = {
  id: true,
  organizationId: true,
  email: true,
  role: true,
  expiresAt: true,
  acceptedAt: true,
  revokedAt: true,
  createdAt: true,
} as const;

/** Organization invitations; only the SHA-256 of a token is stored. */
@Injectable()
export class InvitationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** A new pending invitation; a pending one for the same address is revoked first (the new link replaces it). */
  async replacePending(
    db: Db,
    invitation: {
      organizationId: string;
      email: string;
      role: OrgRole;
      tokenHash: string;
      invitedById: string;
      expiresAt: Date;
    },
    now: Date,
  ) {
    await db.$executeRaw`
      UPDATE "OrgInvitation" SET "revokedAt" = ${now}
       WHERE "organizationId" = ${invitation.organizationId}::uuid AND lower(email) = lower(${invitation.email})
         AND "acceptedAt" IS NULL AND "revokedAt" IS NULL`;
    return db.orgInvitation.create({ data: invitation, select: INVITATION });
  }

  findPending(organizationId: string, now: Date) {
    return this.prisma.orgInvitation.findMany({
      where: {
        organizationId,
        acceptedAt: null,
        revokedAt: null,
        expiresAt: { gt: now },
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: INVITATION,
    });
  }

  /** Revokes a pending invitation of the organization; null when there is no such pending one. */
  async revoke(db: Db, organizationId: string, id: string, now: Date) {
    const [row] = await db.$queryRaw<{ email: string; role: OrgRole }[]>`
      UPDATE "OrgInvitation" SET "revokedAt" = ${now}
       WHERE id = ${id}::uuid AND "organizationId" = ${organizationId}::uuid
         AND "acceptedAt" IS NULL AND "revokedAt" IS NULL AND "expiresAt" > ${now}
      RETURNING email, role`;
    return row ?? null;
  }

  /** The organization of the invitation with this token (not locked: its organization is locked first). */
  async findOrganizationOfToken(tokenHash: string): Promise<string | null> {
    const row = await this.prisma.orgInvitation.findUnique({
      where: { tokenHash },
      select: { organizationId: true },
    });
    return row?.organizationId ?? null;
  }

  /**
   * Revokes the pending invitations `inviterId` sent: all of them (removed, or no longer an admin), or only
   * those making owners (no longer an owner). An invitation never outlives its inviter's right to send it.
   */
  async revokeSentBy(
    db: Db,
    organizationId: string,
    inviterId: string,
    only: 'all' | 'owner-invitations',
    now: Date,
  ): Promise<number> {
    const { count } = await db.orgInvitation.updateMany({
      where: {
        organizationId,
        invitedById: inviterId,
        acceptedAt: null,
        revokedAt: null,
        ...(only === 'owner-invitations' ? { role: 'owner' } : {}),
      },
      data: { revokedAt: now },
    });
    return count;
  }

  /** The invitation with this token, locked until the commit (two accepts of one link go one after the other). */
  async lockByTokenHash(db: Db, tokenHash: string) {
    const [row] = await db.$queryRaw<
      {
        id: string;
        organizationId: string;
        email: string;
        role: OrgRole;
        expiresAt: Date;
        acceptedAt: Date | null;
        revokedAt: Date | null;
      }[]
    >`
      SELECT id::text, "organizationId"::text, email, role, "expiresAt", "acceptedAt", "revokedAt"
        FROM "OrgInvitation" WHERE "tokenHash" = ${tokenHash} FOR UPDATE`;
    return row ?? null;
  }

  async markAccepted(
    db: Db,
    id: string,
    userId: string,
    now: Date,
  ): Promise<void> {
    await db.orgInvitation.update({
      where: { id },
      data: { acceptedAt: now, acceptedById: userId },
      select: { id: true },
    });
  }
}

export type InvitationRow = Awaited<
  ReturnType<InvitationsRepository['findPending']>
>[number];
