import { describe, expect, test } from 'bun:test';
import ipaddr from 'ipaddr.js';
import { parseAllowedNets, refusalReason } from './address-policy.ts';

// Every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries (as of 2025), written
// out here rather than taken from the library under test, plus multicast and the IPv6 forms that
// embed an IPv4 address (contract §20).
const IANA_IPV4 = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // shared address space
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.0.0/29', // IPv4 service continuity prefix
  '192.0.0.8/32', // IPv4 dummy address
  '192.0.0.9/32', // PCP anycast
  '192.0.0.10/32', // TURN anycast
  '192.0.0.170/32', // NAT64/DNS64 discovery
  '192.0.0.171/32', // NAT64/DNS64 discovery
  '192.0.2.0/24', // documentation (TEST-NET-1)
  '192.31.196.0/24', // AS112-v4
  '192.52.193.0/24', // AMT
  '192.88.99.0/24', // deprecated 6to4 relay anycast
  '192.168.0.0/16', // private
  '192.175.48.0/24', // direct delegation AS112 service
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation (TEST-NET-2)
  '203.0.113.0/24', // documentation (TEST-NET-3)
  '240.0.0.0/4', // reserved
  '255.255.255.255/32', // limited broadcast
  '224.0.0.0/4', // multicast (IPv4 Multicast Address Space registry)
];

const IANA_IPV6 = [
  '::1/128', // loopback
  '::/128', // unspecified
  '::ffff:0:0/96', // IPv4-mapped
  '64:ff9b::/96', // IPv4-IPv6 translation (NAT64 well-known prefix)
  '64:ff9b:1::/48', // IPv4-IPv6 translation (local use)
  '100::/64', // discard-only
  '100:0:0:1::/64', // dummy IPv6 prefix
  '2001::/23', // IETF protocol assignments
  '2001::/32', // Teredo
  '2001:1::1/128', // port control protocol anycast
  '2001:1::2/128', // TURN anycast
  '2001:1::3/128', // DNS-SD service registration protocol anycast
  '2001:2::/48', // benchmarking
  '2001:3::/32', // AMT
  '2001:4:112::/48', // AS112-v6
  '2001:10::/28', // deprecated ORCHID
  '2001:20::/28', // ORCHIDv2
  '2001:30::/28', // drone remote ID protocol entity tags
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4
  '2620:4f:8000::/48', // direct delegation AS112 service
  '3fff::/20', // documentation
  '5f00::/16', // segment routing (SRv6) SIDs
  'fc00::/7', // unique-local
  'fe80::/10', // link-local unicast
  'ff00::/8', // multicast
  '::/96', // IPv4-compatible (deprecated, RFC 4291)
  '::ffff:0:0:0/96', // IPv4-translated (RFC 2765)
];

const toBigInt = (address: ipaddr.IPv4 | ipaddr.IPv6) => address.toByteArray().reduce((n, byte) => (n << 8n) | BigInt(byte), 0n);
const fromBigInt = (n: bigint, bytes: number) =>
  ipaddr.fromByteArray(Array.from({ length: bytes }, (_, i) => Number((n >> BigInt(8 * (bytes - 1 - i))) & 0xffn))).toString();

/** The first, a middle and the last address of a CIDR. */
function samples(cidr: string): string[] {
  const [address, prefix] = ipaddr.parseCIDR(cidr);
  const bytes = address.kind() === 'ipv4' ? 4 : 16;
  const hostBits = BigInt(bytes * 8 - prefix);
  const first = (toBigInt(address) >> hostBits) << hostBits;
  const last = first + (1n << hostBits) - 1n;
  return [...new Set([first, (first + last) / 2n, last])].map((n) => fromBigInt(n, bytes));
}

