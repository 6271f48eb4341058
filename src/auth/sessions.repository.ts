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
  async createSessionUnlessDisabled(input: { userId: string; tokenHash: string; expiresAt: Date; userAgent?: string; ip?: string }): Promise<boolean> {
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
        user: { select: { id: true, email: true, role: true, createdAt: true, disabledAt: true, plan: { select: { code: true, name: true } } } },
      },
    });
  }

  async touchSession(id: string, now: Date): Promise<void> {
    await this.prisma.session.updateMany({ where: { id }, data: { lastSeenAt: now } });
  }

  async deleteSessionByTokenHash(tokenHash: string): Promise<void> {
    await this.prisma.session.deleteMany({ where: { tokenHash } });
  }
}
