/** Which request attribute a limit counts by: the client address, the body's email, or the signed-in user. */
export type RateLimitKey = 'ip' | 'email' | 'user';

/**
 * The named limits (each a named throttler of @nestjs/throttler, `rateLimits[name]` in the configuration:
 * max requests per window) and what each counts by. A route opts into limits with @RateLimit(...names).
 */
export const RATE_LIMITS = {
  'login-ip': 'ip',
  'login-email': 'email',
  'register-ip': 'ip',
  'forgot-ip': 'ip',
  'forgot-email': 'email',
  'reset-ip': 'ip',
  'run-user': 'user',
  'upload-user': 'user',
  'skill-write-user': 'user',
  'invite-user': 'user',
  'password-user': 'user',
  'verify-email-ip': 'ip',
  'resend-verification-user': 'user',
  'two-factor-ip': 'ip',
  'two-factor-user': 'user',
  'export-user': 'user',
  'share-user': 'user',
  'shared-ip': 'ip',
} as const satisfies Record<string, RateLimitKey>;

export type RateLimitName = keyof typeof RATE_LIMITS;
export const RATE_LIMIT_NAMES = Object.keys(RATE_LIMITS) as RateLimitName[];

/** Metadata key: the limits a route declared. */
export const RATE_LIMIT_RULES = 'rateLimitRules';
