import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Receiver, type Stack, startReceiver, startStack, type TestTenant } from '@crm/testing';
import { deliveriesUntil } from './webhook-deliveries.ts';

// Contract §20: webhook targets must be global unicast, at registration and at connect time.
// A stack of its own with WEBHOOK_ALLOWED_NETS empty (loopback is refused like any other
// non-public range) and a WEBHOOK_TEST_HOSTS_FILE the tests rewrite to make `*.test` names
// resolve to whatever address a case needs, at registration or later (DNS rebinding).
let stack: Stack;
let tenant: TestTenant;
let receiver: Receiver;
const dir = mkdtempSync(join(tmpdir(), 'webhooks-ssrf-'));
const hostsFile = join(dir, 'hosts');
const hosts = new Map<string, string[]>();

/** Points `name` at `addresses` (atomically: the service re-reads the file on every lookup). */
function resolveTo(name: string, ...addresses: string[]) {
  hosts.set(name, addresses);
  const text = [...hosts].flatMap(([n, list]) => list.map((a) => `${a} ${n}`)).join('\n');
  writeFileSync(`${hostsFile}.tmp`, `${text}\n`);
  renameSync(`${hostsFile}.tmp`, hostsFile);
}

beforeAll(async () => {
  resolveTo('public.test', '8.8.8.8');
  stack = await startStack({ env: { WEBHOOK_ALLOWED_NETS: '', WEBHOOK_TEST_HOSTS_FILE: hostsFile } });
  tenant = await stack.createTenant();
  receiver = await startReceiver();
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const ONLY_GLOBAL = /; webhooks may only target global unicast addresses$/;
const literalUrl = (ip: string) => `http://${ip.includes(':') ? `[${ip}]` : ip}/hook`;

/** Runs `fn` over `items`, `size` at a time. */
async function inGroups<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return results;
}

// One address inside every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries,
// multicast, and every IPv6 form that embeds an IPv4 address (of a private, a metadata and a
// public IPv4 address: embedding is refused whatever it carries).
const REFUSED: [string, string][] = [
  ['0.0.0.0/8', '0.1.2.3'],
  ['10.0.0.0/8', '10.1.2.3'],
  ['100.64.0.0/10', '100.100.100.100'],
  ['127.0.0.0/8', '127.0.0.1'],
  ['169.254.0.0/16', '169.254.169.254'],
  ['172.16.0.0/12', '172.20.0.1'],
  ['192.0.0.0/24', '192.0.0.100'],
  ['192.0.0.0/29', '192.0.0.6'],
  ['192.0.0.8/32', '192.0.0.8'],
  ['192.0.0.9/32', '192.0.0.9'],
  ['192.0.0.10/32', '192.0.0.10'],
  ['192.0.0.170/32', '192.0.0.170'],
  ['192.0.0.171/32', '192.0.0.171'],
  ['192.0.2.0/24', '192.0.2.10'],
  ['192.31.196.0/24', '192.31.196.1'],
  ['192.52.193.0/24', '192.52.193.1'],
  ['192.88.99.0/24', '192.88.99.1'],
  ['192.168.0.0/16', '192.168.1.20'],
  ['192.175.48.0/24', '192.175.48.1'],
  ['198.18.0.0/15', '198.19.0.1'],
  ['198.51.100.0/24', '198.51.100.7'],
  ['203.0.113.0/24', '203.0.113.10'],
  ['224.0.0.0/4', '239.1.2.3'],
  ['240.0.0.0/4', '250.1.2.3'],
  ['255.255.255.255/32', '255.255.255.255'],
  ['::1/128', '::1'],
  ['::/128', '::'],
  ['::ffff:0:0/96', '::ffff:127.0.0.1'],
  ['64:ff9b::/96', '64:ff9b::a9fe:a9fe'],
  ['64:ff9b:1::/48', '64:ff9b:1::a9fe:a9fe'],
  ['100::/64', '100::1'],
  ['100:0:0:1::/64', '100:0:0:1::1'],
  ['2001::/23', '2001:100::1'],
  ['2001::/32', '2001:0:4136:e378:8000:63bf:5601:5601'],
  ['2001:1::1/128', '2001:1::1'],
  ['2001:1::2/128', '2001:1::2'],
  ['2001:1::3/128', '2001:1::3'],
  ['2001:2::/48', '2001:2::1'],
  ['2001:3::/32', '2001:3::1'],
  ['2001:4:112::/48', '2001:4:112::1'],
  ['2001:10::/28', '2001:10::1'],
  ['2001:20::/28', '2001:20::1'],
  ['2001:30::/28', '2001:30::1'],
  ['2001:db8::/32', '2001:db8::1'],
  ['2002::/16', '2002:a9fe:a9fe::1'],
  ['2620:4f:8000::/48', '2620:4f:8000::1'],
  ['3fff::/20', '3fff::1'],
  ['5f00::/16', '5f00::1'],
  ['fc00::/7', 'fd12:3456::1'],
  ['fe80::/10', 'fe80::1'],
  ['ff00::/8', 'ff02::1'],
  ['::/96 (IPv4-compatible)', '::a9fe:a9fe'],
  ['::ffff:0:0:0/96 (IPv4-translated)', '::ffff:0:a9fe:a9fe'],
  ['::ffff:0:0/96, public IPv4', '::ffff:8.8.8.8'],
  ['::/96, public IPv4', '::808:808'],
  ['::ffff:0:0:0/96, public IPv4', '::ffff:0:808:808'],
  ['64:ff9b::/96, public IPv4', '64:ff9b::8.8.8.8'],
  ['2002::/16, public IPv4', '2002:808:808::1'],
  ['2001::/32, public IPv4', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
];

const EMBEDDED = new Set(['::ffff:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', '2001::/32', '2002::/16']);

async function registrationRefusal(url: string): Promise<{ status: number; details: unknown }> {
  const res = await tenant.request('POST', '/v1/webhooks', { body: { url } });
  return { status: res.status, details: res.body?.error?.details };
}

describe('SSRF guard at registration', () => {
  test('an IP-literal URL in any special-purpose range is refused (422 on url), naming what it is', async () => {
    const results = await inGroups(REFUSED, 8, async ([range, ip]) => ({ range, ip, ...(await registrationRefusal(literalUrl(ip))) }));
    for (const { range, ip, status, details } of results) {
      const embedded = EMBEDDED.has(range) || range.includes('IPv4');
      const message = embedded ? /^host .* is an IPv6 address that embeds an IPv4 address \(/ : /^host .* is (a|an|the) /;
      expect({ range, status, details }).toEqual({
        range,
        status: 422,
        details: [{ field: 'url', message: expect.stringMatching(message) }],
      });
      expect({ ip, message: (details as { message: string }[])[0]?.message }).toEqual({ ip, message: expect.stringMatching(ONLY_GLOBAL) });
    }
    expect((await tenant.request('GET', '/v1/webhooks')).body.pagination.total).toBe(0);
  }, 60_000);

  test('the issue’s NAT64 and embedded forms of 169.254.169.254 say so', async () => {
    const cases: [string, RegExp][] = [
      ['64:ff9b::a9fe:a9fe', /embeds an IPv4 address \(NAT64, .*carrying 169\.254\.169\.254\)/],
      ['::a9fe:a9fe', /embeds an IPv4 address \(IPv4-compatible, ::\/96, carrying 169\.254\.169\.254\)/],
      ['::ffff:0:a9fe:a9fe', /embeds an IPv4 address \(IPv4-translated, ::ffff:0:0:0\/96, carrying 169\.254\.169\.254\)/],
      ['2002:a9fe:a9fe::1', /embeds an IPv4 address \(6to4, 2002::\/16, carrying 169\.254\.169\.254\)/],
    ];
    for (const [ip, message] of cases) {
      const { status, details } = await registrationRefusal(literalUrl(ip));
      expect({ ip, status, details }).toEqual({ ip, status: 422, details: [{ field: 'url', message: expect.stringMatching(message) }] });
    }
  }, 30_000);

  test('odd IPv4 spellings are normalised first, then refused', async () => {
    for (const url of [
      'http://2130706433/',
      'http://0x7f.1/',
      'http://127.1/',
      'http://0177.0.0.1/',
      'http://0xa9fea9fe/latest/meta-data/',
    ]) {
      const { status, details } = await registrationRefusal(url);
      expect({ url, status, details }).toEqual({
        url,
        status: 422,
        details: [
          { field: 'url', message: expect.stringMatching(/^host (127\.0\.0\.1|169\.254\.169\.254) is a (loopback|link-local) address/) },
        ],
      });
    }
  }, 30_000);

  test('a host name is refused when ANY address it resolves to is forbidden, and when it does not resolve', async () => {
    resolveTo('metadata-nat64.test', '64:ff9b::a9fe:a9fe');
    resolveTo('mixed.test', '8.8.8.8', '2606:4700:4700::1111', '10.0.0.5');
    const cases: [string, RegExp][] = [
      [`http://localhost:${receiver.port}/hook`, /^host localhost resolves to (127\.0\.0\.1|::1), a loopback address/],
      [
        'https://metadata-nat64.test/',
        /^host metadata-nat64\.test resolves to 64:ff9b::a9fe:a9fe, an IPv6 address that embeds an IPv4 address \(NAT64/,
      ],
      ['https://mixed.test/hook', /^host mixed\.test resolves to 10\.0\.0\.5, a private address/],
      ['https://nowhere.test/hook', /^host nowhere\.test does not resolve/],
    ];
    for (const [url, message] of cases) {
      const { status, details } = await registrationRefusal(url);
      expect({ url, status, details }).toEqual({ url, status: 422, details: [{ field: 'url', message: expect.stringMatching(message) }] });
    }
  }, 30_000);

  test('a name resolving only to global unicast addresses is accepted', async () => {
    const other = await stack.createTenant();
    const res = await other.request('POST', '/v1/webhooks', { body: { url: 'https://public.test/hook', enabled: false } });
    expect(res.status).toBe(201);
  }, 30_000);

  test('URLs with CR, LF, TAB, spaces, control characters, credentials, other schemes or over 2048 characters → 422, nothing stored', async () => {
    const own = await stack.createTenant();
    const cases: [string, RegExp][] = [
      ['https://public.test/hook\r\nX-Injected: yes', /whitespace or control characters \(U\+000D at position 24\)/],
      ['https://public.test/hook\nX-Injected: yes', /whitespace or control characters \(U\+000A/],
      ['https://public.test/ho\tok', /whitespace or control characters \(U\+0009/],
      ['https://public.test/a hook', /whitespace or control characters \(U\+0020/],
      ['https://public.test/hook ', /whitespace or control characters \(U\+0020/],
      ['https://public.test/hook\u007f', /whitespace or control characters \(U\+007F/],
      ['https://public.test/hook\u200b', /whitespace or control characters \(U\+200B/],
      ['https://user:secret@public.test/hook', /^must not contain credentials/],
      ['https://user@public.test/hook', /^must not contain credentials/],
      ['ftp://public.test/hook', /^must be an http or https URL$/],
      ['gopher://public.test:70/_', /^must be an http or https URL$/],
      ['public.test/hook', /^must be an absolute http\(s\) URL$/],
      [`https://public.test/${'a'.repeat(2030)}`, /2048/],
    ];
    for (const [url, message] of cases) {
      const res = await own.request('POST', '/v1/webhooks', { body: { url } });
      expect({ url, status: res.status, type: res.body?.error?.type }).toEqual({ url, status: 422, type: 'validation_error' });
      expect(res.body.error.details).toContainEqual({ field: 'url', message: expect.stringMatching(message) });
    }
    expect((await own.request('GET', '/v1/webhooks')).body.pagination.total).toBe(0);
  }, 30_000);

  test('an update (PUT or PATCH) to a refused URL is refused too, and changes nothing', async () => {
    const own = await stack.createTenant();
    const created = await own.request('POST', '/v1/webhooks', { body: { url: 'https://public.test/hook', enabled: false } });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const updates: [string, string][] = [
      ['PUT', 'http://169.254.169.254/'],
      ['PATCH', 'http://[64:ff9b::a9fe:a9fe]/'],
      ['PATCH', 'https://public.test/hook\r\nHost: internal'],
      ['PUT', 'https://metadata-nat64.test/'],
    ];
    for (const [method, url] of updates) {
      const res = await own.request(method, `/v1/webhooks/${id}`, { body: { url } });
      expect({ method, url, status: res.status, field: res.body?.error?.details?.[0]?.field }).toEqual({
        method,
        url,
        status: 422,
        field: 'url',
      });
    }
    expect((await own.request('GET', `/v1/webhooks/${id}`)).body.data.url).toBe('https://public.test/hook');
  }, 30_000);
});

/** Sends a test event to the endpoint and waits for its first logged attempt. */
async function firstAttempt(who: TestTenant, id: number) {
  expect((await who.request('POST', `/v1/webhooks/${id}/test`)).status).toBe(202);
  const log = await deliveriesUntil(who, id, (rows) => rows.some((a) => a.attempt === 1), 10_000);
  return log.find((a) => a.attempt === 1);
}

describe('SSRF guard at connect time', () => {
  // Each name resolves to a public address when registered, then is rebound to a forbidden one.
  // The receiver listens on 127.0.0.1, so a guard that let loopback (or ::ffff:127.0.0.1) through
  // would show up as a received webhook.
  const REBOUND = [
    '127.0.0.1',
    '::ffff:127.0.0.1',
    '169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::a9fe:a9fe',
    '::a9fe:a9fe',
    '::ffff:0:a9fe:a9fe',
    '2002:a9fe:a9fe::1',
    '2001:0:4136:e378:8000:63bf:5601:5601',
    '10.0.0.1',
    '100.64.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '240.0.0.1',
    '2001:db8::1',
    'fd00::1',
    'fe80::1',
  ];

  test('a name rebound to a forbidden address after registration: refused, logged as a failed attempt, nothing sent', async () => {
    const own = await stack.createTenant();
    const attempts = await inGroups(REBOUND, 6, async (address) => {
      const name = `rebind-${address.replace(/[^0-9a-f]/gi, '-')}.test`;
      resolveTo(name, '8.8.8.8');
      const created = await own.request('POST', '/v1/webhooks', { body: { url: `http://${name}:${receiver.port}/hook` } });
      expect({ name, status: created.status }).toEqual({ name, status: 201 });
      resolveTo(name, '8.8.4.4', address);
      return { name, address, attempt: await firstAttempt(own, created.body.data.id) };
    });
    for (const { name, address, attempt } of attempts) {
      expect({ address, attempt }).toEqual({
        address,
        attempt: expect.objectContaining({ attempt: 1, status: 'pending', status_code: null, response_excerpt: null }),
      });
      expect(attempt.error).toStartWith(`refused: ${name} resolves to ${address}, `);
      expect(attempt.error).toMatch(ONLY_GLOBAL);
    }
    expect(receiver.received).toHaveLength(0);
  }, 90_000);

  test('localhost (the system resolver) is refused at connect time too', async () => {
    // As if `localhost` had resolved to a public address at registration: stored directly.
    const { rows } = await stack.sql(
      `insert into webhooks.endpoints (tenant_id, url, secret) values ($1, $2, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw') returning id`,
      [tenant.tenantId, `http://localhost:${receiver.port}/rebound`],
    );
    const attempt = await firstAttempt(tenant, rows[0].id);
    expect(attempt).toMatchObject({ attempt: 1, status: 'pending', status_code: null });
    expect(attempt.error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(receiver.received).toHaveLength(0);
  }, 30_000);

  test('rows stored before these rules (an IP literal, a CR/LF URL) get no request either', async () => {
    const legacy: [string, RegExp][] = [
      [
        `http://[::ffff:127.0.0.1]:${receiver.port}/hook`,
        /^refused: host ::ffff:7f00:1 is an IPv6 address that embeds an IPv4 address \(IPv4-mapped/,
      ],
      [
        'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/',
        /^refused: host 64:ff9b::a9fe:a9fe is an IPv6 address that embeds an IPv4 address \(NAT64/,
      ],
      [
        `http://127.0.0.1:${receiver.port}/hook\r\nX-Injected: yes`,
        /^refused: url must not contain whitespace or control characters \(U\+000D/,
      ],
    ];
    for (const [url, error] of legacy) {
      const { rows } = await stack.sql(
        `insert into webhooks.endpoints (tenant_id, url, secret) values ($1, $2, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw') returning id`,
        [tenant.tenantId, url],
      );
      const attempt = await firstAttempt(tenant, rows[0].id);
      expect({ url, attempt }).toEqual({
        url,
        attempt: expect.objectContaining({ attempt: 1, status_code: null, error: expect.stringMatching(error) }),
      });
    }
    expect(receiver.received).toHaveLength(0);
  }, 30_000);
});
