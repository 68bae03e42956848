import { describe, expect, test } from 'bun:test';
import { parseAllowedNets, refusalReason } from './address-policy.ts';
import { networkContains, parseAddress, parseCidr } from './cidr.ts';

const contains = (cidr: string, ip: string) => networkContains(parseCidr(cidr)!, parseAddress(ip)!);

describe('CIDR matching', () => {
  test('IPv4 prefixes', () => {
    expect(contains('10.0.0.0/8', '10.255.1.2')).toBe(true);
    expect(contains('10.0.0.0/8', '11.0.0.1')).toBe(false);
    expect(contains('172.16.0.0/12', '172.31.255.255')).toBe(true);
    expect(contains('172.16.0.0/12', '172.32.0.0')).toBe(false);
    expect(contains('0.0.0.0/0', '8.8.8.8')).toBe(true);
    expect(contains('192.168.1.7/32', '192.168.1.7')).toBe(true);
    expect(contains('192.168.1.7/32', '192.168.1.8')).toBe(false);
  });

  test('IPv6 prefixes, compressed forms and families', () => {
    expect(contains('fe80::/10', 'fe80::1')).toBe(true);
    expect(contains('fe80::/10', 'febf:ffff::1')).toBe(true);
    expect(contains('fe80::/10', 'fec0::1')).toBe(false);
    expect(contains('::1/128', '0:0:0:0:0:0:0:1')).toBe(true);
    expect(contains('2001:db8::/32', '2001:db8:abcd::42')).toBe(true);
    expect(contains('10.0.0.0/8', '::ffff:10.0.0.1')).toBe(false);
  });

  test('malformed CIDRs are rejected', () => {
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('example.com/8')).toBeUndefined();
    expect(parseCidr('10.0.0.0/x')).toBeUndefined();
    expect(() => parseAllowedNets('127.0.0.0/8, nope')).toThrow('nope');
  });
});

describe('webhook target policy', () => {
  test('private, loopback, link-local and metadata addresses are refused', () => {
    expect(refusalReason('127.0.0.1', [])).toBe('loopback');
    expect(refusalReason('10.1.2.3', [])).toBe('private');
    expect(refusalReason('192.168.0.10', [])).toBe('private');
    expect(refusalReason('169.254.169.254', [])).toBe('link-local');
    expect(refusalReason('::1', [])).toBe('loopback');
    expect(refusalReason('fd00::5', [])).toBe('private');
    expect(refusalReason('::ffff:127.0.0.1', [])).toBe('loopback');
    expect(refusalReason('0.0.0.0', [])).toBe('unspecified');
  });

  test('public addresses pass', () => {
    expect(refusalReason('93.184.216.34', [])).toBeUndefined();
    expect(refusalReason('2606:2800:220:1::248', [])).toBeUndefined();
  });

  test('WEBHOOK_ALLOWED_NETS lets chosen ranges through, and only those', () => {
    const allowed = parseAllowedNets('127.0.0.0/8,::1/128');
    expect(refusalReason('127.0.0.1', allowed)).toBeUndefined();
    expect(refusalReason('::1', allowed)).toBeUndefined();
    expect(refusalReason('::ffff:127.0.0.1', allowed)).toBeUndefined();
    expect(refusalReason('10.0.0.1', allowed)).toBe('private');
    expect(refusalReason('169.254.169.254', allowed)).toBe('link-local');
  });
});
