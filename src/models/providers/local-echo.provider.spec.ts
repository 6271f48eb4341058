import { GenerationEvent } from './model-provider';
import { LocalEchoProvider } from './local-echo.provider';

async function run(
  provider: LocalEchoProvider,
  content: string,
  maxOutputTokens = 100,
  signal?: AbortSignal,
): Promise<GenerationEvent[]> {
  const events: GenerationEvent[] = [];
  for await (const event of provider.stream({
    upstreamModel: 'echo',
    messages: [{ role: 'user', content }],
    maxOutputTokens,
    signal,
  }))
    events.push(event);
  return events;
}

describe('LocalEchoProvider', () => {
  const echo = new LocalEchoProvider(0);

  it('is deterministic: the same input gives the same stream and usage', async () => {
    expect(await run(echo, 'one two three')).toEqual(
      await run(echo, 'one two three'),
    );
  });

  it('answers the message exactly as written: line breaks, indentation and Markdown kept', async () => {
    const message =
      '# Plan\n\n- **first** item\n  - nested\n\n```js\nconst a =  1;\n```\n';
    const events = await run(echo, message);
    const text = events
      .flatMap((event) => (event.type === 'text' ? [event.text] : []))
      .join('');
    expect(text).toBe(`Echo: ${message}`);
    // One chunk (and one output token) per word, "Echo:" included, as before.
    expect(events.at(-1)).toEqual(
      expect.objectContaining({ type: 'usage', outputTokens: 14 }),
    );
  });

  it('never produces more output tokens than allowed', async () => {
    const events = await run(echo, 'a b c d e f g h', 3);
    expect(events.filter((event) => event.type === 'text')).toHaveLength(3);
    expect(events.at(-1)).toEqual({
      type: 'usage',
      inputTokens: 8,
      outputTokens: 3,
    });
  });

  it('stops producing text once aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const events = await run(echo, 'a b c', 100, controller.signal);
    expect(events.filter((event) => event.type === 'text')).toHaveLength(0);
  });
});
