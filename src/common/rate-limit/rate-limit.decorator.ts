import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { problemResponse } from '../openapi/api-problems.decorator';
import { RateLimitGuard } from './rate-limit.guard';
import { RATE_LIMIT_RULES, RateLimitRule } from './rate-limit.rules';


/**
 * Limits a route before anything else runs (no validation, no password hashing): each rule counts the
 * request independently, and any rule over its limit answers 429 with Retry-After.
 */
export function RateLimit(...rules: RateLimitRule[]): MethodDecorator {
  return applyDecorators(SetMetadata(RATE_LIMIT_RULES, rules), UseGuards(RateLimitGuard), ApiResponse({ status: 429, ...problemResponse(429) }));
}
