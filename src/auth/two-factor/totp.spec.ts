import { base32 } from './base32';
import { newTotpSecret, totpUri, verifyTotp } from './totp';

/** RFC 6238 appendix B: the SHA-1 seed "12345678901234567890" (ASCII); its 8-digit codes end in these 6. */
const RFC_SECRET = base32.encode(Buffer.from('12345678901234567890', 'ascii'));

describe('TOTP', () => {
  it('accepts the RFC 6238 test vectors and answers their time step', async () => {
    expect(RFC_SECRET).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
    await expect(verifyTotp(RFC_SECRET, '287082', null, 59_000)).resolves.toBe(
      1,
    );
    await expect(
      verifyTotp(RFC_SECRET, '081804', null, 1_111_111_109_000),
    ).resolves.toBe(37_037_036);
    await expect(
      verifyTotp(RFC_SECRET, '005924', null, 1_234_567_890_000),
    ).resolves.toBe(41_152_263);
  });

  it('accepts the neighbouring steps only, and never a step at or before the last accepted one', async () => {
    const at = 1_234_567_890_000;
    await expect(
      verifyTotp(RFC_SECRET, '005924', null, at + 30_000),
    ).resolves.toBe(41_152_263);
    await expect(
      verifyTotp(RFC_SECRET, '005924', null, at + 90_000),
    ).resolves.toBeNull();
    await expect(
      verifyTotp(RFC_SECRET, '005924', 41_152_263, at),
    ).resolves.toBeNull();
    await expect(
      verifyTotp(RFC_SECRET, '005924', 41_152_262, at),
    ).resolves.toBe(41_152_263);
  });

  it('refuses what is not six digits', async () => {
    await expect(
      verifyTotp(RFC_SECRET, '28708', null, 59_000),
    ).resolves.toBeNull();
    await expect(
      verifyTotp(RFC_SECRET, 'abcdef', null, 59_000),
    ).resolves.toBeNull();
    await expect(
      verifyTotp(RFC_SECRET, ' 287 082 ', null, 59_000),
    ).resolves.toBe(1);
  });

  it('makes 160-bit base32 secrets and otpauth URIs that carry them', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(secret);
    const uri = new URL(totpUri('example.com', 'ada@example.com', secret));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.searchParams.get('secret')).toBe(secret);
    expect(uri.searchParams.get('issuer')).toBe('example.com');
  });

  it('decodes what it encodes, ignoring case, spaces and padding', () => {
    const bytes = Buffer.from('any carnal pleas', 'ascii');
    const encoded = base32.encode(bytes);
    expect(Buffer.from(base32.decode(encoded.toLowerCase() + '===='))).toEqual(
      bytes,
    );
    expect(() => base32.decode('ABC1')).toThrow();
  });
});
