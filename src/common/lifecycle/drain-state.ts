import { Global, Module } from '@nestjs/common';
import { NextFunction, Request, Response } from 'express';

/**
 * Whether this instance is shutting down. While draining, readiness answers 503 (load balancers stop
 * sending traffic) and every response closes its connection, so keep-alive clients reconnect elsewhere
 * instead of holding the process open.
 */
export class DrainState {
  private draining = false;

  get isDraining(): boolean {
    return this.draining;
  }

  begin(): void {
    this.draining = true;
  }

  /** Decided when the response head is written, so requests already in flight at the signal close too. */
  closeConnectionsWhileDraining() {
    return (_req: Request, res: Response, next: NextFunction): void => {
      const writeHead = res.writeHead.bind(res);
      res.writeHead = ((...args: Parameters<Response['writeHead']>) => {
        if (this.draining && !res.headersSent)
          res.setHeader('Connection', 'close');
        return writeHead(...args);
      }) as Response['writeHead'];
      next();
    };
  }
}

@Global()
@Module({ providers: [DrainState], exports: [DrainState] })
export class LifecycleModule {}
