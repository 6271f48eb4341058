import { SecretCipher } from './secret-cipher';

describe('SecretCipher', () => {
  const cipher = new SecretCipher('k'.repeat(40), 'totp-secret');

  it('round-trips, with a fresh IV each time', () => {
    const stored = cipher.encrypt('JBSWY3DPEHPK3PXP');
    expect(stored).toMatch(/^v1\./);
    expect(stored).not.toContain('JBSWY3DPEHPK3PXP');
    expect(cipher.encrypt('JBSWY3DPEHPK3PXP')).not.toBe(stored);
    expect(cipher.decrypt(stored)).toBe('JBSWY3DPEHPK3PXP');
  });

  it('refuses a value that was altered, or encrypted under another key or purpose', () => {
    const stored = cipher.encrypt('JBSWY3DPEHPK3PXP');
    const [version, iv, tag, body] = stored.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 1;
    expect(() =>
      cipher.decrypt(
        [version, iv, tag, flipped.toString('base64url')].join('.'),
      ),
    ).toThrow();
    expect(() =>
      new SecretCipher('j'.repeat(40), 'totp-secret').decrypt(stored),
    ).toThrow();
    expect(() =>
      new SecretCipher('k'.repeat(40), 'other').decrypt(stored),
    ).toThrow();
    expect(() => cipher.decrypt('plain')).toThrow();
  });
});
