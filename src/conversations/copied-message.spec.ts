import { readCopiedMessage } from './copied-message';

describe('readCopiedMessage', () => {
  it('reads the model and the tool calls of a forked message, results left empty', () => {
    expect(
      readCopiedMessage({
        model: 'local/echo',
        toolCalls: [
          {
            id: 'a',
            tool: 'files.search',
            arguments: { q: 'x' },
            status: 'ok',
          },
        ],
      }),
    ).toEqual({
      model: 'local/echo',
      toolCalls: [
        {
          id: 'a',
          tool: 'files.search',
          arguments: { q: 'x' },
          status: 'ok',
          content: '',
        },
      ],
    });
  });

  it('treats anything else as absent and drops calls it cannot read', () => {
    expect(readCopiedMessage(null)).toBeNull();
    expect(readCopiedMessage('text')).toBeNull();
    expect(
      readCopiedMessage({
        model: 3,
        toolCalls: [{ id: 'a', tool: 't', status: 'exploded' }, 'x'],
      }),
    ).toEqual({ model: null, toolCalls: [] });
  });
});
