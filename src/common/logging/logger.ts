import { Writable } from 'node:stream';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { DestinationStream, Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger } from 'pino';

/**
 * Keys whose values never reach a log line, wherever they appear. Request and response headers and
 * bodies are not serialized at all (see http-logger.ts); this is the second line of defence.
 */
const REDACTED_PATHS = [
  'password',
  'newPassword',
  'currentPassword',
  'recoveryCode',
  'recoveryCodes',
  'otpauthUri',
  'totpSecret',
  'token',
  'cookie',
  'authorization',
  'secret',
  'apiKey',
  '*.password',
  '*.newPassword',
  '*.currentPassword',
  '*.recoveryCode',
  '*.recoveryCodes',
  '*.otpauthUri',
  '*.totpSecret',
  '*.token',
  '*.cookie',
  '*.authorization',
  '*.secret',
  '*.apiKey',
  '*.headers.cookie',
  '*.headers.authorization',
  '*.headers["set-cookie"]',
];

/** Lines are written once this many bytes are pending (about 20 access lines)... */
const LOG_BUFFER_BYTES = 4096;
/** ...or this often, whatever is pending: a line reaches stdout at most this late. */
const LOG_FLUSH_MS = 100;

/**
 * JSON lines to stdout, buffered: written when 4 KiB are pending or every 100 ms, so a busy instance makes
 * one write syscall per ~20 access lines instead of one per line (a tenth of the CPU of a cheap request,
 * bench f), and an idle one shows each line within 100 ms. Asynchronous (no write on the request's path);
 * what is pending is written synchronously when the process exits (pino's exit hook), so a fatal line
 * before `process.exit` is not lost. docs/adr/0067-request-overhead.md
 */
export function jsonLinesToStdout(): DestinationStream {
  return pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_BUFFER_BYTES,
    periodicFlush: LOG_FLUSH_MS,
  });
}

/** The root logger, by default JSON lines to stdout (jsonLinesToStdout). */
export function createRootLogger(
  level: string,
  destination: DestinationStream = jsonLinesToStdout(),
  options: { traceIds?: boolean } = {},
): Logger {
  return pino(
    {
      level,
      base: { service: 'chat-api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
      formatters: { level: (label: string) => ({ level: label }) },
      // Only with tracing on: a line costs one context lookup more.
      ...(options.traceIds ? { mixin: traceIdsOfActiveSpan } : {}),
    },
    destination,
  );
}

/** The trace and span the line was written in (OpenTelemetry's active context), for finding its trace from a log line. */
export function traceIdsOfActiveSpan(): { traceId?: string; spanId?: string } {
  const context = trace.getActiveSpan()?.spanContext();
  if (!context || !isSpanContextValid(context)) return {};
  return { traceId: context.traceId, spanId: context.spanId };
}

/**
 * Where the service's lines go: human-readable (pino-pretty, colours, one line per entry) for a person at a
 * terminal in development, JSON lines for everything that reads logs (collectors, files, pipes, production).
 */
export function logDestination(
  format: 'auto' | 'json' | 'pretty',
  env: string,
  stdout: {
    isTTY?: boolean;
    write: (chunk: string) => unknown;
  } = process.stdout,
): DestinationStream {
  const terminal = stdout.isTTY === true;
  const wantsPretty =
    format === 'pretty' ||
    (format === 'auto' && env !== 'production' && terminal);
  if (!wantsPretty) return jsonLinesToStdout();
  return pretty({
    colorize: terminal,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    singleLine: true,
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        stdout.write(chunk.toString('utf8'));
        done();
      },
    }),
    sync: true,
  });
}

/**
 * Errors are logged by class, code and first message line only: no stack traces (they can carry query
 * text and values); the requestId on the line ties it to the response the client saw.
 */
export function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error))
    return { type: typeof error, message: String(error).slice(0, 500) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.constructor?.name ?? error.name,
    message: firstLine(error.message),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
  };
}

/** A library's Error may carry no message at all (passport-oauth2's TokenError without a description). */
function firstLine(message: unknown): string {
  if (typeof message !== 'string') return '';
  return (message.split('\n').find((line) => line.trim().length > 0) ?? '')
    .trim()
    .slice(0, 500);
}
