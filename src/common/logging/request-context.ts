import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from './logger';

/**
 * What is known about the current request for code that runs inside it (set by the first middleware). The
 * request's logger (the root logger bound to the request id) is made on first use: most requests log
 * nothing but their access line.
 */
export class RequestContext {
  private logger: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly root: Logger,
  ) {}

  get log(): Logger {
    this.logger ??= this.root.child({ requestId: this.requestId });
    return this.logger;
  }
}

export const requestContext = new AsyncLocalStorage<RequestContext>();
