import { isIPv6 } from 'node:net';

/**
 * The address a per-IP limit counts by. An IPv6 client usually holds a whole /64 and could rotate
 * through it, so IPv6 counts per /64; IPv4-mapped IPv6 (::ffff:1.2.3.4) counts as the IPv4 address.
 */
export function rateLimitAddress(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, without leading zeros ('::' expanded). */
function expandIPv6(ip: string): string[] {
  const withoutZone = ip.split('%')[0];
  const [head, tail] = withoutZone.includes('::')
    ? withoutZone.split('::')
    : [withoutZone, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing =
    tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  return [
    ...headGroups,
    ...Array<string>(Math.max(missing, 0)).fill('0'),
    ...tailGroups,
  ].map((group) =>
    group.includes('.') ? group : parseInt(group, 16).toString(16),
  );
}
