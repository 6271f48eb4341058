import { ExecutionContext } from '@nestjs/common';
import { RateLimit } from './rate-limit.decorator';
import { AppThrottlerGuard, RateLimitGuard } from './throttling';

class Routes {
  plain(this: void): void {}

  @RateLimit('login-ip')
  limited(this: void): void {}
}

function contextOf(handler: () => void): ExecutionContext {
  return {
    getHandler: () => handler,
    getClass: () => Routes,
  } as unknown as ExecutionContext;
}

describe('RateLimitGuard', () => {
  const delegated: ExecutionContext[] = [];
  const throttler = {
    canActivate: (context: ExecutionContext) => {
      delegated.push(context);
      return Promise.resolve(true);
    },
  } as unknown as AppThrottlerGuard;
  const guard = new RateLimitGuard(throttler);

  beforeEach(() => (delegated.length = 0));

  it('lets a route without @RateLimit through synchronously, without the throttlers', () => {
    expect(guard.canActivate(contextOf(Routes.prototype.plain))).toBe(true);
    expect(delegated).toHaveLength(0);
  });

  it('hands a route with @RateLimit to the throttlers', async () => {
    const context = contextOf(Routes.prototype.limited);
    const result = guard.canActivate(context);
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toBe(true);
    expect(delegated).toEqual([context]);
  });
});
