import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A network from `WEBHOOK_ALLOWED_NETS`: an address and a prefix length. */
export type Network = [Address, number];

/**
 * What each ipaddr.js range is, in words, for error messages. The decision itself does not depend
 * on this table: anything ipaddr.js does not call `unicast` is refused, including a range a later
 * version adds (it gets the fallback wording).
 */
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (where cloud metadata services live)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a shared address (carrier-grade NAT, 100.64.0.0/10)',
  private: 'a private address',
  uniqueLocal: 'a unique-local (private) address',
  deprecatedSiteLocal: 'a site-local address (deprecated)',
  discard: 'a discard-only address',
  reserved: 'a reserved address (IETF protocol assignment, documentation, benchmarking or future use)',
  benchmarking: 'a benchmarking address',
  as112: 'an AS112 DNS sink address',
  as112v6: 'an AS112 DNS sink address',
  amt: 'an AMT relay address',
  deprecatedOrchid: 'an ORCHID address (deprecated)',
  orchid2: 'an ORCHIDv2 address',
  droneRemoteIdProtocolEntityTags: 'a drone remote ID (DET) address',
  segmentRouting: 'an SRv6 segment identifier',
};

/**
 * IPv6 ranges whose addresses carry an IPv4 address: a packet to them reaches (or is translated
 * to) that IPv4 host, so they would smuggle any IPv4 target past a check that only looks at IPv6.
 * They are refused whatever IPv4 address they carry. Keys are ipaddr.js range names.
 */
const EMBEDDING_RANGES: Record<string, string> = {
  ipv4Mapped: 'IPv4-mapped, ::ffff:0:0/96',
  rfc6145: 'IPv4-translated, ::ffff:0:0:0/96',
  rfc6052: 'NAT64, 64:ff9b::/96 or 64:ff9b:1::/48',
  '6to4': '6to4, 2002::/16',
  teredo: 'Teredo, 2001::/32',
};

// Checked against ipaddr.js 2.5.0 and the IANA special-purpose registries (as of 2025): every IPv4
// entry is covered by `range()`, and so is every IPv6 entry but the two below. They are added here,
// and only these.
// - ::/96, IPv4-compatible addresses (RFC 4291 §2.5.5.1, deprecated): ipaddr.js only knows :: and
//   ::1 in it, and calls e.g. ::a9fe:a9fe (169.254.169.254) unicast.
const IPV4_COMPATIBLE: Network = [ipaddr.IPv6.parse('::'), 96];
// - 100:0:0:1::/64, the dummy IPv6 prefix (RFC 9780).
const DUMMY_PREFIX: Network = [ipaddr.IPv6.parse('100:0:0:1::'), 64];
// IANA has allocated only 2000::/3 for IPv6 global unicast; the rest is special-purpose or reserved
// by the IETF, so outside it nothing is a legitimate webhook target even if ipaddr.js says unicast.
const IPV6_GLOBAL_UNICAST: Network = [ipaddr.IPv6.parse('2000::'), 3];

/** Parses `WEBHOOK_ALLOWED_NETS` (comma-separated CIDRs; development and tests only); throws naming a malformed entry. */
export function parseAllowedNets(list: string): Network[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((cidr) => {
      // Four-part decimal only: ipaddr.js would also take "127.1/8" or "0x7f.1/8".
      const valid = ipaddr.IPv4.isValidCIDRFourPartDecimal(cidr) || ipaddr.IPv6.isValidCIDR(cidr);
      if (!valid) throw new Error(`WEBHOOK_ALLOWED_NETS: "${cidr}" is not a CIDR`);
      return ipaddr.parseCIDR(cidr);
    });
}

function inNetwork(address: Address, [base, bits]: Network): boolean {
  return address.kind() === base.kind() && address.match(base, bits);
}

function isAllowed(address: Address, allowed: Network[]): boolean {
  if (allowed.some((net) => inNetwork(address, net))) return true;
  // A dual-stack socket may report an IPv4 peer as ::ffff:a.b.c.d; allowing 127.0.0.0/8 allows that too.
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? allowed.some((net) => inNetwork((address as ipaddr.IPv6).toIPv4Address(), net))
    : false;
}

const ipv4FromParts = (high: number, low: number) => ipaddr.fromByteArray([high >> 8, high & 0xff, low >> 8, low & 0xff]).toString();

/** The IPv4 address an embedding IPv6 address carries, where its place is fixed. */
function carriedIpv4(address: ipaddr.IPv6, range: string): string | undefined {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  if (range === '6to4') return ipv4FromParts(p[1], p[2]);
  // The Teredo client address is stored inverted (RFC 4380 §4).
  if (range === 'teredo') return ipv4FromParts(p[6] ^ 0xffff, p[7] ^ 0xffff);
  // 64:ff9b:1::/48 is for local use with any RFC 6052 prefix length, so the IPv4 part has no fixed place.
  if (range === 'rfc6052' && !address.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return undefined;
  return ipv4FromParts(p[6], p[7]);
}

function embeddingWords(address: ipaddr.IPv6, range: string, what: string): string {
  const carried = carriedIpv4(address, range);
  return `an IPv6 address that embeds an IPv4 address (${what}${carried ? `, carrying ${carried}` : ''})`;
}

/** Why a parsed address is not global unicast, or undefined when it is. */
function nonGlobalReason(address: Address): string | undefined {
  const range = address.range();
  const embedding = EMBEDDING_RANGES[range];
  if (embedding) return embeddingWords(address as ipaddr.IPv6, range, embedding);
  if (range !== 'unicast') return RANGE_WORDS[range] ?? `a ${range} address`;
  if (address.kind() === 'ipv4') return undefined;
  if (inNetwork(address, IPV4_COMPATIBLE)) return embeddingWords(address as ipaddr.IPv6, 'compatible', 'IPv4-compatible, ::/96');
  if (inNetwork(address, DUMMY_PREFIX)) return 'a dummy-prefix address (100:0:0:1::/64)';
  if (!inNetwork(address, IPV6_GLOBAL_UNICAST)) return 'an address outside the IPv6 global unicast space 2000::/3';
  return undefined;
}

/**
 * Why an address may not be a webhook target, in words that follow the address ("a loopback
 * address", "an IPv6 address that embeds an IPv4 address (NAT64, …)"), or undefined when it may:
 * only global unicast addresses may (contract §20), plus whatever `allowed` re-allows.
 */
export function refusalReason(ip: string, allowed: Network[]): string | undefined {
  // node:net's isIP is strict (dotted quad only); ipaddr.js alone would also read "127.1" or "0x7f.1".
  if (!isIP(ip)) return 'not an IP address';
  const address = ipaddr.parse(ip);
  if (isAllowed(address, allowed)) return undefined;
  return nonGlobalReason(address);
}
