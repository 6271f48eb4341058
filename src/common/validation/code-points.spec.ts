import { validateSync } from 'class-validator';
import { codePoints, MaxCodePoints } from './code-points';

class Sample {
  @MaxCodePoints(3, { message: 'too long' })
  text?: unknown;
}

function errorsFor(text: unknown): string[] {
  const sample = new Sample();
  sample.text = text;
  return validateSync(sample).flatMap((error) =>
    Object.values(error.constraints ?? {}),
  );
}

describe('MaxCodePoints', () => {
  it('counts as PostgreSQL does: an emoji pair one, a variation selector one', () => {
    expect(codePoints('😀')).toBe(1);
    expect(codePoints('a\uFE0F')).toBe(2);
    expect(errorsFor('😀😀😀')).toEqual([]);
    expect(errorsFor('a\uFE0Fb\uFE0F')).toEqual(['too long']);
  });

  it('leaves values that are not strings to the type checks', () => {
    expect(errorsFor(42)).toEqual([]);
  });
});
