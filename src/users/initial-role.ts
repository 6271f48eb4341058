import { AppConfig } from '../config/app-config';

/**
 * Accounts whose email is in ADMIN_EMAILS are admins from sign-up on, but only once the address is proved
 * (emails are stored lower-cased): a password sign-up proves nothing, so it starts as a user and is promoted
 * when its verification link is followed (see EmailVerificationService).
 */
export function initialRole(
  config: Pick<AppConfig, 'adminEmails'>,
  email: string,
  emailVerified: boolean,
): 'admin' | 'user' {
  return emailVerified && isConfiguredAdmin(config, email) ? 'admin' : 'user';
}

export function isConfiguredAdmin(
  config: Pick<AppConfig, 'adminEmails'>,
  email: string,
): boolean {
  return config.adminEmails.includes(email.toLowerCase());
}
