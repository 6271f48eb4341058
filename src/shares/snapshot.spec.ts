import { HIDDEN_ID, readSnapshot, withoutIds } from './snapshot';

describe('withoutIds', () => {
  it('hides every UUID in a tool call’s arguments, however deep, and keeps the rest', () => {
    const id = '01a21bce-cff6-7a34-a233-8ecf220bf1bf';
    expect(
      withoutIds({
        query: 'picnic',
        fileIds: [id, id.toUpperCase()],
        nested: { ref: `page ${id} here`, count: 3 },
      }),
    ).toEqual({
      query: 'picnic',
      fileIds: [HIDDEN_ID, HIDDEN_ID],
      nested: { ref: `page ${HIDDEN_ID} here`, count: 3 },
    });
  });
});

describe('readSnapshot', () => {
  it('keeps only messages of the shape written, and only their known fields', () => {
    expect(
      readSnapshot({
        messages: [
          {
            role: 'assistant',
            content: 'Hi',
            model: 'local/echo',
            toolCalls: [
              {
                tool: 'files.search',
                arguments: { q: 1 },
                status: 'ok',
                content: 'secret',
              },
              { tool: 'x', status: 'exploded' },
            ],
            files: [
              { name: 'a.txt', kind: 'text', id: 'f' },
              { name: 'b', kind: 'exe' },
            ],
            createdAt: '2026-11-27T00:00:00.000Z',
            userId: 'someone',
          },
          { role: 'robot', content: 'x', createdAt: 'y' },
          'junk',
        ],
      }),
    ).toEqual({
      messages: [
        {
          role: 'assistant',
          content: 'Hi',
          model: 'local/echo',
          toolCalls: [
            { tool: 'files.search', arguments: { q: 1 }, status: 'ok' },
          ],
          files: [{ name: 'a.txt', kind: 'text' }],
          createdAt: '2026-11-27T00:00:00.000Z',
        },
      ],
    });
    expect(readSnapshot(null)).toEqual({ messages: [] });
  });
});
