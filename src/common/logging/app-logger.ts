import { LoggerService } from '@nestjs/common';
import { Logger } from './logger';
import { requestContext } from './request-context';

/**
 * The logger features inject. Inside a request every line carries that request's id (reqId);
 * outside one (boot, sweepers) it logs through the root logger.
 */
export class AppLogger {
  constructor(private readonly root: Logger) {}

  private get current(): Logger {
    return requestContext.getStore()?.log ?? this.root;
  }

  debug(fields: Record<string, unknown>, message: string): void {
    this.current.debug(fields, message);
  }

  info(fields: Record<string, unknown>, message: string): void {
    this.current.info(fields, message);
  }

  warn(fields: Record<string, unknown>, message: string): void {
    this.current.warn(fields, message);
  }

  error(fields: Record<string, unknown>, message: string): void {
    this.current.error(fields, message);
  }
}

/** Adapts pino to Nest's LoggerService so the framework's own messages are structured JSON too. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  log(message: unknown, context?: string): void {
    this.write('info', message, context);
  }

  error(message: unknown, _trace?: string, context?: string): void {
    // The trace argument is deliberately dropped: stack traces do not go to the logs.
    this.write('error', message, context);
  }

  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }

  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }

  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }

  fatal(message: unknown, context?: string): void {
    this.write('fatal', message, context);
  }

  private write(
    level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal',
    message: unknown,
    context?: string,
  ): void {
    const log = requestContext.getStore()?.log ?? this.root;
    if (message instanceof Error)
      log[level]({ context, err: message }, message.message);
    else
      log[level](
        { context },
        typeof message === 'string' ? message : JSON.stringify(message),
      );
  }
}
