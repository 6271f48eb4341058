import { Profile } from 'passport';
import { OAuthProviderConfig } from '../../config/app-config';
import { OAuthFailure } from './oauth-failure';

export const OAUTH_PROVIDERS = ['google', 'github'] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

/** What we need from a provider's account: its stable id and an email the provider says is verified. */
export interface ProviderProfile {
  providerUserId: string;
  email: string | null;
  emailVerified: boolean;
}

/** A passport profile with the provider's own JSON (both strategies keep it). */
export type PassportProfile = Profile & { _json?: unknown };

export function isConfigured(
  config: OAuthProviderConfig,
): config is OAuthProviderConfig & { clientId: string; clientSecret: string } {
  return Boolean(config.clientId && config.clientSecret);
}

/** Google's OpenID Connect userinfo: `sub`, `email`, `email_verified` (a boolean, or the string "true"). */
export function googleProfile(profile: PassportProfile): ProviderProfile {
  const info = (profile._json ?? {}) as {
    sub?: unknown;
    email?: unknown;
    email_verified?: unknown;
  };
  if (typeof info.sub !== 'string' || !info.sub)
    throw new OAuthFailure('oauth_exchange_failed');
  const email =
    typeof info.email === 'string' ? info.email.trim().toLowerCase() : null;
  return {
    providerUserId: info.sub,
    email,
    emailVerified:
      info.email_verified === true || info.email_verified === 'true',
  };
}

/**
 * GitHub's /user has no verified flag: with `allRawEmails`, passport-github2 keeps /user/emails as it came
 * (`primary`, `verified`), and the verified primary address is the account's email.
 */
export function githubProfile(profile: PassportProfile): ProviderProfile {
  const user = (profile._json ?? {}) as { id?: unknown };
  if (
    (typeof user.id !== 'number' && typeof user.id !== 'string') ||
    user.id === ''
  )
    throw new OAuthFailure('oauth_exchange_failed');
  const emails = (profile.emails ?? []) as {
    value?: unknown;
    primary?: unknown;
    verified?: unknown;
  }[];
  const primary = emails.find(
    (entry) => entry.primary === true && typeof entry.value === 'string',
  );
  return {
    providerUserId: String(user.id),
    email: primary ? String(primary.value).trim().toLowerCase() : null,
    emailVerified: primary?.verified === true,
  };
}
