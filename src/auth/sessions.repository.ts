import { Injectable } from '@nestjs/common';
import { PrismaService } from '../infra/prisma/prisma.service';

@Injectable()
export class SessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async createSession(input: { userId: string; tokenHash: string; expiresAt: Date; userAgent?: string; ip?: string }): Promise<void> {
    await this.prisma.session.create({ data: input, select: { id: true } });
  }

  /** The unexpired session with this token hash and the state of its user. */
  findLiveSession(tokenHash: string, now: Date) {
    return this.prisma.session.findFirst({
      where: { tokenHash, expiresAt: { gt: now } },
      select: { id: true, lastSeenAt: true, user: { select: { id: true, email: true, role: true, planCode: true, disabledAt: true } } },
    });
  }

  async touchSession(id: string, now: Date): Promise<void> {
    await this.prisma.session.updateMany({ where: { id }, data: { lastSeenAt: now } });
  }

  async deleteSessionByTokenHash(tokenHash: string): Promise<void> {
    await this.prisma.session.deleteMany({ where: { tokenHash } });
  }
}
