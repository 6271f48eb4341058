import { AppConfig } from '../config/app-config';

/** Accounts whose email is in ADMIN_EMAILS are admins from sign-up on (emails are stored lower-cased). */
export function initialRole(config: Pick<AppConfig, 'adminEmails'>, email: string): 'admin' | 'user' {
  return config.adminEmails.includes(email.toLowerCase()) ? 'admin' : 'user';
}
