import { type Network, networkContains, parseAddress, parseCidr, unmapIpv4 } from './cidr.ts';

/** Ranges a webhook may not target: private, loopback, link-local (incl. cloud metadata), and other non-public space. */
const REFUSED_RANGES: [string, string][] = [
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fc00::/7', 'private'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
];

const refused = REFUSED_RANGES.map(([cidr, kind]) => ({ network: parseCidr(cidr) as Network, kind }));

/** Parses `WEBHOOK_ALLOWED_NETS` (comma-separated CIDRs); throws naming a malformed entry. */
export function parseAllowedNets(list: string): Network[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((cidr) => {
      const network = parseCidr(cidr);
      if (!network) throw new Error(`WEBHOOK_ALLOWED_NETS: "${cidr}" is not a CIDR`);
      return network;
    });
}

/**
 * Why an address may not be a webhook target (e.g. "loopback"), or undefined when it may.
 * IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
 */
export function refusalReason(ip: string, allowed: Network[]): string | undefined {
  const parsed = parseAddress(ip);
  if (!parsed) return 'not an IP address';
  const candidates = [parsed, unmapIpv4(parsed)].filter((n): n is Network => n !== undefined);
  if (candidates.some((a) => allowed.some((net) => networkContains(net, a)))) return undefined;
  for (const address of candidates) {
    const hit = refused.find((r) => networkContains(r.network, address));
    if (hit) return hit.kind;
  }
  return undefined;
}
