import { utf8LocaleFlags } from './embedded-postgres';

describe('utf8LocaleFlags', () => {
  it('asks for a UTF-8 locale when the environment names none, or no UTF-8 one', () => {
    expect(utf8LocaleFlags({})).toEqual([
      '--encoding=UTF8',
      '--locale=C.UTF-8',
    ]);
    expect(utf8LocaleFlags({ LANG: 'C' })).toContain('--locale=C.UTF-8');
  });

  it("keeps the environment's UTF-8 locale", () => {
    expect(utf8LocaleFlags({ LANG: 'de_DE.UTF-8' })).toEqual([
      '--encoding=UTF8',
    ]);
    expect(utf8LocaleFlags({ LC_ALL: 'C.utf8', LANG: 'C' })).toEqual([
      '--encoding=UTF8',
    ]);
  });
});
