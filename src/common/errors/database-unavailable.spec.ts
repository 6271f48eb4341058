import { isDatabaseUnavailable } from './database-unavailable';

function prismaError(code: string): Error {
  return Object.assign(new Error('failed'), { name: 'PrismaClientKnownRequestError', code });
}

describe('isDatabaseUnavailable', () => {
  it('recognises an unreachable database, a full pool and a transaction that could not run', () => {
    expect(isDatabaseUnavailable(prismaError('P1001'))).toBe(true);
    expect(isDatabaseUnavailable(prismaError('P2024'))).toBe(true);
    expect(isDatabaseUnavailable(prismaError('P2034'))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('x'), { name: 'PrismaClientInitializationError' }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    const refusing = Object.assign(prismaError('P2039'), {
      meta: { driverAdapterError: { cause: { originalCode: '55000', originalMessage: 'database "x" is not currently accepting connections' } } },
    });
    expect(isDatabaseUnavailable(refusing)).toBe(true);
    const shutdown = Object.assign(prismaError('P2039'), { meta: { driverAdapterError: { cause: { originalCode: '57P01' } } } });
    expect(isDatabaseUnavailable(shutdown)).toBe(true);
  });

  it('leaves bugs and constraint violations alone', () => {
    expect(isDatabaseUnavailable(prismaError('P2002'))).toBe(false);
    expect(isDatabaseUnavailable(prismaError('P2028'))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(prismaError('P2039'), { meta: { driverAdapterError: { cause: { originalCode: '08P01' } } } }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(prismaError('P2039'), { meta: { driverAdapterError: { cause: { originalCode: '23505' } } } }))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnavailable('P1001')).toBe(false);
  });
});
