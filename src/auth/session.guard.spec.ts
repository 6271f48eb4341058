import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Request } from 'express';
import { Public } from '../common/decorators/public.decorator';
import { AppError } from '../common/errors/app-error';
import { AppConfig } from '../config/app-config';
import { SessionGuard } from './session.guard';
import { SessionUser } from './session-user';
import { SessionsService } from './sessions.service';

const TOKEN = 'a'.repeat(43);
const CACHED = 'c'.repeat(43);

class Routes {
  @Public()
  open(this: void): void {}

  closed(this: void): void {}
}

const caller = { id: 'u-1' } as SessionUser;

/** Answers the CACHED token synchronously (as a cached session is), TOKEN after a database read. */
const sessions = {
  authenticate: (token: string) =>
    token === CACHED
      ? caller
      : Promise.resolve(token === TOKEN ? caller : null),
} as unknown as SessionsService;

const config = { session: { cookieName: 'sid' } } as AppConfig;

function contextOf(
  handler: () => void,
  cookie?: string,
): { context: ExecutionContext; req: Request } {
  const req = { headers: { cookie } } as Request;
  const context = {
    getHandler: () => handler,
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req }),
  } as unknown as ExecutionContext;
  return { context, req };
}

describe('SessionGuard', () => {
  const guard = new SessionGuard(new Reflector(), sessions, config);

  it('lets anyone through a @Public() route', () => {
    expect(guard.canActivate(contextOf(Routes.prototype.open).context)).toBe(
      true,
    );
  });

  it('admits a cached session synchronously and puts its user on the request', () => {
    const { context, req } = contextOf(
      Routes.prototype.closed,
      `sid=${CACHED}`,
    );
    expect(guard.canActivate(context)).toBe(true);
    expect(req.user).toBe(caller);
  });

  it('waits for a session read from the database', async () => {
    const { context, req } = contextOf(Routes.prototype.closed, `sid=${TOKEN}`);
    const result = guard.canActivate(context);
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toBe(true);
    expect(req.user).toBe(caller);
  });

  it('refuses a request without a session cookie, or with an unknown session', async () => {
    const unauthenticated = { code: 'unauthenticated' };
    expect(() =>
      guard.canActivate(contextOf(Routes.prototype.closed).context),
    ).toThrow(expect.objectContaining(unauthenticated) as AppError);
    await expect(
      guard.canActivate(
        contextOf(Routes.prototype.closed, `sid=${'z'.repeat(43)}`).context,
      ),
    ).rejects.toMatchObject(unauthenticated);
  });
});
