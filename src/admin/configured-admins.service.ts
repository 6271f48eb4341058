import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { configuredAdminAudit } from '../users/users.repository';
import { AdminUsersRepository } from './admin-users.repository';
import { AuditRepository } from '../audit/audit.repository';

/**
 * ADMIN_EMAILS, for accounts that existed before their address was listed: promoted at every start (new
 * accounts get the role at sign-up). Each promotion is audited with no admin. Removing an address from the
 * list demotes nobody, and an account an admin demoted through the API is not promoted again.
 */
@Injectable()
export class ConfiguredAdminsService implements OnApplicationBootstrap {
  constructor(
    private readonly users: AdminUsersRepository,
    private readonly audit: AuditRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const promoted = await this.users.inTransaction(async (db) => {
      const rows = await this.users.promoteConfiguredAdmins(
        db,
        this.config.adminEmails,
      );
      for (const row of rows) {
        await this.audit.record(db, configuredAdminAudit(row.id));
      }
      return rows;
    });
    if (promoted.length > 0)
      this.log.info(
        { users: promoted.map((row) => row.id) },
        'accounts in ADMIN_EMAILS promoted to admin',
      );
  }
}
