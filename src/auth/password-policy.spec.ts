import { passwordProblem } from './password-policy';

describe('passwordProblem', () => {
  it('accepts an uncommon password of 12 to 128 characters, whatever its composition', () => {
    for (const password of [
      'correct horse battery staple',
      'aaaaaaaaaaaZ',
      'ünïcödé pässwörd',
      '😀'.repeat(12),
      'x'.repeat(128),
      ' leading space ok',
    ]) {
      expect({ password, problem: passwordProblem(password) }).toEqual({
        password,
        problem: null,
      });
    }
  });

  it('refuses lengths outside 12-128 code points', () => {
    expect(passwordProblem('short')).toMatch(/12 to 128 characters/);
    expect(passwordProblem('x'.repeat(129))).toMatch(/12 to 128 characters/);
    expect(passwordProblem('😀'.repeat(11))).toMatch(/12 to 128 characters/);
  });

  it('refuses passwords made only of whitespace', () => {
    for (const password of [
      ' '.repeat(12),
      '\t'.repeat(12),
      ' \u00a0\u2003'.repeat(4),
      '\n'.repeat(20),
    ]) {
      expect(passwordProblem(password)).toBe(
        'password must not be only spaces',
      );
    }
  });

  it('refuses common breached passwords, in any letter case', () => {
    const mostCommon: unknown = expect.stringMatching(/most common passwords/);
    for (const password of [
      '1qaz2wsx3edc',
      '123qweasdzxc',
      'qwertyuiop123',
      'QwertyQwerty',
      'LEAVEMEALONE',
    ]) {
      expect({ password, problem: passwordProblem(password) }).toEqual({
        password,
        problem: mostCommon,
      });
    }
  });
});
