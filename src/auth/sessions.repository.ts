import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infra/prisma/prisma.service';

@Injectable()
export class SessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Creates the session only while the account is enabled, in one statement that locks the account row FOR
   * SHARE: a concurrent disable (which locks it for update, then deletes the sessions) either waits for this
   * insert and deletes its session, or commits first and this finds the account disabled. False then.
   */
  async createSessionUnlessDisabled(input: {
    userId: string;
    tokenHash: string;
    expiresAt: Date;
    userAgent?: string;
    ip?: string;
  }): Promise<boolean> {
    const [created] = await this.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO "Session" (id, "userId", "tokenHash", "expiresAt", "userAgent", ip)
      SELECT ${randomUUID()}::uuid, u.id, ${input.tokenHash}, ${input.expiresAt}, ${input.userAgent ?? null}, ${input.ip ?? null}
      FROM "User" u WHERE u.id = ${input.userId}::uuid AND u."disabledAt" IS NULL
      FOR SHARE
      RETURNING id::text`;
    return created !== undefined;
  }

  /** The unexpired session with this token hash and the state of its user. */
  findLiveSession(tokenHash: string, now: Date) {
    return this.prisma.session.findFirst({
      where: { tokenHash, expiresAt: { gt: now } },
      select: {
        id: true,
        expiresAt: true,
        lastSeenAt: true,
        createdAt: true,
        user: {
          select: {
            id: true,
            email: true,
            role: true,
            createdAt: true,
            disabledAt: true,
            emailVerifiedAt: true,
            totpEnabledAt: true,
            plan: { select: { code: true, name: true } },
          },
        },
      },
    });
  }

  findLiveSessionsOfUser(userId: string, now: Date, limit: number) {
    return this.prisma.session.findMany({
      where: { userId, expiresAt: { gt: now } },
      orderBy: [{ lastSeenAt: 'desc' }, { id: 'desc' }],
      take: limit,
      select: {
        id: true,
        tokenHash: true,
        createdAt: true,
        lastSeenAt: true,
        expiresAt: true,
        userAgent: true,
        ip: true,
      },
    });
  }

  /** Deletes the session if it is the user's: its token hash, or null when there was no such session. */
  async deleteSessionOfUser(
    userId: string,
    sessionId: string,
  ): Promise<{ tokenHash: string } | null> {
    const [deleted] = await this.prisma.$queryRaw<{ tokenHash: string }[]>`
      DELETE FROM "Session" WHERE id = ${sessionId}::uuid AND "userId" = ${userId}::uuid RETURNING "tokenHash"`;
    return deleted ?? null;
  }

  async touchSession(id: string, now: Date): Promise<void> {
    await this.prisma.session.updateMany({
      where: { id },
      data: { lastSeenAt: now },
    });
  }

  async deleteSessionByTokenHash(tokenHash: string): Promise<void> {
    await this.prisma.session.deleteMany({ where: { tokenHash } });
  }
}
