import bcrypt from 'bcrypt';
import { loadConfig } from '../config/load-config';
import { BCRYPT_COST, PasswordHasher } from './password-hasher';

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher(
    loadConfig({ PASSWORD_PEPPER: 'pepper-for-unit-tests-0123456789abcdef' }),
  );

  it('stores bcrypt with cost >= 12 and verifies the right password only', async () => {
    const hash = await hasher.hash('correct horse battery staple');
    expect(bcrypt.getRounds(hash)).toBe(BCRYPT_COST);
    expect(BCRYPT_COST).toBeGreaterThanOrEqual(12);
    await expect(
      hasher.verify('correct horse battery staple', hash),
    ).resolves.toBe(true);
    await expect(
      hasher.verify('correct horse battery stapler', hash),
    ).resolves.toBe(false);
  });

  it('tells apart passwords that share their first 72 bytes', async () => {
    const prefix = 'x'.repeat(72);
    const hash = await hasher.hash(`${prefix}-one`);
    await expect(hasher.verify(`${prefix}-two`, hash)).resolves.toBe(false);
    await expect(hasher.verify(`${prefix}-one`, hash)).resolves.toBe(true);
  });

  it('depends on the pepper: the same password under another pepper does not verify', async () => {
    const other = new PasswordHasher(
      loadConfig({ PASSWORD_PEPPER: 'another-pepper-0123456789abcdefghijk' }),
    );
    const hash = await hasher.hash('correct horse battery staple');
    await expect(
      other.verify('correct horse battery staple', hash),
    ).resolves.toBe(false);
  });

  it('still spends a bcrypt comparison when there is no hash (unknown account)', async () => {
    const compare = jest.spyOn(bcrypt, 'compare');
    await expect(hasher.verify('whatever password', null)).resolves.toBe(false);
    expect(compare).toHaveBeenCalledTimes(1);
    compare.mockRestore();
  });
});
