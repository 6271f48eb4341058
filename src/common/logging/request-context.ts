import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from './logger';

/** What is known about the current request for code that runs inside it (set by the first middleware). */
export interface RequestContext {
  requestId: string;
  log: Logger;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();
