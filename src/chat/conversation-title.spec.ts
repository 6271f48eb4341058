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
});
