import { Inject, Injectable } from '@nestjs/common';
import { AuditRepository } from '../audit/audit.repository';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { newSecretToken, sha256Hex } from '../common/hashing';
import { isUuid } from '../common/ids';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { MailService } from '../infra/mail/mail.service';
import { AcceptInvitationDto, InvitationInputDto } from './dto/org-input.dto';
import {
  InvitationDto,
  InvitationListDto,
  OrganizationDto,
} from './dto/org.response';
import { hasRole, OrgAccess, organizationNotFound } from './org-access';
import { OrgRoleName } from './dto/org-input.dto';
import { isPaid, toInvitation, toOrganization } from './org-mappers';
import { InvitationsRepository } from './invitations.repository';
import { OrgsRepository } from './orgs.repository';

export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

/** Admins and owners invite; only an owner invites an owner. */
function assertMayInvite(role: OrgRoleName, invited: OrgRoleName): void {
  if (!hasRole(role, 'admin'))
    throw new AppError(
      'org_role_required',
      `Inviting needs the admin role or above in the organization; yours is ${role}.`,
    );
  if (invited === 'owner' && role !== 'owner')
    throw new AppError(
      'org_role_required',
      'Only an owner may invite an owner; your role is admin.',
    );
}

/** 409 `seats_exhausted` when a paid organization has as many members as seats. */
function assertSeatFree(
  org: { planCode: string; seats: number; members: number },
  orgId: string,
): void {
  if (isPaid(org) && org.members >= org.seats)
    throw new AppError(
      'seats_exhausted',
      `All ${org.seats} seats are taken: buy more seats (PATCH /v1/orgs/${orgId}/subscription) or remove a member first.`,
    );
}

function invitationNotFound(): AppError {
  return new AppError('not_found', 'No such invitation.');
}

/**
 * Invitations: an admin or owner mails a single-use link (7 days; only its hash is stored); the account
 * whose verified address is the invited one accepts it and becomes a member with the invited role.
 * docs/adr/0062-organizations.md
 */
@Injectable()
export class InvitationsService {
  constructor(
    private readonly invitations: InvitationsRepository,
    private readonly orgs: OrgsRepository,
    private readonly access: OrgAccess,
    private readonly audit: AuditRepository,
    private readonly mail: MailService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly log: AppLogger,
  ) {}

  async invite(
    user: SessionUser,
    orgId: string,
    input: InvitationInputDto,
  ): Promise<InvitationDto> {
    const actor = await this.access.require(user, orgId, 'admin');
    assertMayInvite(actor.role, input.role);
    const { token, hash } = newSecretToken();
    const now = this.clock.now();
    const invitation = await this.orgs.inTransaction(async (db) => {
      const org = await this.orgs.lockOrganization(db, orgId);
      if (!org) throw organizationNotFound();
      assertSeatFree(org, orgId);
      // The caller's role as committed, under the organization's lock (it may have changed meanwhile).
      const current = await this.orgs.findMemberInTransaction(
        db,
        orgId,
        user.id,
      );
      if (!current) throw organizationNotFound();
      assertMayInvite(current.role, input.role);
      const created = await this.invitations.replacePending(
        db,
        {
          organizationId: orgId,
          email: input.email,
          role: input.role,
          tokenHash: hash,
          invitedById: user.id,
          expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
        },
        now,
      );
      await this.audit.record(db, {
        adminId: user.id,
        action: 'org.invitation.create',
        targetType: 'organization',
        targetId: orgId,
        after: {
          invitationId: created.id,
          email: created.email,
          role: created.role,
        },
      });
      return created;
    });
    await this.sendMail(input.email, actor.organization.name, token).catch(
      (error: unknown) =>
        this.log.error(
          { err: error, invitationId: invitation.id },
          'invitation mail failed',
        ),
    );
    return toInvitation(invitation);
  }

