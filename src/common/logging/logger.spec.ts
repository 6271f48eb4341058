import { serializeError } from './logger';

describe('serializeError', () => {
  it('keeps the class, the code and the first non-empty line of the message, never the stack', () => {
    const error = Object.assign(new TypeError('\n  first line\nsecond line'), { code: 'E_X' });
    expect(serializeError(error)).toEqual({ type: 'TypeError', message: 'first line', code: 'E_X' });
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
