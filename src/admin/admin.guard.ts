import {
  applyDecorators,
  CanActivate,
  ExecutionContext,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Request } from 'express';
import { AppError } from '../common/errors/app-error';
import { ApiProblems } from '../common/openapi/api-problems.decorator';

/**
 * Runs after the global SessionGuard (anonymous callers already got 401): the role comes from the account
 * row the session was checked against on this request, never from anything the request says.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const user = context.switchToHttp().getRequest<Request>().user;
    if (user?.role !== 'admin')
      throw new AppError('forbidden', 'This endpoint is for administrators.');
    return true;
  }
}

/** Marks an internal admin controller: admin role required, documented under "internal: admin". */
export function AdminOnly(): ClassDecorator {
  return applyDecorators(
    UseGuards(AdminGuard),
    ApiTags('internal: admin'),
    ApiProblems(401, 403),
  );
}
