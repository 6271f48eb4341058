import {
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
} from '@nestjs/common';
import {
  ThrottlerGuard,
  ThrottlerLimitDetail,
  ThrottlerModuleOptions,
  ThrottlerOptions,
  ThrottlerStorage,
} from '@nestjs/throttler';
import { Request } from 'express';
import { AppConfig } from '../../config/app-config';
import { Metrics } from '../../infra/metrics/metrics';
import { normalizeEmail } from '../email';
import { AppError } from '../errors/app-error';
import { rateLimitAddress } from './client-address';
import {
  RATE_LIMIT_NAMES,
  RATE_LIMIT_RULES,
  RATE_LIMITS,
  RateLimitName,
} from './rate-limit.rules';
import { RateLimitStore } from './rate-limit.store';

/**
 * @nestjs/throttler's storage over our counters: Redis shared by every instance, per instance while Redis is
 * down (FallbackRateLimitStore). A fixed window of `ttl`; a request over the limit is blocked until the
 * window ends.
 * docs/adr/0020-rate-limits.md
 */
export class CounterThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly counters: RateLimitStore) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
  ): Promise<Awaited<ReturnType<ThrottlerStorage['increment']>>> {
    const { count, resetInMs } = await this.counters.hit(key, ttl);
    const seconds = Math.max(1, Math.ceil(resetInMs / 1000));
    const isBlocked = count > limit;
    return {
      totalHits: count,
      timeToExpire: seconds,
      isBlocked,
      timeToBlockExpire: isBlocked ? seconds : 0,
    };
  }
}

/** The subject a limit counts: client address (TRUST_PROXY, IPv6 per /64), normalised body email, or user id. */
function subjectOf(req: Request, name: RateLimitName): string | null {
  switch (RATE_LIMITS[name]) {
    case 'ip':
      return rateLimitAddress(req.ip ?? req.socket.remoteAddress ?? 'unknown');
    case 'email': {
      const email = (req.body as { email?: unknown } | undefined)?.email;
      return typeof email === 'string' && email.trim()
        ? normalizeEmail(email).slice(0, 320)
        : null;
    }
    case 'user':
      return req.user?.id ?? null;
  }
}

/** The limits the route declared with @RateLimit (none for most routes). */
function declaredLimits(
  context: ExecutionContext,
): RateLimitName[] | undefined {
  return Reflect.getMetadata(RATE_LIMIT_RULES, context.getHandler()) as
    RateLimitName[] | undefined;
}

/**
 * One named throttler per configured limit. Each applies only to the routes that declare it (@RateLimit)
 * and have its subject (a login without an email is not counted per email); its key is the limit's name and
 * the subject, so a limit shared by several routes (runs: chat and Skill runs) counts them together.
 */
export function throttlerOptions(
  config: AppConfig,
  storage: ThrottlerStorage,
): ThrottlerModuleOptions {
  const throttlers: ThrottlerOptions[] = RATE_LIMIT_NAMES.map((name) => ({
    name,
    limit: config.rateLimits[name].max,
    ttl: config.rateLimits[name].windowSeconds * 1000,
    skipIf: (context: ExecutionContext) =>
      !declaredLimits(context)?.includes(name) ||
      subjectOf(context.switchToHttp().getRequest<Request>(), name) === null,
    getTracker: (req: Record<string, unknown>) =>
      subjectOf(req as unknown as Request, name) ?? '',
    generateKey: (_context: ExecutionContext, tracker: string) =>
      `${name}:${tracker}`,
  }));
  return { throttlers, storage, setHeaders: false };
}

/** The rule of a throttler key (`<rule>:<subject>`, see generateKey): only the rule, never the subject (an address, email or user id). */
export function ruleOfKey(key: string): RateLimitName | 'unknown' {
  const rule = key.slice(0, key.indexOf(':'));
  return (RATE_LIMIT_NAMES as readonly string[]).includes(rule)
    ? (rule as RateLimitName)
    : 'unknown';
}

/** The global ThrottlerGuard, answering a blocked request as every other refusal: 429 problem+json with Retry-After. */
@Injectable()
export class AppThrottlerGuard extends ThrottlerGuard {
  // A property, not a constructor parameter: ThrottlerGuard's constructor stays as Nest injects it.
  @Inject(Metrics) private readonly metrics!: Metrics;

  protected override throwThrottlingException(
    _context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const seconds = Math.max(1, detail.timeToBlockExpire);
    this.metrics.rateLimited(ruleOfKey(detail.key));
    return Promise.reject(
      new AppError(
        'rate_limited',
        `Too many attempts: try again in ${seconds} seconds.`,
        { headers: { 'Retry-After': String(seconds) } },
      ),
    );
  }
}

/**
 * The global rate-limit guard. Routes without @RateLimit (most, the chat's reads among them) pass
 * synchronously: no walk over every named throttler, and no promise for Nest to await. The others go
 * through AppThrottlerGuard.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(private readonly throttler: AppThrottlerGuard) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    return declaredLimits(context)?.length
      ? this.throttler.canActivate(context)
      : true;
  }
}
