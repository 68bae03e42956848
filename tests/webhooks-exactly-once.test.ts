// Contract §21 on every webhooks write: the service records a keyed write's answer in the write's
// own transaction, so a retry whose gateway record was lost (a gateway that died between the
// service's commit and its own store) gets the recorded answer and does nothing more — no second
// endpoint, rotation, test event or manual attempt; a refused write records nothing; one key sent
// several times at once executes once. Observed as a client and a receiver see it: the API, the
// delivery log and the webhooks that arrive.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ReceivedWebhook, type Receiver, type Stack, send, sharedStack, startReceiver, type TestTenant } from '@crm/testing';
import { forgetGatewayRecord, writeAndRetry } from './exactly-once.ts';
import { deliveries, deliveriesUntil } from './webhook-deliveries.ts';

let stack: Stack;
let receiver: Receiver;

beforeAll(async () => {
  stack = await sharedStack();
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
});

async function createWebhook(tenant: TestTenant, body: Record<string, unknown> = {}) {
  const res = await tenant.request('POST', '/v1/webhooks', { body: { url: `${receiver.url}/eo`, ...body } });
  if (res.status !== 201) throw new Error(`webhook creation failed: ${res.status} ${res.text}`);
  receiver.trust(res.body.data.secret);
  return res.body.data;
}

/** The `webhook.test` deliveries the receiver got for one endpoint. */
const testsFor = (webhookId: number): ReceivedWebhook[] =>
  receiver.received.filter((r) => r.body.type === 'webhook.test' && r.body.data?.webhook_id === webhookId);

/**
 * Sends one more test event (unkeyed) and waits until it is delivered and logged: anything a
 * write queued before it was due no later, so by then it would have been delivered too (the
 * positive control that makes "nothing more arrived" meaningful). Returns its event id.
 */
async function settle(tenant: TestTenant, webhookId: number): Promise<string> {
  const control = await tenant.request('POST', `/v1/webhooks/${webhookId}/test`);
  expect(control.status).toBe(202);
  const eventId = control.body.data.event_id;
  await deliveriesUntil(tenant, webhookId, (rows) => rows.some((d) => d.event_id === eventId && d.status === 'delivered'));
  await new Promise((r) => setTimeout(r, 200));
  return eventId;
}

