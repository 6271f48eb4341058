import { isDatabaseUnavailable } from './database-unavailable';

function prismaError(code: string): Error {
  return Object.assign(new Error('failed'), {
    name: 'PrismaClientKnownRequestError',
    code,
  });
}

describe('isDatabaseUnavailable', () => {
  it('recognises an unreachable database, a full pool and a transaction that could not run', () => {
    expect(isDatabaseUnavailable(prismaError('P1001'))).toBe(true);
    expect(isDatabaseUnavailable(prismaError('P2024'))).toBe(true);
    expect(isDatabaseUnavailable(prismaError('P2034'))).toBe(true);
    expect(
      isDatabaseUnavailable(
        Object.assign(new Error('x'), {
          name: 'PrismaClientInitializationError',
        }),
      ),
    ).toBe(true);
    expect(
      isDatabaseUnavailable(
        new Error('timeout exceeded when trying to connect'),
      ),
    ).toBe(true);
    const refusing = Object.assign(prismaError('P2039'), {
      meta: {
        driverAdapterError: {
          cause: {
            originalCode: '55000',
            originalMessage:
              'database "x" is not currently accepting connections',
          },
        },
      },
    });
    expect(isDatabaseUnavailable(refusing)).toBe(true);
    const shutdown = Object.assign(prismaError('P2039'), {
      meta: { driverAdapterError: { cause: { originalCode: '57P01' } } },
    });
    expect(isDatabaseUnavailable(shutdown)).toBe(true);
  });

  it('leaves bugs and constraint violations alone', () => {
    expect(isDatabaseUnavailable(prismaError('P2002'))).toBe(false);
    expect(isDatabaseUnavailable(prismaError('P2028'))).toBe(false);
    expect(
      isDatabaseUnavailable(
        Object.assign(prismaError('P2039'), {
          meta: { driverAdapterError: { cause: { originalCode: '08P01' } } },
        }),
      ),
    ).toBe(false);
    expect(
      isDatabaseUnavailable(
        Object.assign(prismaError('P2039'), {
          meta: { driverAdapterError: { cause: { originalCode: '23505' } } },
        }),
      ),
    ).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnavailable('P1001')).toBe(false);
  });

  it('recognises node-postgres errors by SQLSTATE and socket code', () => {
    const pgError = (code: string) =>
      Object.assign(new Error('x'), { code, severity: 'FATAL' });
    expect(isDatabaseUnavailable(pgError('57P01'))).toBe(true);
    expect(isDatabaseUnavailable(pgError('53300'))).toBe(true);
    expect(isDatabaseUnavailable(pgError('40P01'))).toBe(true);
    expect(
      isDatabaseUnavailable(
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
          code: 'ECONNREFUSED',
          syscall: 'connect',
        }),
      ),
    ).toBe(true);
    expect(isDatabaseUnavailable(pgError('23505'))).toBe(false);
    expect(isDatabaseUnavailable(pgError('42P01'))).toBe(false);
    expect(
      isDatabaseUnavailable(
        Object.assign(new Error('x'), { code: 'EACCES', syscall: 'open' }),
      ),
    ).toBe(false);
  });
});
