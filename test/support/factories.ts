import { createHash, randomBytes } from 'node:crypto';
import { sql } from './sql';
import request from 'supertest';

type Http = ReturnType<typeof request>;

export const PASSWORD = 'correct horse battery staple';

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(5).toString('hex')}@example.com`;
}

/** The `name=value` part of the session cookie in a response, for the next request's Cookie header. */
export function sessionCookie(
  res: { headers: Record<string, unknown> },
  name = 'sid',
): string {
  const cookies = (res.headers['set-cookie'] as string[] | undefined) ?? [];
  const cookie = cookies.find((value) => value.startsWith(`${name}=`));
  if (!cookie) throw new Error(`no ${name} cookie in the response`);
  return cookie.split(';')[0];
}

/** Registers a fresh account through the API and answers its email and session cookie. */
export async function registerUser(
  http: Http,
  overrides: { email?: string; password?: string } = {},
) {
  const email = overrides.email ?? uniqueEmail();
  const res = await http
    .post('/v1/auth/register')
    .send({ email, password: overrides.password ?? PASSWORD })
    .expect(201);
  return { email, id: res.body.id as string, cookie: sessionCookie(res) };
}

/**
 * Proves the account's email through the real POST /v1/auth/verify-email, with a link token planted in the
 * database (as if read from the mail). This is also what makes an ADMIN_EMAILS address an admin.
 */
export async function verifyEmail(
  http: Http,
  account: { id: string; email: string },
  databaseUrl?: string,
): Promise<void> {
  const token = randomBytes(32).toString('base64url');
  const tokenHash = createHash('sha256').update(token).digest('hex');
  await sql(
    `INSERT INTO "EmailVerificationToken" (id, "userId", email, "tokenHash", "expiresAt") VALUES (gen_random_uuid(), $1, $2, $3, now() + interval '1 hour')`,
    [account.id, account.email, tokenHash],
    databaseUrl,
  );
  await http.post('/v1/auth/verify-email').send({ token }).expect(204);
}

/**
 * A fresh account with a verified email (an admin when the email is in the app's ADMIN_EMAILS).
 * `databaseUrl`: the app's database, for a suite that runs on a database of its own.
 */
export async function registerVerifiedUser(
  http: Http,
  overrides: { email?: string; password?: string; databaseUrl?: string } = {},
) {
  const account = await registerUser(http, overrides);
  await verifyEmail(http, account, overrides.databaseUrl);
  return account;
}