describe('a retry whose gateway record was lost gets the recorded answer and does nothing more', () => {
  test('POST /webhooks: one endpoint, with the secret of the first answer', async () => {
    const tenant = await stack.createTenant();
    const created = (await writeAndRetry(stack, tenant, 'POST', '/v1/webhooks', { url: `${receiver.url}/eo-create`, events: ['*'] })).body
      .data;
    const list = await tenant.request('GET', '/v1/webhooks');
    expect(list.body.data.map((w: { id: number }) => w.id)).toEqual([created.id]);
    expect((await tenant.request('GET', `/v1/webhooks/${created.id}/secret`)).body.data.secret).toBe(created.secret);
  });

  test('PUT, PATCH and DELETE /webhooks/{id}', async () => {
    const tenant = await stack.createTenant();
    const hook = await createWebhook(tenant, { events: ['contact.created'] });
    const put = (await writeAndRetry(stack, tenant, 'PUT', `/v1/webhooks/${hook.id}`, { events: ['order.created'], description: 'put' }))
      .body.data;
    // The retry did not update again: the endpoint is still the first answer's version.
    expect((await tenant.request('GET', `/v1/webhooks/${hook.id}`)).body.data).toEqual(put);
    const patch = (await writeAndRetry(stack, tenant, 'PATCH', `/v1/webhooks/${hook.id}`, { enabled: false })).body.data;
    expect(patch).toMatchObject({ events: ['order.created'], description: 'put', enabled: false });
    expect((await tenant.request('GET', `/v1/webhooks/${hook.id}`)).body.data).toEqual(patch);
    // Without the service's record the retry would be a 404.
    expect((await writeAndRetry(stack, tenant, 'DELETE', `/v1/webhooks/${hook.id}`)).body).toEqual({ deleted: true });
    expect((await tenant.request('GET', `/v1/webhooks/${hook.id}`)).status).toBe(404);
  });

  test('rotate-secret rotates once: deliveries are signed with the first answer’s secret and the original one', async () => {
    const tenant = await stack.createTenant();
    const hook = await createWebhook(tenant);
    const rotated = (await writeAndRetry(stack, tenant, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`)).body.data.secret;
    expect(rotated).not.toBe(hook.secret);
    receiver.trust(rotated);
    expect((await tenant.request('GET', `/v1/webhooks/${hook.id}/secret`)).body.data.secret).toBe(rotated);
    // A second rotation would have made `rotated` the previous secret and dropped the original.
    const eventId = await settle(tenant, hook.id);
    const got = testsFor(hook.id).find((r) => r.body.id === eventId);
    expect(got?.verifiedWith.sort()).toEqual([hook.secret, rotated].sort());
  });

  test('test: one webhook.test event, sent once', async () => {
    const tenant = await stack.createTenant();
    const hook = await createWebhook(tenant, { events: ['product.deleted'] });
    const sent = await writeAndRetry(stack, tenant, 'POST', `/v1/webhooks/${hook.id}/test`);
    expect(sent.status).toBe(202);
    const eventId = sent.body.data.event_id;
    const control = await settle(tenant, hook.id);
    expect(testsFor(hook.id).map((r) => r.body.id)).toEqual(expect.arrayContaining([eventId, control]));
    expect(testsFor(hook.id)).toHaveLength(2);
    expect((await deliveries(tenant, hook.id)).map((d) => d.event_id).sort()).toEqual([eventId, control].sort());
  });

  test('delivery retry: one manual attempt, made once', async () => {
    const tenant = await stack.createTenant();
    const hook = await createWebhook(tenant);
    const eventId = (await tenant.request('POST', `/v1/webhooks/${hook.id}/test`)).body.data.event_id;
    const [first] = await deliveriesUntil(tenant, hook.id, (rows) => rows.some((d) => d.status === 'delivered'));
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const path = `/v1/webhooks/${hook.id}/deliveries/${first.id}/retry`;
    const queued = await tenant.request('POST', path, { headers });
    expect(queued.status).toBe(202);
    expect(queued.body.data).toMatchObject({ event_id: eventId, attempt: 2, status: 'pending' });
    // Made before the retry: a second manual retry now would queue attempt 3 rather than return the queued one.
    await deliveriesUntil(tenant, hook.id, (rows) => rows.some((d) => d.id === queued.body.data.id && d.status === 'delivered'));
    await forgetGatewayRecord(stack, tenant, headers['idempotency-key']);
    const retry = await tenant.request('POST', path, { headers });
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(queued.body);

    const control = await settle(tenant, hook.id);
    const log = await deliveries(tenant, hook.id);
    expect(log.filter((d) => d.event_id === eventId).map((d) => [d.attempt, d.status])).toEqual([
      [1, 'delivered'],
      [2, 'delivered'],
    ]);
    expect(testsFor(hook.id).map((r) => r.body.id)).toEqual([eventId, eventId, control]);
  });

  test('the same key with another request is refused by the service too (422 idempotency_key_reused), and writes nothing', async () => {
    const tenant = await stack.createTenant();
    const key = crypto.randomUUID();
    const first = await tenant.request('POST', '/v1/webhooks', {
      body: { url: `${receiver.url}/one` },
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    await forgetGatewayRecord(stack, tenant, key);
    const other = await tenant.request('POST', '/v1/webhooks', {
      body: { url: `${receiver.url}/two` },
      headers: { 'idempotency-key': key },
    });
    expect(other.status).toBe(422);
    expect(other.body.error.type).toBe('idempotency_key_reused');
    await forgetGatewayRecord(stack, tenant, key);
    const test = await tenant.request('POST', `/v1/webhooks/${first.body.data.id}/test`, { headers: { 'idempotency-key': key } });
    expect(test.status).toBe(422);
    expect(test.body.error.type).toBe('idempotency_key_reused');
    expect((await tenant.request('GET', '/v1/webhooks')).body.data.map((w: { url: string }) => w.url)).toEqual([`${receiver.url}/one`]);
    expect(await deliveries(tenant, first.body.data.id)).toEqual([]);
  });
});

/** Makes the service's record of this tenant's keyed writes fail (a trigger), until the returned function runs. */
async function failRecording(tenant: TestTenant): Promise<() => Promise<void>> {
  const trigger = `refuse_record_${crypto.randomUUID().replaceAll('-', '')}`;
  await stack.sql(`create or replace function webhooks.refuse_record() returns trigger language plpgsql
    as $$ begin raise exception 'the test refuses to record this answer'; end $$`);
  await stack.sql(`create trigger ${trigger} before insert on webhooks.idempotency_records for each row
    when (new.tenant_id = '${tenant.tenantId.replaceAll("'", "''")}') execute function webhooks.refuse_record()`);
  return async () => {
    await stack.sql(`drop trigger ${trigger} on webhooks.idempotency_records`);
  };
}

describe('the write and its record commit together', () => {
  test('when the record cannot be stored, every kind of write is undone with it (500), and a retry then runs once', async () => {
    const tenant = await stack.createTenant();
    const kept = await createWebhook(tenant, { events: ['contact.created'] });
    const doomed = await createWebhook(tenant);
    await tenant.request('POST', `/v1/webhooks/${kept.id}/test`);
    const [attempt] = await deliveriesUntil(tenant, kept.id, (rows) => rows.some((d) => d.status === 'delivered'));
    /** What a client and its receiver see: the endpoints with their secrets, the delivery log, the test events received. */
    const visible = async () => ({
      webhooks: (await tenant.request('GET', '/v1/webhooks')).body.data,
      secrets: await Promise.all(
        [kept.id, doomed.id].map(async (id) => (await tenant.request('GET', `/v1/webhooks/${id}/secret`)).body.data?.secret),
      ),
      log: await deliveries(tenant, kept.id),
      received: testsFor(kept.id).map((r) => r.body.id),
    });
    const writes: [string, string, unknown?][] = [
      ['POST', '/v1/webhooks', { url: `${receiver.url}/undone` }],
      ['PUT', `/v1/webhooks/${kept.id}`, { description: 'put' }],
      ['PATCH', `/v1/webhooks/${kept.id}`, { events: ['*'] }],
      ['DELETE', `/v1/webhooks/${doomed.id}`],
      ['POST', `/v1/webhooks/${kept.id}/rotate-secret`],
      ['POST', `/v1/webhooks/${kept.id}/test`],
      ['POST', `/v1/webhooks/${kept.id}/deliveries/${attempt.id}/retry`],
    ];
    const before = await visible();
    const keys = writes.map(() => crypto.randomUUID());
    const allow = await failRecording(tenant);
    try {
      for (const [i, [method, path, body]] of writes.entries()) {
        const res = await tenant.request(method, path, { body, headers: { 'idempotency-key': keys[i] as string } });
        expect([method, path, res.status, res.body.error?.type]).toEqual([method, path, 500, 'internal_error']);
      }
    } finally {
      await allow();
    }
    // Nothing was queued either: a test event or a manual attempt would arrive before this control.
    const control = await settle(tenant, kept.id);
    const after = await visible();
    expect(after).toEqual({
      ...before,
      log: [...before.log, ...after.log.filter((d: any) => d.event_id === control)],
      received: [...before.received, control],
    });

    // The gateway stores no 5xx, so the same keys run now — once each.
    for (const [i, [method, path, body]] of writes.entries()) {
      const res = await tenant.request(method, path, { body, headers: { 'idempotency-key': keys[i] as string } });
      expect([method, path, res.status < 300, res.headers.get('idempotent-replayed')]).toEqual([method, path, true, null]);
    }
  });
});

describe('a refused write records nothing', () => {
  test('a 422 of the service (a private target): the same key with a corrected body then creates', async () => {
    const tenant = await stack.createTenant();
    const headers = { 'idempotency-key': crypto.randomUUID() };
    const refused = await tenant.request('POST', '/v1/webhooks', { body: { url: 'http://10.1.2.3/hook' }, headers });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details[0].field).toBe('url');
    const created = await tenant.request('POST', '/v1/webhooks', { body: { url: `${receiver.url}/fixed` }, headers });
    expect(created.status).toBe(201);
    expect(created.headers.get('idempotent-replayed')).toBeNull();
    expect((await tenant.request('GET', '/v1/webhooks')).body.data.map((w: { id: number }) => w.id)).toEqual([created.body.data.id]);
  });

  test('a 409 (test on a disabled endpoint) and a 404 (retry of an unknown delivery): once possible, the same key executes', async () => {
    const tenant = await stack.createTenant();
    const hook = await createWebhook(tenant, { enabled: false });
    const testKey = { 'idempotency-key': crypto.randomUUID() };
    const conflict = await tenant.request('POST', `/v1/webhooks/${hook.id}/test`, { headers: testKey });
    expect(conflict.status).toBe(409);
    const retryKey = { 'idempotency-key': crypto.randomUUID() };
    const missing = await tenant.request('POST', `/v1/webhooks/${hook.id}/deliveries/2147483000/retry`, { headers: retryKey });
    expect(missing.status).toBe(404);
    // The gateway stores both (status < 500): forget its records so the retries reach the service.
    await forgetGatewayRecord(stack, tenant, testKey['idempotency-key']);
    await forgetGatewayRecord(stack, tenant, retryKey['idempotency-key']);

    expect((await tenant.request('PATCH', `/v1/webhooks/${hook.id}`, { body: { enabled: true } })).status).toBe(200);
    const sent = await tenant.request('POST', `/v1/webhooks/${hook.id}/test`, { headers: testKey });
    expect(sent.status).toBe(202);
    expect(sent.headers.get('idempotent-replayed')).toBeNull();
    await receiver.waitFor(() => testsFor(hook.id).some((r) => r.body.id === sent.body.data.event_id));
    const [attempt] = await deliveriesUntil(tenant, hook.id, (rows) => rows.some((d) => d.status === 'delivered'));
    const again = await tenant.request('POST', `/v1/webhooks/${hook.id}/deliveries/${attempt.id}/retry`, { headers: retryKey });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });

  test('a 412 (stale If-Match): the same key with the current ETag updates', async () => {
    const tenant = await stack.createTenant();
    const hook = await createWebhook(tenant);
    const stale = (await tenant.request('GET', `/v1/webhooks/${hook.id}`)).headers.get('etag') as string;
    expect((await tenant.request('PATCH', `/v1/webhooks/${hook.id}`, { body: { description: 'moved on' } })).status).toBe(200);
    const key = crypto.randomUUID();
    const refused = await tenant.request('PUT', `/v1/webhooks/${hook.id}`, {
      body: { description: 'mine' },
      headers: { 'idempotency-key': key, 'if-match': stale },
    });
    expect(refused.status).toBe(412);
    const current = (await tenant.request('GET', `/v1/webhooks/${hook.id}`)).headers.get('etag') as string;
    const updated = await tenant.request('PUT', `/v1/webhooks/${hook.id}`, {
      body: { description: 'mine' },
      headers: { 'idempotency-key': key, 'if-match': current },
    });
    expect(updated.status).toBe(200);
    expect(updated.headers.get('idempotent-replayed')).toBeNull();
    expect(updated.body.data.description).toBe('mine');
  });
});

describe('one key at once: one execution', () => {
  test('test through two gateway replicas: one event per key', async () => {
    const tenant = await stack.createTenant();
    const hook = await createWebhook(tenant);
    const replica = await stack.startGatewayReplica();
    const path = `/v1/webhooks/${hook.id}/test`;
    const eventIds = new Set<string>();
    for (let round = 0; round < 4; round++) {
      const headers = { 'idempotency-key': crypto.randomUUID() };
      const answers = await Promise.all([
        tenant.request('POST', path, { headers }),
        send(replica.url, 'POST', path, { headers: { ...headers, 'x-api-key': tenant.apiKey } }),
      ]);
      // The other request either waited for the answer (a replay) or found the key in use.
      const sent = answers.filter((a) => a.status === 202);
      expect(sent.length).toBeGreaterThanOrEqual(1);
      for (const a of answers) if (a.status !== 202) expect(a.body.error.type).toBe('idempotency_key_in_use');
      for (const a of sent) expect(a.body).toEqual(sent[0]?.body);
      eventIds.add(sent[0]?.body.data.event_id);
    }
    const control = await settle(tenant, hook.id);
    expect(
      testsFor(hook.id)
        .map((r) => r.body.id)
        .sort(),
    ).toEqual([...eventIds, control].sort());
  });

  test('straight to the service (no gateway store at all): the others wait on the key and replay the first', async () => {
    const tenant = await stack.createTenant();
    const headers = (key: string) => ({ 'x-internal-token': stack.internalToken, 'x-tenant-id': tenant.tenantId, 'idempotency-key': key });
    const createKey = crypto.randomUUID();
    const body = { url: `${receiver.url}/direct`, events: ['contact.created'] };
    const creations = await Promise.all(
      Array.from({ length: 4 }, () => stack.call('webhooks', 'POST', '/v1/webhooks', { body, headers: headers(createKey) })),
    );
    expect(creations.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(creations.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(3);
    for (const a of creations) expect(a.body).toEqual(creations[0]?.body);
    const hook = creations[0]?.body.data;
    receiver.trust(hook.secret);
    expect((await tenant.request('GET', '/v1/webhooks')).body.data.map((w: { id: number }) => w.id)).toEqual([hook.id]);

    const testKey = crypto.randomUUID();
    const tests = await Promise.all(
      Array.from({ length: 4 }, () => stack.call('webhooks', 'POST', `/v1/webhooks/${hook.id}/test`, { headers: headers(testKey) })),
    );
    expect(tests.map((a) => a.status)).toEqual([202, 202, 202, 202]);
    expect(tests.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(3);
    for (const a of tests) expect(a.body).toEqual(tests[0]?.body);
    const control = await settle(tenant, hook.id);
    expect(
      testsFor(hook.id)
        .map((r) => r.body.id)
        .sort(),
    ).toEqual([tests[0]?.body.data.event_id, control].sort());
  });
});
