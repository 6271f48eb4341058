import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { Request } from 'express';
import { SessionUser } from './session-user';

/** The signed-in caller, as set by SessionGuard (only on routes that are not @Public()). */
export const CurrentUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): SessionUser => {
    const user = context.switchToHttp().getRequest<Request>().user;
    if (!user) throw new Error('CurrentUser used on a route without a session');
    return user;
  },
);

declare module 'express-serve-static-core' {
  interface Request {
    user?: SessionUser;
  }
}
