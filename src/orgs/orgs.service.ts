import { Injectable } from '@nestjs/common';
import { AuditRepository } from '../audit/audit.repository';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { OrgNameDto } from './dto/org-input.dto';
import { OrganizationDto, OrganizationListDto } from './dto/org.response';
import { OrgAccess, organizationNotFound } from './org-access';
import { toOrganization } from './org-mappers';
import { OrgsRepository } from './orgs.repository';

/** Organizations: create, list, show, rename, delete (docs/adr/0062-organizations.md). */
@Injectable()
export class OrgsService {
  constructor(
    private readonly orgs: OrgsRepository,
    private readonly access: OrgAccess,
    private readonly audit: AuditRepository,
  ) {}

  /** A new organization on the free plan, the caller its owner. */
  create(user: SessionUser, input: OrgNameDto): Promise<OrganizationDto> {
    return this.orgs.inTransaction(async (db) => {
      const org = await this.orgs.createWithOwner(db, user.id, input.name);
      await this.audit.record(db, {
        adminId: user.id,
        action: 'org.create',
        targetType: 'organization',
        targetId: org.id,
        after: { name: org.name },
      });
      return toOrganization(org, 'owner');
    });
  }

  async list(user: SessionUser): Promise<OrganizationListDto> {
    const rows = await this.orgs.findMembershipsOfUser(user.id);
    return {
      data: rows.map((row) => toOrganization(row.organization, row.role)),
    };
  }

  async get(user: SessionUser, id: string): Promise<OrganizationDto> {
    const membership = await this.access.require(user, id);
    return toOrganization(membership.organization, membership.role);
  }

  async rename(
    user: SessionUser,
    id: string,
    input: OrgNameDto,
  ): Promise<OrganizationDto> {
    const membership = await this.access.require(user, id, 'admin');
    const org = await this.orgs.inTransaction(async (db) => {
      const renamed = await this.orgs.rename(db, id, input.name);
      await this.audit.record(db, {
        adminId: user.id,
        action: 'org.rename',
        targetType: 'organization',
        targetId: id,
        before: { name: membership.organization.name },
        after: { name: renamed.name },
      });
      return renamed;
    });
    return toOrganization(org, membership.role);
  }

  /** Owners only; refused (409) while a subscription still binds it. Its Skills, members and pool go with it. */
  async delete(user: SessionUser, id: string): Promise<void> {
    await this.access.require(user, id, 'owner');
    await this.orgs.inTransaction(async (db) => {
      if (!(await this.orgs.lockOrganization(db, id)))
        throw organizationNotFound();
      if (await this.orgs.hasLiveSubscription(db, id))
        throw new AppError(
          'organization_has_subscription',
          'The organization has an active subscription: cancel it first (it is deleted once the subscription has ended).',
        );
      await this.orgs.delete(db, id);
      await this.audit.record(db, {
        adminId: user.id,
        action: 'org.delete',
        targetType: 'organization',
        targetId: id,
      });
    });
  }
}
