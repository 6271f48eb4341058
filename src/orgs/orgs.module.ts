import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { InvitationsController } from './invitations.controller';
import { InvitationsRepository } from './invitations.repository';
import { InvitationsService } from './invitations.service';
import { OrgAccess } from './org-access';
import { OrgMembersService } from './org-members.service';
import { OrgQuotaService } from './org-quota.service';
import { OrgsController } from './orgs.controller';
import { OrgsRepository } from './orgs.repository';
import { OrgsService } from './orgs.service';

/** Organizations, members, invitations and the pool's views (docs/adr/0062-organizations.md). */
@Module({
  imports: [AuditModule],
  controllers: [InvitationsController, OrgsController],
  providers: [
    InvitationsRepository,
    InvitationsService,
    OrgAccess,
    OrgMembersService,
    OrgQuotaService,
    OrgsRepository,
    OrgsService,
  ],
  exports: [OrgAccess, OrgsRepository],
})
export class OrgsModule {}
