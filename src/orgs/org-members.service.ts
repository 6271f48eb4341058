import { Injectable } from '@nestjs/common';
import { AuditRepository } from '../audit/audit.repository';
import { SessionUser } from '../auth/session-user';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { Db, PrismaService } from '../infra/prisma/prisma.service';
import { MemberChangeDto, OrgRoleName } from './dto/org-input.dto';
import { OrgMemberDto, OrgMemberListDto } from './dto/org.response';
import { OrgAccess, organizationNotFound } from './org-access';
import { OrgsRepository } from './orgs.repository';

/**
 * Members of an organization: list, change a role or a cap, remove (or leave). Every change takes the
 * organization's row lock first, so "the last owner" is decided on committed facts, and is audited.
 * docs/adr/0062-organizations.md
 */
@Injectable()
export class OrgMembersService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly orgs: OrgsRepository,
    private readonly access: OrgAccess,
    private readonly audit: AuditRepository,
  ) {}

  async list(user: SessionUser, orgId: string): Promise<OrgMemberListDto> {
    await this.access.require(user, orgId);
    const rows = await this.orgs.findMembersPage(orgId);
    return {
      data: rows.map((row) => ({
        userId: row.userId,
        email: row.user.email.endsWith('.invalid') ? null : row.user.email,
        role: row.role,
        dailyCreditLimit: row.dailyCreditLimit,
        joinedAt: row.createdAt.toISOString(),
      })),
    };
  }

  /** Admins and owners; only an owner makes or unmakes owners; the last owner keeps the role. */
  async change(
    user: SessionUser,
    orgId: string,
    memberId: string,
    input: MemberChangeDto,
  ): Promise<OrgMemberDto> {
    const actor = await this.access.require(user, orgId, 'admin');
    if (input.role === undefined && input.dailyCreditLimit === undefined)
      throw new AppError(
        'validation_failed',
        'Nothing to change: send role, dailyCreditLimit or both.',
        {
          errors: [
            {
              field: 'body',
              code: 'empty_change',
              message: 'send role, dailyCreditLimit or both',
            },
          ],
        },
      );
    await this.prisma.$transaction(async (db) => {
      const target = await this.lockedMember(db, orgId, memberId);
      const touchesOwner =
        input.role !== undefined &&
        input.role !== target.role &&
        (input.role === 'owner' || target.role === 'owner');
      if (touchesOwner && actor.role !== 'owner')
        throw ownerRequired('make or unmake owners');
      if (
        target.role === 'owner' &&
        input.role !== undefined &&
        input.role !== 'owner'
      )
        await this.assertAnotherOwner(db, orgId);
      const after = await this.orgs.updateMember(db, orgId, memberId, {
        role: input.role,
        dailyCreditLimit: input.dailyCreditLimit,
      });
      await this.audit.record(db, {
        adminId: user.id,
        action: 'org.member.update',
        targetType: 'organization',
        targetId: orgId,
        before: { userId: memberId, ...target },
        after: { userId: memberId, ...after },
      });
    });
    const member = (await this.list(user, orgId)).data.find(
      (row) => row.userId === memberId,
    );
    if (!member) throw memberNotFound();
    return member;
  }

  /** Removes a member (admins and owners; an owner only by an owner), or the caller leaves. */
  async remove(
    user: SessionUser,
    orgId: string,
    memberId: string,
  ): Promise<void> {
    const leaving = memberId === user.id;
    const actor = await this.access.require(
      user,
      orgId,
      leaving ? 'member' : 'admin',
    );
    await this.prisma.$transaction(async (db) => {
      const target = await this.lockedMember(db, orgId, memberId);
      if (!leaving && target.role === 'owner' && actor.role !== 'owner')
        throw ownerRequired('remove an owner');
      if (target.role === 'owner') await this.assertAnotherOwner(db, orgId);
      await this.orgs.removeMember(db, orgId, memberId);
      await this.audit.record(db, {
        adminId: user.id,
        action: leaving ? 'org.member.leave' : 'org.member.remove',
        targetType: 'organization',
        targetId: orgId,
        before: { userId: memberId, role: target.role },
      });
    });
  }

  /** The organization locked, then the member's row as committed (404 when not a member). */
  private async lockedMember(
    db: Db,
    orgId: string,
    memberId: string,
  ): Promise<{ role: OrgRoleName; dailyCreditLimit: number | null }> {
    if (!(await this.orgs.lockOrganization(db, orgId)))
      throw organizationNotFound();
    const member = isUuid(memberId)
      ? await this.orgs.findMemberInTransaction(db, orgId, memberId)
      : null;
    if (!member) throw memberNotFound();
    return member;
  }

  private async assertAnotherOwner(db: Db, orgId: string): Promise<void> {
    if ((await this.orgs.countOwners(db, orgId)) <= 1)
      throw new AppError(
        'last_owner',
        'This is the last owner of the organization: make another member an owner first (or delete the organization).',
      );
  }
}

function memberNotFound(): AppError {
  return new AppError('not_found', 'No such member of this organization.');
}

function ownerRequired(what: string): AppError {
  return new AppError(
    'org_role_required',
    `Only an owner may ${what}; your role is admin.`,
  );
}
