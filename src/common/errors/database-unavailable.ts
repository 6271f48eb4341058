/**
 * Whether an error means the database cannot be used right now (unreachable, refusing connections, no free
 * connection in the pool, a transaction that could not start or finish in time) rather than a bug. Such
 * errors are 503 with Retry-After: the client's request was fine and a retry may succeed. Recognised by
 * shape (Prisma's error name, code and driver cause, pg-pool's message) so this module knows nothing of
 * Prisma itself.
 */
/**
 * P1xxx: connection-level; P2024: pool timeout; P2034: write conflict or deadlock (retrying succeeds);
 * P2037: too many connections. (P2028, a transaction that outlived its own timeout, is a bug: not here.)
 */
const UNAVAILABLE_PRISMA_CODES = /^(P1\d{3}|P2024|P2034|P2037)$/;
/**
 * SQLSTATE 08xxx (connection, but not 08P01, a protocol violation our code causes), 53xxx (insufficient
 * resources), 57P01-57P03 (shutdown, cannot connect now), 3D000 (no database), 40001/40P01 (serialization
 * failure, deadlock).
 */
const UNAVAILABLE_SQLSTATES = /^(08(?!P01)|53|57P0[1-3]|3D000|40001|40P01)/;
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|not currently accepting connections|Unable to start a transaction/i;

/** Socket-level failures reaching the database (node-postgres passes Node's own errors on). */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'PrismaClientInitializationError') return true;
  if (UNAVAILABLE_MESSAGES.test(error.message)) return true;
  const { code, severity, syscall } = error as {
    code?: unknown;
    severity?: unknown;
    syscall?: unknown;
  };
  // node-postgres directly (the chat's prepared statements): a server error carries its SQLSTATE and severity.
  if (typeof code === 'string' && typeof severity === 'string')
    return UNAVAILABLE_SQLSTATES.test(code);
  if (typeof code === 'string' && typeof syscall === 'string')
    return UNAVAILABLE_SOCKET_CODES.has(code);
  if (error.name !== 'PrismaClientKnownRequestError') return false;
  const { meta } = error as {
    meta?: {
      driverAdapterError?: {
        cause?: { originalCode?: unknown; originalMessage?: unknown };
      };
    };
  };
  if (typeof code === 'string' && UNAVAILABLE_PRISMA_CODES.test(code))
    return true;
  const cause = meta?.driverAdapterError?.cause;
  if (
    typeof cause?.originalCode === 'string' &&
    UNAVAILABLE_SQLSTATES.test(cause.originalCode)
  )
    return true;
  return (
    typeof cause?.originalMessage === 'string' &&
    UNAVAILABLE_MESSAGES.test(cause.originalMessage)
  );
}
