import { errorMessageOf, shortReason } from './upstream-error';

describe('shortReason', () => {
  it('keeps the first line, at most 300 characters', () => {
    expect(shortReason('first line\nsecond line')).toBe('first line');
    expect(shortReason('x'.repeat(1000))).toHaveLength(300);
  });

  it('replaces the API key, before cutting, so no part of it survives', () => {
    const key = 'sk-live-0123456789abcdef';
    expect(shortReason(`Incorrect API key provided: ${key}.`, key)).toBe(
      'Incorrect API key provided: [redacted].',
    );
    expect(shortReason(`${'y'.repeat(290)}${key}`, key)).not.toContain(
      'sk-live',
    );
  });
});

describe('errorMessageOf', () => {
  it('reads the error shapes of the supported servers', () => {
    expect(
      errorMessageOf({
        error: {
          message: 'Rate limit reached',
          type: 'requests',
          code: 'rate_limit_exceeded',
        },
      }),
    ).toBe('Rate limit reached');
    expect(
      errorMessageOf({
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
      }),
    ).toBe('Overloaded');
    expect(
      errorMessageOf({
        error: 'model "llama9" not found, try pulling it first',
      }),
    ).toBe('model "llama9" not found, try pulling it first');
    expect(
      errorMessageOf({
        object: 'error',
        message: 'The model `x` does not exist.',
        type: 'NotFoundError',
        code: 404,
      }),
    ).toBe('The model `x` does not exist.');
    expect(errorMessageOf({ detail: 'Not Found' })).toBe('Not Found');
    expect(errorMessageOf({ error: { type: 'server_error' } })).toBe(
      'server_error',
    );
    expect(errorMessageOf({ error: { code: 500 } })).toBe('500');
  });

  it('never quotes structured details (a validation error may echo the request)', () => {
    expect(
      errorMessageOf({
        detail: [
          {
            loc: ['body', 'messages'],
            msg: 'bad',
            input: { messages: [{ content: 'secret' }] },
          },
        ],
      }),
    ).toBeUndefined();
    expect(errorMessageOf('plain')).toBeUndefined();
    expect(errorMessageOf(null)).toBeUndefined();
  });
});
