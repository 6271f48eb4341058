import {
  hashRecoveryCode,
  newRecoveryCodes,
  normalizeRecoveryCode,
} from './recovery-codes';

describe('recovery codes', () => {
  it('makes ten distinct codes of ten unambiguous symbols', () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes)
      expect(code).toMatch(/^[a-km-np-z2-9]{5}-[a-km-np-z2-9]{5}$/);
  });

  it('hashes per account, ignoring case, spaces and dashes', () => {
    expect(normalizeRecoveryCode(' K7M2P-x9q4r ')).toBe('k7m2px9q4r');
    const hash = hashRecoveryCode('pepper', 'user-1', 'k7m2p-x9q4r');
    expect(hashRecoveryCode('pepper', 'user-1', 'K7M2P X9Q4R')).toBe(hash);
    expect(hashRecoveryCode('pepper', 'user-2', 'k7m2p-x9q4r')).not.toBe(hash);
    expect(hashRecoveryCode('other', 'user-1', 'k7m2p-x9q4r')).not.toBe(hash);
  });
});
