import { Injectable } from '@nestjs/common';
import { Prisma } from '../infra/prisma/generated/client';
import { PrismaService } from '../infra/prisma/prisma.service';

const publicUser = {
  id: true,
  email: true,
  role: true,
  createdAt: true,
  plan: { select: { code: true, name: true } },
} as const;

export type PublicUserRow = Prisma.UserGetPayload<{ select: typeof publicUser }>;

@Injectable()
export class UsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Creates the account, or answers null when the email is already registered (unique constraint). */
  /** An account created as an admin (ADMIN_EMAILS) is audited in the same transaction. */
  async createUserUnlessEmailTaken(email: string, passwordHash: string, role: 'admin' | 'user'): Promise<PublicUserRow | null> {
    try {
      return await this.prisma.$transaction(async (db) => {
        const user = await db.user.create({ data: { email, passwordHash, role }, select: publicUser });
        if (role === 'admin') await db.auditLog.create({ data: configuredAdminAudit(user.id), select: { id: true } });
        return user;
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') return null;
      throw error;
    }
  }

  /** The account as login needs it: its public fields plus what decides whether it may sign in. */
  findLoginCandidate(email: string) {
    return this.prisma.user.findUnique({ where: { email }, select: { ...publicUser, passwordHash: true, disabledAt: true } });
  }
}

/** The audit entry of an account that became admin through ADMIN_EMAILS (no admin did it). */
export function configuredAdminAudit(userId: string) {
  return { adminId: null, action: 'user.role', targetType: 'user', targetId: userId, before: { role: 'user' }, after: { role: 'admin' }, reason: 'ADMIN_EMAILS' };
}
