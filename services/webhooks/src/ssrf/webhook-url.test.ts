import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllowedNets } from './address-policy.ts';
import { testHostsResolve } from './resolver.ts';
import { createTargetPolicy, guardedLookup, type TargetPolicy } from './target-guard.ts';
import { checkWebhookUrl, parseWebhookUrl } from './webhook-url.ts';

const dir = mkdtempSync(join(tmpdir(), 'webhook-url-'));
const hostsFile = join(dir, 'hosts');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const noDns = () => Promise.reject(Object.assign(new Error('no DNS in this test'), { code: 'ENOTFOUND' }));
const policyWith = (hosts: string, allowed = ''): TargetPolicy => {
  writeFileSync(hostsFile, hosts);
  return { allowedNets: parseAllowedNets(allowed), resolve: testHostsResolve(hostsFile, noDns) };
};

describe('URL rules that need no DNS', () => {
  test('whitespace and control characters are refused on the raw string, naming the character', () => {
    const cases: [string, string][] = [
      ['https://example.com/a\r\nX-Injected: 1', '(U+000D at position 21)'],
      ['https://example.com/a\nb', '(U+000A at position 21)'],
      ['https://exa\tmple.com/', '(U+0009 at position 11)'],
      ['https://example.com/a b', '(U+0020 at position 21)'],
      [' https://example.com/', '(U+0020 at position 0)'],
      ['https://example.com/\u0000', '(U+0000 at position 20)'],
      ['https://example.com/\u007f', '(U+007F at position 20)'],
      ['https://example.com/\u0085', '(U+0085 at position 20)'],
      ['https://example.com/\u00a0', '(U+00A0 at position 20)'],
      ['https://example.com/\u200b', '(U+200B at position 20)'],
      ['https://example.com/\u202e', '(U+202E at position 20)'],
    ];
    for (const [raw, where] of cases) {
      expect(parseWebhookUrl(raw).problem).toBe(`must not contain whitespace or control characters ${where}`);
    }
  });

  test('scheme, credentials, length', () => {
    expect(parseWebhookUrl('ftp://example.com/').problem).toBe('must be an http or https URL');
    expect(parseWebhookUrl('file:///etc/passwd').problem).toBe('must be an http or https URL');
    expect(parseWebhookUrl('/relative').problem).toBe('must be an absolute http(s) URL');
    expect(parseWebhookUrl('not a url').problem).toBe('must be an absolute http(s) URL');
    expect(parseWebhookUrl('https://user:pw@example.com/').problem).toBe('must not contain credentials (user:password@)');
    expect(parseWebhookUrl('https://user@example.com/').problem).toBe('must not contain credentials (user:password@)');
    const long = `https://example.com/${'a'.repeat(2048 - 20)}`;
    expect(long).toHaveLength(2048);
    expect(parseWebhookUrl(long).problem).toBeUndefined();
    expect(parseWebhookUrl(`${long}b`).problem).toBe('must be at most 2048 characters long (it has 2049)');
  });

  test('WHATWG URL normalises odd IPv4 forms before the address is checked', async () => {
    const policy = policyWith('');
    for (const raw of ['http://2130706433/', 'http://0x7f.1/', 'http://127.1/', 'http://0177.0.0.1/', 'http://[::ffff:7f00:1]/']) {
      const [detail] = await checkWebhookUrl(raw, policy);
      expect([raw, detail?.message]).toEqual([raw, expect.stringMatching(/^host (127\.0\.0\.1|::ffff:7f00:1) is /)]);
    }
  });
});

describe('hosts: every resolved address must pass', () => {
  test('a name with one forbidden address among public ones is refused, naming it', async () => {
    const policy = policyWith('8.8.8.8 hook.test\n64:ff9b::a9fe:a9fe hook.test # NAT64 metadata\n1.1.1.1 good.test\n');
    expect(await checkWebhookUrl('https://good.test/hook', policy)).toEqual([]);
    expect(await checkWebhookUrl('https://hook.test/hook', policy)).toEqual([
      {
        field: 'url',
        message: expect.stringMatching(
          /^host hook\.test resolves to 64:ff9b::a9fe:a9fe, an IPv6 address that embeds an IPv4 address \(NAT64, .*carrying 169\.254\.169\.254\); webhooks may only target global unicast addresses$/,
        ),
      },
    ]);
    expect(await checkWebhookUrl('https://missing.test/', policy)).toEqual([
      { field: 'url', message: 'host missing.test does not resolve (ENOTFOUND)' },
    ]);
  });

  test('the connect-time lookup refuses what the resolver says now (rebinding), and hands back only checked addresses', async () => {
    const policy = policyWith('1.1.1.1 rebind.test\n');
    const lookup = guardedLookup(policy);
    const ask = () =>
      new Promise<{ err: Error | null; addresses: unknown }>((resolve) =>
        lookup('rebind.test', { all: true }, (err, addresses) => resolve({ err, addresses })),
      );
    expect(await ask()).toEqual({ err: null, addresses: [{ address: '1.1.1.1', family: 4 }] });
    writeFileSync(hostsFile, '1.1.1.1 rebind.test\n::ffff:0:a9fe:a9fe rebind.test\n');
    const { err } = await ask();
    expect(err?.name).toBe('ForbiddenTargetError');
    expect(err?.message).toMatch(
      /^rebind\.test resolves to ::ffff:0:a9fe:a9fe, an IPv6 address that embeds an IPv4 address \(IPv4-translated/,
    );
  });

  test('the test hosts file answers only for .test names and is refused in production', () => {
    expect(() => createTargetPolicy({ WEBHOOK_ALLOWED_NETS: '', WEBHOOK_TEST_HOSTS_FILE: hostsFile, NODE_ENV: 'production' })).toThrow(
      'tests only',
    );
    expect(createTargetPolicy({ WEBHOOK_ALLOWED_NETS: '', WEBHOOK_TEST_HOSTS_FILE: '', NODE_ENV: 'production' }).allowedNets).toEqual([]);
    writeFileSync(hostsFile, '1.1.1.1 example.com\n');
    const fallback = (name: string) => Promise.resolve([{ address: `fallback:${name}`, family: 4 }]);
    return expect(testHostsResolve(hostsFile, fallback)('example.com')).resolves.toEqual([{ address: 'fallback:example.com', family: 4 }]);
  });
});
