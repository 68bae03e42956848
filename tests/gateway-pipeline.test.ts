// The gateway's /v1 pipeline learns an answer's error type from the X-Error-Type header that every
// error answer carries (services, gateway-owned routes, the gateway's own refusals, replays) and
// never passes that header to clients; the audit record names the type; a validation error does
// not consume an Idempotency-Key (read from the header, not the body).
import { beforeAll, describe, expect, test } from 'bun:test';
import { type ApiResponse, pollUntil, type Stack, sharedStack, type TestTenant } from '@crm/testing';

let stack: Stack;

beforeAll(async () => {
  stack = await sharedStack();
}, 180_000);

/** The audit record of one request, read through the API (records are written in batches). */
async function auditRecord(tenant: TestTenant, requestId: string, path: string) {
  return pollUntil(
    `the audit record of request ${requestId}`,
    async () =>
      (await tenant.request('GET', `/v1/audit-logs?per_page=100&path=${encodeURIComponent(path)}`)).body.data?.find(
        (r: { request_id: string }) => r.request_id === requestId,
      ),
    (record) => record !== undefined,
    { timeoutMs: 5_000 },
  );
}

/** A request with its own request id, so its audit record can be found. */
async function traced(
  tenant: TestTenant,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
) {
  const requestId = crypto.randomUUID();
  const response = await tenant.request(method, path, { ...options, headers: { ...options.headers, 'x-request-id': requestId } });
  return { requestId, response };
}

function expectNoErrorTypeHeader(response: ApiResponse) {
  expect(response.headers.get('x-error-type')).toBeNull();
}

describe('error types through the pipeline', () => {
  test("a service's error: the audit record names its type, the client gets the envelope without X-Error-Type", async () => {
    const tenant = await stack.createTenant();
    const missing = await traced(tenant, 'GET', '/v1/contacts/999999999');
    expect(missing.response.status).toBe(404);
    expect(missing.response.body.error.type).toBe('not_found');
    expectNoErrorTypeHeader(missing.response);
    const invalid = await traced(tenant, 'POST', '/v1/contacts', { body: { type: 'client' } });
    expect(invalid.response.status).toBe(422);
    expect(invalid.response.body.error.type).toBe('validation_error');
    expectNoErrorTypeHeader(invalid.response);
    expect(await auditRecord(tenant, missing.requestId, '/v1/contacts/999999999')).toMatchObject({ status: 404, error_type: 'not_found' });
    expect(await auditRecord(tenant, invalid.requestId, '/v1/contacts')).toMatchObject({ status: 422, error_type: 'validation_error' });
  });

  test("a gateway-owned route's error and the gateway's own refusals: named in the audit record, no X-Error-Type", async () => {
    const tenant = await stack.createTenant();
    const badQuery = await traced(tenant, 'GET', '/v1/audit-logs?status=9999');
    expect(badQuery.response.status).toBe(422);
    expectNoErrorTypeHeader(badQuery.response);
    const wrongMethod = await traced(tenant, 'DELETE', '/v1/health');
    expect(wrongMethod.response.status).toBe(405);
    expectNoErrorTypeHeader(wrongMethod.response);
    const unknown = await traced(tenant, 'GET', '/v1/no-such-resource');
    expect(unknown.response.status).toBe(404);
    expectNoErrorTypeHeader(unknown.response);
    expect(await auditRecord(tenant, badQuery.requestId, '/v1/audit-logs')).toMatchObject({ status: 422, error_type: 'validation_error' });
    expect(await auditRecord(tenant, wrongMethod.requestId, '/v1/health')).toMatchObject({ status: 405, error_type: 'method_not_allowed' });
    expect(await auditRecord(tenant, unknown.requestId, '/v1/no-such-resource')).toMatchObject({ status: 404, error_type: 'not_found' });
    const keyless = await fetch(`${stack.gatewayUrl}/v1/contacts`);
    expect(keyless.status).toBe(401);
    expect(keyless.headers.get('x-error-type')).toBeNull();
  });

  test('a replayed error answer is recorded with its type, like the original', async () => {
    const tenant = await stack.createTenant();
    const headers = { 'idempotency-key': `gone-${crypto.randomUUID()}` };
    const first = await traced(tenant, 'DELETE', '/v1/contacts/999999998', { headers });
    const again = await traced(tenant, 'DELETE', '/v1/contacts/999999998', { headers });
    expect(first.response.status).toBe(404);
    expect(again.response.status).toBe(404);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.response.body.error.type).toBe('not_found');
    expectNoErrorTypeHeader(again.response);
    expect(await auditRecord(tenant, again.requestId, '/v1/contacts/999999998')).toMatchObject({
      status: 404,
      replayed: true,
      error_type: 'not_found',
    });
  });

  test('a validation error leaves the Idempotency-Key usable (a 404 is stored: above)', async () => {
    const tenant = await stack.createTenant();
    const key = `v-${crypto.randomUUID()}`;
    const invalid = await tenant.request('POST', '/v1/contacts', { body: { type: 'client' }, headers: { 'idempotency-key': key } });
    expect(invalid.status).toBe(422);
    const valid = await tenant.request('POST', '/v1/contacts', {
      body: { name: 'Keyed', type: 'client' },
      headers: { 'idempotency-key': key },
    });
    expect(valid.status).toBe(201);
    expect(valid.headers.get('idempotent-replayed')).toBeNull();
  });
});
