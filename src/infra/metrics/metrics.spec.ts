import { NO_METRICS, runOutcomeLabel } from './metrics';

describe('runOutcomeLabel', () => {
  it('labels a completed or stopped run by its status', () => {
    expect(runOutcomeLabel({ status: 'completed' })).toBe('completed');
    expect(runOutcomeLabel({ status: 'stopped' })).toBe('stopped');
  });

  it('labels a failed run by its failure code', () => {
    expect(
      runOutcomeLabel({ status: 'failed', errorCode: 'provider_error' }),
    ).toBe('provider_error');
    expect(
      runOutcomeLabel({ status: 'failed', errorCode: 'provider_timeout' }),
    ).toBe('provider_timeout');
    expect(
      runOutcomeLabel({
        status: 'failed',
        errorCode: 'generation_interrupted',
      }),
    ).toBe('generation_interrupted');
  });

  it('keeps the label set bounded: an unknown or missing failure code is just failed', () => {
    expect(
      runOutcomeLabel({ status: 'failed', errorCode: 'something new' }),
    ).toBe('failed');
    expect(runOutcomeLabel({ status: 'failed', errorCode: 'completed' })).toBe(
      'failed',
    );
    expect(runOutcomeLabel({ status: 'failed' })).toBe('failed');
  });
});

describe('NO_METRICS', () => {
  it('is off, and its first-token mark is one shared function (nothing made per run)', () => {
    expect(NO_METRICS.enabled).toBe(false);
    expect(NO_METRICS.firstTokenTimer('openai', 'openai/gpt-4o')).toBe(
      NO_METRICS.firstTokenTimer('anthropic', 'anthropic/claude'),
    );
    expect(() =>
      NO_METRICS.runFinished('m', {
        status: 'completed',
        usage: { inputTokens: 1, outputTokens: 2 },
      }),
    ).not.toThrow();
  });
});
