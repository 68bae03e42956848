import { isIP } from 'node:net';

/** An IP network: address as a 32- or 128-bit integer, its family and prefix length. */
export interface Network {
  family: 4 | 6;
  base: bigint;
  prefix: number;
}

function parseIpv4(address: string): bigint {
  return address.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function parseIpv6(address: string): bigint {
  let text = address.split('%')[0] as string;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const v4 = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    const n = parseIpv4(v4[1] as string);
    text = `${text.slice(0, -(v4[1] as string).length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array(missing).fill('0'), ...tailGroups];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
}

/** Parses an IPv4 or IPv6 address into a host network (/32 or /128); undefined when it is not an IP. */
export function parseAddress(address: string): Network | undefined {
  const family = isIP(address.split('%')[0] as string);
  if (family === 4) return { family: 4, base: parseIpv4(address), prefix: 32 };
  if (family === 6) return { family: 6, base: parseIpv6(address), prefix: 128 };
  return undefined;
}

/** Parses `addr/prefix` (or a bare address); undefined when malformed. */
export function parseCidr(cidr: string): Network | undefined {
  const [address = '', prefixText] = cidr.trim().split('/');
  const host = parseAddress(address);
  if (!host) return undefined;
  if (prefixText === undefined) return host;
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > host.prefix) return undefined;
  return { family: host.family, base: host.base, prefix };
}

/** Whether `address` lies inside `network` (same family only). */
export function networkContains(network: Network, address: Network): boolean {
  if (network.family !== address.family) return false;
  const bits = BigInt(network.family === 4 ? 32 : 128);
  const shift = bits - BigInt(network.prefix);
  return network.base >> shift === address.base >> shift;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d), if it is one. */
export function unmapIpv4(address: Network): Network | undefined {
  if (address.family !== 6 || address.base >> 32n !== 0xffffn) return undefined;
  return { family: 4, base: address.base & 0xffffffffn, prefix: 32 };
}
