import { createRootLogger, logDestination, serializeError } from './logger';

describe('serializeError', () => {
  it('keeps the class, the code and the first non-empty line of the message, never the stack', () => {
    const error = Object.assign(new TypeError('\n  first line\nsecond line'), {
      code: 'E_X',
    });
    expect(serializeError(error)).toEqual({
      type: 'TypeError',
      message: 'first line',
      code: 'E_X',
    });
  });

  it('logs an Error that carries no message (a library error built without a description)', () => {
    class TokenError extends Error {}
    const error = new TokenError();
    Object.defineProperty(error, 'message', { value: undefined });
    expect(serializeError(error)).toEqual({ type: 'TokenError', message: '' });
  });

  it('describes a thrown value that is not an Error', () => {
    expect(serializeError('boom')).toEqual({ type: 'string', message: 'boom' });
  });
});

describe('createRootLogger', () => {
  it('redacts secrets wherever they appear, the account-security fields included', () => {
    const lines: string[] = [];
    const logger = createRootLogger('info', {
      write: (line: string) => void lines.push(line),
    });
    logger.info(
      {
        currentPassword: 'a',
        body: {
          recoveryCode: 'b',
          recoveryCodes: ['c'],
          otpauthUri: 'otpauth://x',
          totpSecret: 'd',
          password: 'e',
          token: 'f',
        },
      },
      'x',
    );
    const logged = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(logged.currentPassword).toBe('[redacted]');
    expect(logged.body).toEqual({
      recoveryCode: '[redacted]',
      recoveryCodes: '[redacted]',
      otpauthUri: '[redacted]',
      totpSecret: '[redacted]',
      password: '[redacted]',
      token: '[redacted]',
    });
  });
});

describe('logDestination', () => {
  const terminal = () => {
    const written: string[] = [];
    return {
      isTTY: true,
      write: (chunk: string) => written.push(chunk),
      written,
    };
  };

  it('writes readable lines to a terminal in development, with the level, message and fields', () => {
    const out = terminal();
    const logger = createRootLogger(
      'info',
      logDestination('auto', 'development', out),
    );
    logger.info({ requestId: 'r-1' }, 'chat api listening');
    const text = out.written.join('');
    expect(text).toContain('INFO');
    expect(text).toContain('chat api listening');
    expect(text).toContain('r-1');
    expect(() => {
      JSON.parse(text);
    }).toThrow();
  });

  it('writes JSON lines when output is not a terminal, in production, or when asked', () => {
    const isJsonDestination = (destination: unknown) =>
      typeof (destination as { fd?: unknown }).fd === 'number';
    expect(
      isJsonDestination(
        logDestination('auto', 'development', {
          isTTY: false,
          write: () => true,
        }),
      ),
    ).toBe(true);
    expect(
      isJsonDestination(logDestination('auto', 'production', terminal())),
    ).toBe(true);
    expect(
      isJsonDestination(logDestination('json', 'development', terminal())),
    ).toBe(true);
    expect(
      isJsonDestination(
        logDestination('pretty', 'production', {
          isTTY: false,
          write: () => true,
        }),
      ),
    ).toBe(false);
  });
});
