import { BlockList, isIP } from 'node:net';

/**
 * Addresses an MCP server may not be on unless an operator allows its host (MCP_ALLOWED_HOSTS): private,
 * loopback, link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 included), shared, multicast
 * and reserved ranges. docs/adr/0061-tools.md
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['64:ff9b:1::', 48],
  ['2001:db8::', 32],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6');

/** True for an address an MCP server may not be on (and for anything that is not an IP address). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (BLOCKED.check(address, 'ipv6')) return true;
  // An IPv4 address inside an IPv6 one reaches that IPv4 address: judge it as one.
  const embedded = embeddedIpv4(address);
  return embedded !== null && BLOCKED.check(embedded, 'ipv4');
}

/**
 * The IPv4 address an IPv6 address carries, if any: IPv4-mapped (`::ffff:a.b.c.d` in any notation),
 * IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002:AABB:CCDD::/48`).
 */
function embeddedIpv4(address: string): string | null {
  const words = ipv6Words(address);
  if (!words) return null;
  const zero = (from: number, to: number) =>
    words.slice(from, to).every((word) => word === 0);
  const v4 = (high: number, low: number) =>
    `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (zero(0, 5) && (words[5] === 0xffff || words[5] === 0))
    return v4(words[6], words[7]);
  if (words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6))
    return v4(words[6], words[7]);
  if (words[0] === 0x2002) return v4(words[1], words[2]);
  return null;
}

/** The eight 16-bit words of an IPv6 address (dotted IPv4 tail and zone allowed), or null. */
function ipv6Words(address: string): number[] | null {
  let text = address.split('%')[0].toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((word) => parseInt(word, 16)) : [];
  const first = parse(head);
  const last = parse(tail);
  const words =
    tail === undefined
      ? first
      : [
          ...first,
          ...Array<number>(8 - first.length - last.length).fill(0),
          ...last,
        ];
  return words.length === 8 &&
    words.every((word) => word >= 0 && word <= 0xffff)
    ? words
    : null;
}
