import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';

export const IS_PUBLIC = 'isPublic';

/**
 * Marks a route (or controller) as needing no session. Routes are session-only by default; the
 * OpenAPI document shows public ones with an empty security requirement.
 */
export function Public(): ClassDecorator & MethodDecorator {
  return applyDecorators(SetMetadata(IS_PUBLIC, true), ApiSecurity({}));
}
