import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { problemResponse } from '../openapi/api-problems.decorator';
import { RATE_LIMIT_RULES, RateLimitName } from './rate-limit.rules';

/**
 * Limits a route with these named throttlers (the global ThrottlerGuard runs before validation, password
 * hashing or anything else): each counts the request independently, and any over its limit answers 429
 * with Retry-After.
 */
export function RateLimit(...names: RateLimitName[]): MethodDecorator {
  return applyDecorators(
    SetMetadata(RATE_LIMIT_RULES, names),
    ApiResponse({ status: 429, ...problemResponse(429) }),
  );
}
