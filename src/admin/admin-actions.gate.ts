import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { Db } from '../infra/prisma/prisma.service';
import { AdminUsersRepository } from './admin-users.repository';

/**
 * The first step of every admin change, inside its transaction: queue behind other admin changes (two
 * admins acting on each other wait instead of deadlocking; the last-admin check cannot pass twice), then
 * re-check that the caller is still an active admin: it may have been demoted or disabled since its
 * request was authenticated.
 * docs/adr/0051-admins.md
 */
@Injectable()
export class AdminActionsGate {
  constructor(private readonly users: AdminUsersRepository) {}

  async enter(db: Db, admin: SessionUser): Promise<void> {
    await this.users.lockAdminActions(db);
    if (!(await this.users.isActiveAdmin(db, admin.id)))
      throw new AppError('forbidden', 'This endpoint is for administrators.');
  }
}
