import { ruleOfKey } from './throttling';

describe('ruleOfKey', () => {
  it('answers the rule of a throttler key, never its subject', () => {
    expect(ruleOfKey('login-email:alice@example.com')).toBe('login-email');
    expect(ruleOfKey('run-user:0190a4b2-1111-7000-8000-000000000000')).toBe(
      'run-user',
    );
    expect(ruleOfKey('login-ip:2001:db8::/64')).toBe('login-ip');
  });

  it('answers unknown for a key that is not one of ours', () => {
    expect(ruleOfKey('alice@example.com')).toBe('unknown');
    expect(ruleOfKey('someone-else:x')).toBe('unknown');
    expect(ruleOfKey('')).toBe('unknown');
  });
});
