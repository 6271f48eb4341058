import { AppConfig, OAuthProviderConfig } from '../../config/app-config';

export const OAUTH_PROVIDERS = ['google', 'github'] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

/** What we need from a provider's account: its stable id and an email the provider says is verified. */
export interface ProviderProfile {
  providerUserId: string;
  email: string | null;
  emailVerified: boolean;
}

export interface OAuthProviderDefinition {
  name: OAuthProviderName;
  config: OAuthProviderConfig;
  scope: string;
  pkce: boolean;
  fetchProfile: (accessToken: string) => Promise<ProviderProfile>;
}

export function oauthProvider(config: AppConfig, name: OAuthProviderName): OAuthProviderDefinition {
  if (name === 'google') {
    const google = config.oauth.google;
    return { name, config: google, scope: 'openid email profile', pkce: true, fetchProfile: (token) => googleProfile(google.userinfoUrl, token) };
  }
  const github = config.oauth.github;
  return { name, config: github, scope: 'read:user user:email', pkce: false, fetchProfile: (token) => githubProfile(github.userinfoUrl, github.emailsUrl, token) };
}

/** OpenID Connect userinfo: `sub`, `email`, `email_verified`. */
async function googleProfile(userinfoUrl: string, token: string): Promise<ProviderProfile> {
  const info = await getJson<{ sub?: unknown; email?: unknown; email_verified?: unknown }>(userinfoUrl, token);
  if (typeof info.sub !== 'string' || !info.sub) throw new Error('google userinfo has no sub');
  const email = typeof info.email === 'string' ? info.email.trim().toLowerCase() : null;
  return { providerUserId: info.sub, email, emailVerified: info.email_verified === true || info.email_verified === 'true' };
}

/** GitHub's profile has no verified flag: the verified primary address comes from /user/emails. */
async function githubProfile(userUrl: string, emailsUrl: string, token: string): Promise<ProviderProfile> {
  const user = await getJson<{ id?: unknown }>(userUrl, token);
  if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new Error('github user has no id');
  const emails = await getJson<{ email?: unknown; primary?: unknown; verified?: unknown }[]>(emailsUrl, token);
  const primary = Array.isArray(emails) ? emails.find((entry) => entry.primary === true && typeof entry.email === 'string') : undefined;
  return {
    providerUserId: String(user.id),
    email: primary ? String(primary.email).trim().toLowerCase() : null,
    emailVerified: primary?.verified === true,
  };
}

async function getJson<T>(url: string, token: string): Promise<T> {
  const res = await fetch(url, {
    headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'User-Agent': 'chat-api' },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`${new URL(url).pathname} answered ${res.status}`);
  return (await res.json()) as T;
}
