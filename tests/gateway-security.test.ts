// Contract §20 on the gateway: operational endpoints off the public port with bounded labels,
// the headers of every /v1 answer and of downloads, and the CORS allow-list.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ServiceProcess } from '@crm/stack';
import { type ApiResponse, type Stack, send, sharedStack, type TestTenant } from '@crm/testing';
import { auditRowsUntil } from './audit-rows.ts';
import { createContact, pdf, uploadToContact } from './documents-fixtures.ts';

const APP = 'https://tools.example.com';
const ALLOWED_HEADERS = ['x-api-key', 'content-type', 'idempotency-key', 'x-request-id', 'if-match', 'if-none-match'];
const EXPOSED = ['X-Request-ID', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Idempotent-Replayed', 'ETag', 'Link'];

let stack: Stack;
let tenant: TestTenant;
/** A gateway replica with CORS on for APP; it trusts loopback as a proxy so each test has an address of its own. */
let corsGateway: ServiceProcess;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  corsGateway = await stack.startGatewayReplica({
    CORS_ALLOWED_ORIGINS: ` ${APP} ,http://localhost:3000`,
    TRUSTED_PROXIES: '127.0.0.1,::1',
    UNAUTHENTICATED_PER_MINUTE: '3',
  });
}, 180_000);

afterAll(async () => {
  await corsGateway?.stop();
});

