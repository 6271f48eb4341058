import { rateLimitAddress } from './client-address';

describe('rateLimitAddress', () => {
  it('keeps IPv4 addresses', () => {
    expect(rateLimitAddress('203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts IPv4-mapped IPv6 as the IPv4 address', () => {
    expect(rateLimitAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts every address of one IPv6 /64 as one client', () => {
    const keys = [
      '2001:db8:1:2::1',
      '2001:db8:1:2::5',
      '2001:0db8:0001:0002:ffff:ffff:ffff:ffff',
      '2001:db8:1:2:0:0:0:9',
    ].map(rateLimitAddress);
    expect(new Set(keys)).toEqual(new Set(['2001:db8:1:2::/64']));
    expect(rateLimitAddress('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(rateLimitAddress('::1')).toBe('0:0:0:0::/64');
  });
});
