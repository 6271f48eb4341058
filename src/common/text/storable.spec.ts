import { storableJson, storableText } from './storable';

describe('storable text', () => {
  it('drops NUL and replaces lone surrogates, keeping pairs', () => {
    expect(storableText('a\u0000b')).toBe('ab');
    expect(storableText('x\uD800y')).toBe('x\uFFFDy');
    expect(storableText('😀')).toBe('😀');
  });

  it('cleans every string of a JSON value, keys included', () => {
    expect(
      storableJson({ 'k\u0000': ['\uDC00', 1, null, { n: 'ok' }] }),
    ).toEqual({ k: ['\uFFFD', 1, null, { n: 'ok' }] });
  });
});