const accessControl = (headers: Headers) => [...headers.keys()].filter((k) => k.startsWith('access-control-'));
/** The distinct `route` label values of the gateway's request counter. */
async function routeLabels(): Promise<Set<string>> {
  const text = await (await fetch(`${stack.gatewayOpsUrl}/metrics`)).text();
  return new Set([...text.matchAll(/^http_requests_total\{[^}]*route="([^"]*)"/gm)].map((m) => m[1] as string));
}
let lastAddress = 0;
/** A documentation address (RFC 5737) no other request used, so its keyless budget is whole. */
const address = () => `198.51.100.${++lastAddress}`;

describe('operations port (§20)', () => {
  test('/metrics is 404 not_found on the public port and served on GATEWAY_OPS_PORT', async () => {
    const pub = await send(stack.gatewayUrl, 'GET', '/metrics');
    expect(pub.status).toBe(404);
    expect(pub.body.error).toMatchObject({ type: 'not_found', request_id: pub.headers.get('x-request-id') });
    const ops = await fetch(`${stack.gatewayOpsUrl}/metrics`);
    expect(ops.status).toBe(200);
    expect(ops.headers.get('content-type')).toContain('text/plain');
    expect(await ops.text()).toContain('http_requests_total{service="gateway"');
  });

  test('/livez and /readyz answer on both ports; the ops port serves nothing else', async () => {
    for (const base of [stack.gatewayUrl, stack.gatewayOpsUrl])
      for (const probe of ['/livez', '/readyz'])
        expect({ base, probe, status: (await fetch(base + probe)).status }).toEqual({ base, probe, status: 200 });
    for (const path of ['/v1/users', '/admin/tenants', '/docs', '/openapi/v1.yaml']) {
      const res = await send(stack.gatewayOpsUrl, 'GET', path, { headers: { 'x-api-key': tenant.apiKey } });
      expect({ path, status: res.status, type: res.body.error?.type }).toEqual({ path, status: 404, type: 'not_found' });
    }
  });

  test('50 random unknown paths add no label value but `unmatched`', async () => {
    const before = await routeLabels();
    const tokens = Array.from({ length: 50 }, () => crypto.randomUUID().slice(0, 13));
    const paths = tokens.map((t, i) => [`/v1/${t}`, `/${t}`, `/admin/${t}`, `/v1/${t}/contacts`, `/${t}/v1/contacts`][i % 5] as string);
    for (const [i, path] of paths.entries()) {
      const res = await send(stack.gatewayUrl, i % 2 ? 'POST' : 'GET', path, { headers: { 'x-api-key': tenant.apiKey } });
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
    const after = await routeLabels();
    const added = [...after].filter((label) => !before.has(label));
    expect(added.filter((label) => label !== 'unmatched')).toEqual([]);
    expect(after.has('unmatched')).toBe(true);
    const text = await (await fetch(`${stack.gatewayOpsUrl}/metrics`)).text();
    for (const token of tokens) expect(text).not.toContain(token);
  });
});

describe('headers of every /v1 response (§20)', () => {
  const expectPublicHeaders = (what: string, res: ApiResponse) => {
    expect({ what, cache: res.headers.get('cache-control'), sniff: res.headers.get('x-content-type-options') }).toEqual({
      what,
      cache: 'no-store',
      sniff: 'nosniff',
    });
  };

  test('200, 201, replay, 401, 404, 405, 422 and 429 carry Cache-Control: no-store and nosniff', async () => {
    const key = crypto.randomUUID();
    const body = { name: `Sec ${crypto.randomUUID().slice(0, 8)}`, type: 'client' };
    const limited = await stack.createTenant({ limits: { write_per_minute: 1 } });
    expect((await limited.request('POST', '/v1/contacts', { body })).status).toBe(201);
    const answers: [string, number, ApiResponse][] = [
      ['list', 200, await tenant.request('GET', '/v1/users')],
      ['create', 201, await tenant.request('POST', '/v1/contacts', { body, headers: { 'idempotency-key': key } })],
      ['replay', 201, await tenant.request('POST', '/v1/contacts', { body, headers: { 'idempotency-key': key } })],
      ['no key', 401, await send(stack.gatewayUrl, 'GET', '/v1/users')],
      ['unknown route', 404, await tenant.request('GET', '/v1/no-such-thing')],
      ['unknown contact', 404, await tenant.request('GET', '/v1/contacts/999999999')],
      ['wrong method', 405, await tenant.request('DELETE', '/v1/users')],
      ['invalid body', 422, await tenant.request('POST', '/v1/contacts', { body: { type: 'client' } })],
      ['over the limit', 429, await limited.request('POST', '/v1/contacts', { body })],
      ['openapi', 200, await send(stack.gatewayUrl, 'GET', '/v1/openapi/v1.yaml')],
    ];
    for (const [what, status, res] of answers) {
      expect({ what, status: res.status }).toEqual({ what, status });
      expectPublicHeaders(what, res);
    }
    expect(answers[2]?.[2].headers.get('idempotent-replayed')).toBe('true');
  });

  test('a 5xx (upstream down: 503 service_unavailable) carries them too', async () => {
    const cut = await stack.startGatewayReplica({ SALES_URL: 'http://127.0.0.1:9' });
    try {
      const res = await send(cut.url, 'GET', '/v1/contacts', { headers: { 'x-api-key': tenant.apiKey } });
      expect(res.status).toBe(503);
      expect(res.body.error.type).toBe('service_unavailable');
      expectPublicHeaders('503', res);
    } finally {
      await cut.stop();
    }
  });

  test('a document download is an attachment with nosniff and a sandboxing CSP', async () => {
    const contact = await createContact(tenant);
    const uploaded = await uploadToContact(tenant, contact, 'Q3 report.pdf', pdf());
    expect(uploaded.status).toBe(201);
    const res = await fetch(`${stack.gatewayUrl}/v1/documents/${uploaded.body.data.id}/content`, {
      headers: { 'x-api-key': tenant.apiKey },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=/);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(pdf()))).toBe(true);
  });
});

describe('CORS (§20)', () => {
  const preflight = (base: string, origin: string, ip = address()) =>
    fetch(`${base}/v1/contacts/42`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'x-api-key, content-type, idempotency-key',
        'x-forwarded-for': ip,
      },
    });

  test('a preflight from an allowed origin: 204 without a key, with every CORS header', async () => {
    const res = await preflight(corsGateway.url, APP);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-allow-methods')?.split(', ')).toEqual(
      expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
    );
    expect(res.headers.get('access-control-allow-headers')?.split(', ')).toEqual(expect.arrayContaining(ALLOWED_HEADERS));
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('vary')).toContain('Origin');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
    // The second allowed origin of the list works as well.
    expect((await preflight(corsGateway.url, 'http://localhost:3000')).headers.get('access-control-allow-origin')).toBe(
      'http://localhost:3000',
    );
    // Any /v1 path: an unknown one, and the public OpenAPI document.
    for (const path of ['/v1/no-such-thing', '/v1/openapi/v1.yaml']) {
      const other = await fetch(corsGateway.url + path, {
        method: 'OPTIONS',
        headers: { origin: APP, 'access-control-request-method': 'GET' },
      });
      expect({ path, status: other.status, origin: other.headers.get('access-control-allow-origin') }).toEqual({
        path,
        status: 204,
        origin: APP,
      });
    }
    const document = await fetch(`${corsGateway.url}/v1/openapi/v1.yaml`, { headers: { origin: APP } });
    expect(document.status).toBe(200);
    expect(document.headers.get('access-control-allow-origin')).toBe(APP);
  });

  test('preflights spend no budget and are audited without a tenant', async () => {
    const ip = address();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await preflight(corsGateway.url, APP, ip);
      expect(res.status).toBe(204);
      expect(res.headers.get('ratelimit')).toBe('"ip";r=3;t=0');
      ids.push(res.headers.get('x-request-id') as string);
    }
    // The address's keyless budget (3 here) is whole: three 401s, then 429.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(`${corsGateway.url}/v1/users`, { headers: { 'x-forwarded-for': ip } })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Audit records are written in batches (AUDIT_FLUSH_MS, 500 ms).
    const rows = await auditRowsUntil(stack, 'request_id::text = any($1::text[])', [ids], 5);
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.method === 'OPTIONS' && r.status === 204 && r.tenant_id === null)).toBe(true);
  });

  test('actual responses to an allowed origin carry Allow-Origin, Vary and Expose-Headers (errors too)', async () => {
    for (const res of [
      await fetch(`${corsGateway.url}/v1/users`, { headers: { origin: APP, 'x-api-key': tenant.apiKey } }),
      await fetch(`${corsGateway.url}/v1/users`, { headers: { origin: APP, 'x-forwarded-for': address() } }),
    ]) {
      expect(res.headers.get('access-control-allow-origin')).toBe(APP);
      expect(res.headers.get('vary')).toContain('Origin');
      expect(res.headers.get('access-control-expose-headers')?.split(', ')).toEqual(EXPOSED);
    }
  });

  test('any other origin gets no Access-Control-* header; its preflight is an ordinary keyless OPTIONS (401)', async () => {
    for (const origin of ['https://evil.example.com', 'https://tools.example.com.evil.example', 'null', 'http://tools.example.com']) {
      const pre = await preflight(corsGateway.url, origin);
      expect({ origin, status: pre.status, cors: accessControl(pre.headers) }).toEqual({ origin, status: 401, cors: [] });
      const actual = await fetch(`${corsGateway.url}/v1/users`, { headers: { origin, 'x-api-key': tenant.apiKey } });
      expect({ origin, status: actual.status, cors: accessControl(actual.headers) }).toEqual({ origin, status: 200, cors: [] });
    }
  });

  test('CORS is off by default: no CORS header at all, even for an origin allowed elsewhere', async () => {
    const pre = await preflight(stack.gatewayUrl, APP);
    expect(pre.status).toBe(401);
    expect(accessControl(pre.headers)).toEqual([]);
    const actual = await fetch(`${stack.gatewayUrl}/v1/users`, { headers: { origin: APP, 'x-api-key': tenant.apiKey } });
    expect(actual.status).toBe(200);
    expect(accessControl(actual.headers)).toEqual([]);
    expect(actual.headers.get('vary') ?? '').not.toContain('Origin');
  });
});
