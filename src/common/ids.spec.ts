import { isUuid, uuidv7 } from './ids';

describe('uuidv7', () => {
  it('is a version 7, RFC 9562 variant UUID carrying the time in its first 48 bits', () => {
    const at = Date.UTC(2026, 10, 23, 12, 0, 0, 123);
    const id = uuidv7(at);
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect(['8', '9', 'a', 'b']).toContain(id[19]);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  });

  it('sorts by creation time and does not repeat', () => {
    const ids = [uuidv7(1_000), uuidv7(2_000), uuidv7(3_000)];
    expect([...ids].sort()).toEqual(ids);
    expect(
      new Set(Array.from({ length: 1000 }, () => uuidv7(5_000))).size,
    ).toBe(1000);
  });
});
