import { randomBytes } from 'node:crypto';
import request from 'supertest';

type Http = ReturnType<typeof request>;

export const PASSWORD = 'correct horse battery staple';

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(5).toString('hex')}@example.com`;
}

/** The `name=value` part of the session cookie in a response, for the next request's Cookie header. */
export function sessionCookie(res: { headers: Record<string, unknown> }, name = 'sid'): string {
  const cookies = (res.headers['set-cookie'] as string[] | undefined) ?? [];
  const cookie = cookies.find((value) => value.startsWith(`${name}=`));
  if (!cookie) throw new Error(`no ${name} cookie in the response`);
  return cookie.split(';')[0];
}

/** Registers a fresh account through the API and answers its email and session cookie. */
export async function registerUser(http: Http, overrides: { email?: string; password?: string } = {}) {
  const email = overrides.email ?? uniqueEmail();
  const res = await http.post('/v1/auth/register').send({ email, password: overrides.password ?? PASSWORD }).expect(201);
  return { email, id: res.body.id as string, cookie: sessionCookie(res) };
}
