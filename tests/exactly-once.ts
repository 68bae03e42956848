// What the exactly-once tests (contract §21) share: waiting for and losing the gateway's record
// of a key, and checking that a retry is the service's recorded answer.
import { expect } from 'bun:test';
import { type ApiResponse, type Stack, type TestTenant, until } from '@crm/testing';

/** Forgets the gateway's own record of a key, as if the gateway had died before storing it. */
export async function forgetGatewayRecord(stack: Stack, tenant: TestTenant, key: string) {
  await stack.sql('delete from gateway.idempotency_keys where tenant_id = $1 and key = $2', [tenant.tenantId, key]);
}

/** Resolves once a gateway claimed `key`: its first request is in flight (or answered). Up to 5 s, read every `everyMs`. */
export async function untilClaimed(stack: Stack, tenant: TestTenant, key: string, everyMs: number) {
  const claimed = async () =>
    (await stack.sql('select 1 from gateway.idempotency_keys where tenant_id = $1 and key = $2', [tenant.tenantId, key])).rows.length > 0;
  await until(`the claim of key ${key}`, claimed, { timeoutMs: 5_000, everyMs });
}

/** The retry is the recorded answer of the first attempt: same status, body and ETag, marked as a replay. */
export function expectReplayOf(retry: ApiResponse, first: ApiResponse) {
  expect(retry.status).toBe(first.status);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(retry.body).toEqual(first.body);
  expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
}

/**
 * Sends a keyed write, forgets the gateway's record and sends it again: the retry must be the
 * service's recorded answer. `body` is a JSON body, or builds each attempt's multipart body (a
 * retry may carry another file: only method and path are fingerprinted, contract §8). Returns the first answer.
 */
export async function writeAndRetry(
  stack: Stack,
  tenant: TestTenant,
  method: string,
  path: string,
  body?: unknown | ((attempt: number) => FormData),
): Promise<ApiResponse> {
  const key = crypto.randomUUID();
  const send = (attempt: number) =>
    tenant.request(method, path, {
      ...(typeof body === 'function' ? { raw: (body as (attempt: number) => FormData)(attempt) } : { body }),
      headers: { 'idempotency-key': key },
    });
  const first = await send(0);
  if (first.status >= 300) throw new Error(`${method} ${path} → ${first.status} ${first.text}`);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  await forgetGatewayRecord(stack, tenant, key);
  expectReplayOf(await send(1), first);
  return first;
}
