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
      '::ffff:7f00:1',
      '::127.0.0.1',
      '::7f00:1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::10.0.0.1',
      '64:ff9b:1::1',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::',
      'fec0::1',
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
      '64:ff9b::808:808',
      '2002:808:808::1',
    ])
      expect([address, isPrivateAddress(address)]).toEqual([address, false]);
  });
});
