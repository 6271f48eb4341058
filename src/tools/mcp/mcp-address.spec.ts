import { isPrivateAddress } from './mcp-address';

describe('isPrivateAddress', () => {
  it('refuses private, loopback, link-local, metadata and reserved addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      'not-an-address',
    ])
      expect([address, isPrivateAddress(address)]).toEqual([address, true]);
  });

  it('allows public addresses', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
    ])
      expect([address, isPrivateAddress(address)]).toEqual([address, false]);
  });
});
