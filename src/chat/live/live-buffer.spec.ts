import { AnswerSink, LiveBuffer } from './live-buffer';
import { RunOutcome } from './live-event';

function recorder(): AnswerSink & { seen: (string | RunOutcome)[] } {
  const seen: (string | RunOutcome)[] = [];
  return {
    seen,
    text: (chunk) => seen.push(chunk),
    end: (outcome) => seen.push(outcome),
  };
}

describe('LiveBuffer', () => {
  it('gives a late subscriber everything from the first chunk, then the rest as it comes', () => {
    const buffer = new LiveBuffer();
    buffer.append('a');
    buffer.append('b');
    const early = recorder();
    buffer.subscribe(early);
    buffer.append('c');
    const late = recorder();
    buffer.subscribe(late);
    buffer.end({ status: 'completed' });
    expect(early.seen).toEqual(['ab', 'c', { status: 'completed' }]);
    expect(late.seen).toEqual(['abc', { status: 'completed' }]);
    const afterEnd = recorder();
    buffer.subscribe(afterEnd);
    expect(afterEnd.seen).toEqual(['abc', { status: 'completed' }]);
    expect(buffer.textSoFar()).toBe('abc');
  });

  it('stops delivering to a subscriber that left, and survives a subscriber that throws', () => {
    const buffer = new LiveBuffer();
    const leaving = recorder();
    const stop = buffer.subscribe(leaving);
    buffer.subscribe({
      text: () => {
        throw new Error('socket closed');
      },
      end: () => undefined,
    });
    const staying = recorder();
    buffer.subscribe(staying);
    buffer.append('x');
    stop();
    buffer.append('y');
    buffer.end({ status: 'failed', errorCode: 'provider_error' });
    expect(leaving.seen).toEqual(['x']);
    expect(staying.seen).toEqual([
      'x',
      'y',
      { status: 'failed', errorCode: 'provider_error' },
    ]);
  });

  it('ignores text and ends after the first end', () => {
    const buffer = new LiveBuffer();
    const sink = recorder();
    buffer.subscribe(sink);
    buffer.end({ status: 'completed' });
    buffer.append('late');
    buffer.end({ status: 'failed', errorCode: 'provider_error' });
    expect(sink.seen).toEqual([{ status: 'completed' }]);
    expect(buffer.ended).toEqual({ status: 'completed' });
  });
});