describe('only global unicast addresses may be webhook targets', () => {
  for (const cidr of [...IANA_IPV4, ...IANA_IPV6]) {
    test(`${cidr}: first, middle and last address refused`, () => {
      for (const ip of samples(cidr)) expect([ip, refusalReason(ip, [])]).toEqual([ip, expect.any(String)]);
    });
  }

  test('the sampling covers the range ends', () => {
    expect(samples('192.0.2.0/24')).toEqual(['192.0.2.0', '192.0.2.127', '192.0.2.255']);
    expect(samples('2001:db8::/32')).toEqual([
      '2001:db8::',
      '2001:db8:7fff:ffff:ffff:ffff:ffff:ffff',
      '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
    ]);
    expect(samples('192.0.0.9/32')).toEqual(['192.0.0.9']);
  });

  test('the refusal names the kind of address', () => {
    expect(refusalReason('127.0.0.1', [])).toBe('a loopback address');
    expect(refusalReason('10.1.2.3', [])).toBe('a private address');
    expect(refusalReason('169.254.169.254', [])).toMatch(/^a link-local address/);
    expect(refusalReason('100.64.0.1', [])).toMatch(/^a shared address \(carrier-grade NAT/);
    expect(refusalReason('198.51.100.7', [])).toMatch(/^a reserved address \(.*documentation/);
    expect(refusalReason('255.255.255.255', [])).toBe('the broadcast address');
    expect(refusalReason('::1', [])).toBe('a loopback address');
    expect(refusalReason('::', [])).toBe('an unspecified address');
    expect(refusalReason('fd00::5', [])).toMatch(/^a unique-local/);
    expect(refusalReason('2001:2::1', [])).toBe('a benchmarking address');
    expect(refusalReason('100:0:0:1::5', [])).toBe('a dummy-prefix address (100:0:0:1::/64)');
    expect(refusalReason('4000::1', [])).toBe('an address outside the IPv6 global unicast space 2000::/3');
    expect(refusalReason('example.com', [])).toBe('not an IP address');
    // "127.1" is not an address to node:net even though ipaddr.js would read it as 127.0.0.1.
    expect(refusalReason('127.1', [])).toBe('not an IP address');
  });

  test('the issue’s cases: 169.254.169.254 through every IPv6 embedding', () => {
    const cases: [string, RegExp][] = [
      ['64:ff9b::a9fe:a9fe', /embeds an IPv4 address \(NAT64, .*carrying 169\.254\.169\.254\)/],
      ['64:ff9b:1::a9fe:a9fe', /embeds an IPv4 address \(NAT64/],
      ['::a9fe:a9fe', /embeds an IPv4 address \(IPv4-compatible, ::\/96, carrying 169\.254\.169\.254\)/],
      ['::ffff:0:a9fe:a9fe', /embeds an IPv4 address \(IPv4-translated, ::ffff:0:0:0\/96, carrying 169\.254\.169\.254\)/],
      ['::ffff:169.254.169.254', /embeds an IPv4 address \(IPv4-mapped, ::ffff:0:0\/96, carrying 169\.254\.169\.254\)/],
      ['2002:a9fe:a9fe::1', /embeds an IPv4 address \(6to4, 2002::\/16, carrying 169\.254\.169\.254\)/],
      // Teredo carries the client address inverted: 169.254.169.254 is 5601:5601.
      ['2001:0:4136:e378:8000:63bf:5601:5601', /embeds an IPv4 address \(Teredo, 2001::\/32, carrying 169\.254\.169\.254\)/],
    ];
    for (const [ip, reason] of cases) expect([ip, refusalReason(ip, [])]).toEqual([ip, expect.stringMatching(reason)]);
  });

  test('an IPv6 form embedding a PUBLIC IPv4 address is refused too', () => {
    for (const ip of [
      '::ffff:8.8.8.8',
      '::8.8.8.8',
      '::808:808',
      '::ffff:0:808:808',
      '64:ff9b::808:808',
      '64:ff9b:1:808:800:8::',
      '2002:808:808::1',
      '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
    ]) {
      expect([ip, refusalReason(ip, [])]).toEqual([ip, expect.stringMatching(/^an IPv6 address that embeds an IPv4 address/)]);
    }
  });

  test('real global unicast addresses are allowed', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001:80e::200e', '2001:4860:4860::8888']) {
      expect([ip, refusalReason(ip, [])]).toEqual([ip, undefined]);
    }
  });
});

describe('WEBHOOK_ALLOWED_NETS (development and tests only)', () => {
  test('re-allows a listed network, and only that one', () => {
    const allowed = parseAllowedNets('127.0.0.0/8, ::1/128,192.0.2.0/25');
    expect(refusalReason('127.0.0.1', allowed)).toBeUndefined();
    expect(refusalReason('127.255.0.9', allowed)).toBeUndefined();
    expect(refusalReason('::1', allowed)).toBeUndefined();
    expect(refusalReason('::ffff:127.0.0.1', allowed)).toBeUndefined();
    expect(refusalReason('192.0.2.127', allowed)).toBeUndefined();
    expect(refusalReason('192.0.2.128', allowed)).toMatch(/reserved/);
    expect(refusalReason('10.0.0.1', allowed)).toBe('a private address');
    expect(refusalReason('169.254.169.254', allowed)).toMatch(/link-local/);
    // Loopback through NAT64 is not loopback: only ::ffff:a.b.c.d stands for the IPv4 address itself.
    expect(refusalReason('64:ff9b::7f00:1', allowed)).toMatch(/NAT64/);
  });

  test('an embedding range is re-allowed only when listed itself', () => {
    expect(refusalReason('64:ff9b::a00:1', parseAllowedNets('64:ff9b::/96'))).toBeUndefined();
  });

  test('malformed entries are named', () => {
    expect(parseAllowedNets('')).toEqual([]);
    for (const bad of ['nope', '10.0.0.0/33', '127.1/8', '0x7f.0.0.1/8', 'example.com/8', '10.0.0.0/x', '::1/129']) {
      expect(() => parseAllowedNets(`127.0.0.0/8,${bad}`)).toThrow(bad);
    }
  });
});