  async listPending(
    user: SessionUser,
    orgId: string,
  ): Promise<InvitationListDto> {
    await this.access.require(user, orgId, 'admin');
    const rows = await this.invitations.findPending(orgId, this.clock.now());
    return { data: rows.map(toInvitation) };
  }

  async revoke(
    user: SessionUser,
    orgId: string,
    invitationId: string,
  ): Promise<void> {
    await this.access.require(user, orgId, 'admin');
    const now = this.clock.now();
    await this.orgs.inTransaction(async (db) => {
      const revoked = isUuid(invitationId)
        ? await this.invitations.revoke(db, orgId, invitationId, now)
        : null;
      if (!revoked)
        throw new AppError('not_found', 'No such pending invitation.');
      await this.audit.record(db, {
        adminId: user.id,
        action: 'org.invitation.revoke',
        targetType: 'organization',
        targetId: orgId,
        before: { invitationId, ...revoked },
      });
    });
  }

  /**
   * Makes the caller a member: the link must be pending (410 once used, revoked or expired), the caller's
   * address verified (403 `email_unverified`) and the invited one (403 `invitation_mismatch`), a seat free.
   * All in one transaction holding the invitation's and the organization's rows.
   */
  async accept(
    user: SessionUser,
    input: AcceptInvitationDto,
  ): Promise<OrganizationDto> {
    const now = this.clock.now();
    const tokenHash = sha256Hex(input.token);
    const invitedTo = await this.invitations.findOrganizationOfToken(tokenHash);
    if (!invitedTo) throw invitationNotFound();
    const orgId = await this.orgs.inTransaction(async (db) => {
      // The organization first, then the invitation: the order every membership change takes.
      const org = await this.orgs.lockOrganization(db, invitedTo);
      const invitation = await this.invitations.lockByTokenHash(db, tokenHash);
      if (!org || !invitation) throw invitationNotFound();
      if (
        invitation.acceptedAt ||
        invitation.revokedAt ||
        invitation.expiresAt.getTime() <= now.getTime()
      )
        throw new AppError(
          'invitation_gone',
          'This invitation was used, revoked or has expired: ask for a new one.',
        );
      const account = await this.orgs.findAccount(db, user.id);
      if (!account?.emailVerifiedAt)
        throw new AppError(
          'email_unverified',
          'Verify your email address first: an invitation is accepted only by the verified owner of the invited address.',
        );
      if (account.email.toLowerCase() !== invitation.email.toLowerCase())
        throw new AppError(
          'invitation_mismatch',
          'This invitation was sent to another address: sign in with the invited account.',
        );
      const orgId = invitation.organizationId;
      assertSeatFree(org, orgId);
      if (await this.orgs.findMemberInTransaction(db, orgId, user.id))
        throw new AppError(
          'already_member',
          'You are already a member of this organization.',
        );
      await this.orgs.addMember(db, orgId, user.id, invitation.role);
      await this.invitations.markAccepted(db, invitation.id, user.id, now);
      await this.audit.record(db, {
        adminId: user.id,
        action: 'org.member.join',
        targetType: 'organization',
        targetId: orgId,
        after: {
          userId: user.id,
          role: invitation.role,
          invitationId: invitation.id,
        },
      });
      return orgId;
    });
    const membership = await this.access.require(user, orgId);
    return toOrganization(membership.organization, membership.role);
  }

  private async sendMail(
    to: string,
    organization: string,
    token: string,
  ): Promise<void> {
    // Built from APP_URL only: a forged Host header cannot send the token elsewhere.
    const link = `${this.config.appUrl}/invitations/accept?token=${encodeURIComponent(token)}`;
    await this.mail.send({
      to,
      subject: `You are invited to ${organization}`,
      text:
        `You are invited to join the organization "${organization}".\n\n` +
        `To accept, sign in with this address and open this link within 7 days:\n${link}\n\n` +
        `If you did not expect it, ignore this mail.\n`,
    });
  }
}
