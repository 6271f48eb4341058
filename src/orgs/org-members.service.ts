import { Injectable } from '@nestjs/common';
import { AuditRepository } from '../audit/audit.repository';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import { Db } from '../infra/prisma/prisma.service';
import { MemberChangeDto, OrgRoleName } from './dto/org-input.dto';
import { OrgMemberDto, OrgMemberListDto } from './dto/org.response';
import { hasRole, OrgAccess, organizationNotFound } from './org-access';
import { InvitationsRepository } from './invitations.repository';
import { OrgsRepository } from './orgs.repository';

type Member = { role: OrgRoleName; dailyCreditLimit: number | null };

/**
 * Members of an organization: list, change a role or a cap, remove (or leave). Every change takes the
 * organization's row lock first and then reads both the caller's and the target's membership as
 * committed, so a role that changed meanwhile counts and "the last owner" is decided on facts; every
 * change is audited. docs/adr/0062-organizations.md
 */
@Injectable()
export class OrgMembersService {
  constructor(
    private readonly orgs: OrgsRepository,
    private readonly invitations: InvitationsRepository,
    private readonly access: OrgAccess,
    private readonly audit: AuditRepository,
    private readonly clock: Clock,
  ) {}

  async list(user: SessionUser, orgId: string): Promise<OrgMemberListDto> {
    await this.access.require(user, orgId);
    const rows = await this.orgs.findMembersPage(orgId);
    return {
      data: rows.map((row) => ({
        userId: row.userId,
        email: row.user.email,
        role: row.role,
        dailyCreditLimit: row.dailyCreditLimit,
        joinedAt: row.createdAt.toISOString(),
      })),
    };
  }

  /** Admins and owners; owners (their role and their cap) only by an owner; the last owner keeps the role. */
  async change(
    user: SessionUser,
    orgId: string,
    memberId: string,
    input: MemberChangeDto,
  ): Promise<OrgMemberDto> {
    await this.access.require(user, orgId, 'admin');
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
    await this.orgs.inTransaction(async (db) => {
      const { actor, target } = await this.locked(db, user, orgId, memberId);
      requireRole(actor, 'admin');
      const touchesOwner = target.role === 'owner' || input.role === 'owner';
      if (touchesOwner && actor.role !== 'owner')
        throw ownerRequired('change an owner or make one');
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
      await this.revokeInvitationsBeyond(db, orgId, memberId, after.role);
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
    await this.access.require(user, orgId, leaving ? 'member' : 'admin');
    await this.orgs.inTransaction(async (db) => {
      const { actor, target } = await this.locked(db, user, orgId, memberId);
      if (!leaving) requireRole(actor, 'admin');
      if (!leaving && target.role === 'owner' && actor.role !== 'owner')
        throw ownerRequired('remove an owner');
      if (target.role === 'owner') await this.assertAnotherOwner(db, orgId);
      await this.orgs.removeMember(db, orgId, memberId);
      await this.revokeInvitationsBeyond(db, orgId, memberId, null);
      await this.audit.record(db, {
        adminId: user.id,
        action: leaving ? 'org.member.leave' : 'org.member.remove',
        targetType: 'organization',
        targetId: orgId,
        before: { userId: memberId, role: target.role },
      });
    });
  }

  /**
   * The organization locked, then the caller's membership (404 once they are no longer a member) and the
   * target's (404 when not a member), both as committed.
   */
  private async locked(
    db: Db,
    user: SessionUser,
    orgId: string,
    memberId: string,
  ): Promise<{ actor: Member; target: Member }> {
    if (!(await this.orgs.lockOrganization(db, orgId)))
      throw organizationNotFound();
    const actor = await this.orgs.findMemberInTransaction(db, orgId, user.id);
    if (!actor) throw organizationNotFound();
    const target = isUuid(memberId)
      ? await this.orgs.findMemberInTransaction(db, orgId, memberId)
      : null;
    if (!target) throw memberNotFound();
    return { actor, target };
  }

  /** Pending invitations a member may no longer send go with the right: all when removed or a member now, owner ones when no longer an owner. */
  private async revokeInvitationsBeyond(
    db: Db,
    orgId: string,
    memberId: string,
    role: OrgRoleName | null,
  ): Promise<void> {
    if (role === 'owner') return;
    await this.invitations.revokeSentBy(
      db,
      orgId,
      memberId,
      role === 'admin' ? 'owner-invitations' : 'all',
      this.clock.now(),
    );
  }

  private async assertAnotherOwner(db: Db, orgId: string): Promise<void> {
    if ((await this.orgs.countOwners(db, orgId)) <= 1)
      throw new AppError(
        'last_owner',
        'This is the last owner of the organization: make another member an owner first (or delete the organization).',
      );
  }
}

/** The caller's role as committed must still allow the change (it may have changed since the request began). */
function requireRole(actor: Member, atLeast: OrgRoleName): void {
  if (!hasRole(actor.role, atLeast))
    throw new AppError(
      'org_role_required',
      `This needs the ${atLeast} role or above in the organization; yours is ${actor.role}.`,
    );
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
