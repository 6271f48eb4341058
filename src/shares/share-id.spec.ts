import { isShareId, newShareId } from './share-id';

describe('share ids', () => {
  it('are 24 base64url characters, different every time', () => {
    const ids = new Set(Array.from({ length: 1000 }, newShareId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(isShareId(id)).toBe(true);
  });

  it('refuses anything of another shape', () => {
    for (const id of [
      '',
      'short',
      'a'.repeat(25),
      'a'.repeat(23) + '/',
      '../../etc/passwd',
    ])
      expect(isShareId(id)).toBe(false);
  });
});
