import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Request } from 'express';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { normalizeEmail } from '../email';
import { AppError } from '../errors/app-error';
import { rateLimitAddress } from './client-address';
import { RATE_LIMIT_RULES, RateLimitRule } from './rate-limit.rules';
import { RATE_LIMIT_STORE } from './rate-limit.module';
import { RateLimitStore } from './rate-limit.store';

@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rules = this.reflector.get<RateLimitRule[]>(RATE_LIMIT_RULES, context.getHandler()) ?? [];
    const req = context.switchToHttp().getRequest<Request>();
    // Every rule counts the request, independently of the others: one round trip each, all at once.
    const hits = await Promise.all(
      rules.map(async (rule) => {
        const subject = subjectOf(req, rule);
        if (subject === null) return 0;
        const limit = this.config.rateLimits[rule.name];
        const { count, resetInMs } = await this.store.hit(`${rule.name}:${subject}`, limit.windowSeconds * 1000);
        return count > limit.max ? resetInMs : 0;
      }),
    );
    const retryAfterMs = Math.max(0, ...hits);
    if (retryAfterMs > 0) {
      const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
      throw new AppError('rate_limited', `Too many attempts: try again in ${seconds} seconds.`, { headers: { 'Retry-After': String(seconds) } });
    }
    return true;
  }
}

/** The client address (X-Forwarded-For only through TRUST_PROXY; IPv6 per /64) or the body's normalized email. */
function subjectOf(req: Request, rule: RateLimitRule): string | null {
  if (rule.by === 'ip') return rateLimitAddress(req.ip ?? req.socket.remoteAddress ?? 'unknown');
  const email = (req.body as { email?: unknown } | undefined)?.email;
  return typeof email === 'string' && email.trim() ? normalizeEmail(email).slice(0, 320) : null;
}
