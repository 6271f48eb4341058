import { titleFrom } from './conversation-title';

describe('titleFrom', () => {
  it('takes the first user message on one line', () => {
    expect(
      titleFrom([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: '  What is\n\nNestJS?  ' },
      ]),
    ).toBe('What is NestJS?');
  });

  it('cuts long titles at 80 characters, counting code points', () => {
    const title = titleFrom([{ role: 'user', content: '😀'.repeat(100) }]);
    expect([...title]).toHaveLength(80);
    expect(title.endsWith('…')).toBe(true);
  });

  it('falls back to the first message, then to a fixed title', () => {
    expect(titleFrom([{ role: 'system', content: 'only system' }])).toBe(
      'only system',
    );
    expect(titleFrom([{ role: 'user', content: '   ' }])).toBe(
      'New conversation',
    );
  });

  it('reads Markdown as text: no heading marks, emphasis, code ticks or link addresses', () => {
    expect(
      titleFrom([
        {
          role: 'user',
          content:
            '# Plan **first** and _then_ `code`\n- see [the docs](https://example.com)',
        },
      ]),
    ).toBe('Plan first and then code see the docs');
    expect(
      titleFrom([{ role: 'user', content: 'Is 2 * 3 = 6? snake_case_name' }]),
    ).toBe('Is 2 * 3 = 6? snake_case_name');
  });
});
