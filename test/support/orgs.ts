import request from 'supertest';
import { CapturedMail } from './fake-smtp';
import { registerVerifiedUser } from './factories';
import { sql } from './sql';

type Http = ReturnType<typeof request>;
type Account = { id: string; email: string; cookie: string };

/** The token of the invitation link in a mail (quoted-printable soft line breaks undone). */
export function invitationTokenOf(mail: Pick<CapturedMail, 'raw'>): string {
  const text = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const match = /invitations\/accept\?token=([A-Za-z0-9_%.~-]+)/.exec(text);
  if (!match) throw new Error(`no invitation link in:\n${mail.raw}`);
  return decodeURIComponent(match[1]);
}

/** The paid plan and seats a confirmed checkout would give (the checkout itself is tested elsewhere). */
export async function giveTeamPlan(
  orgId: string,
  seats: number,
): Promise<void> {
  await sql(
    `UPDATE "Organization" SET "planCode" = 'team', seats = $2 WHERE id = $1`,
    [orgId, seats],
  );
}

export async function createOrg(
  http: Http,
  owner: Account,
  name = 'Acme',
): Promise<string> {
  const res = await http
    .post('/v1/orgs')
    .set('Cookie', owner.cookie)
    .send({ name })
    .expect(201);
  return res.body.id as string;
}

/** Invites `email` as `by` and answers the token of the link mailed to it (the fake SMTP server's mails). */
export async function inviteByMail(
  http: Http,
  mails: CapturedMail[],
  by: Account,
  orgId: string,
  email: string,
  role = 'member',
): Promise<string> {
  const sent = mails.length;
  await http
    .post(`/v1/orgs/${orgId}/invitations`)
    .set('Cookie', by.cookie)
    .send({ email, role })
    .expect(201);
  const mail = mails
    .slice(sent)
    .find(
      (candidate) =>
        candidate.to.includes(email) &&
        candidate.raw.includes('Subject: You are invited'),
    );
  if (!mail) throw new Error(`no invitation mail to ${email}`);
  return invitationTokenOf(mail);
}

/** A fresh verified account invited with `role` that accepted the mailed link. */
export async function joinByMail(
  http: Http,
  mails: CapturedMail[],
  owner: Account,
  orgId: string,
  role = 'member',
): Promise<Account> {
  const member = await registerVerifiedUser(http);
  const token = await inviteByMail(
    http,
    mails,
    owner,
    orgId,
    member.email,
    role,
  );
  await http
    .post('/v1/orgs/invitations/accept')
    .set('Cookie', member.cookie)
    .send({ token })
    .expect(200);
  return member;
}
