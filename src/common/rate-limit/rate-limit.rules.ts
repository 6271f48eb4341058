/** Which request attribute a limit counts by. */
export type RateLimitKey = 'ip' | 'email';

/** The limits the configuration defines (`rateLimits[name]`: max requests per window). */
export const RATE_LIMIT_NAMES = ['login-ip', 'login-email', 'register-ip', 'forgot-ip', 'forgot-email', 'reset-ip'] as const;
export type RateLimitName = (typeof RATE_LIMIT_NAMES)[number];

export interface RateLimitRule {
  name: RateLimitName;
  by: RateLimitKey;
}

export const RATE_LIMIT_RULES = 'rateLimitRules';
