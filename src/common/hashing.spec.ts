import { createHash } from 'node:crypto';
import { newSecretToken, sha256Hex } from './hashing';

describe('sha256Hex', () => {
  it('is the hex SHA-256 of the UTF-8 text (the digest the database keeps)', () => {
    expect(sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    const text = 'påsswörd ✓';
    expect(sha256Hex(text)).toBe(
      createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex'),
    );
  });

  it('matches the hash newSecretToken gives with its token', () => {
    const { token, hash } = newSecretToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(sha256Hex(token)).toBe(hash);
  });
});
