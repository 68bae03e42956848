import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type EventType, eventDescriptions, eventPayloadErrors, eventPayloads, eventTypes } from '@crm/contracts';
import { type Receiver, type Stack, sharedStack, startReceiver, type TestTenant } from '@crm/testing';
import { deliveriesUntil } from './webhook-deliveries.ts';

let stack: Stack;
let tenant: TestTenant;
let receiver: Receiver;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  receiver = await startReceiver();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
});

async function createWebhook(t: TestTenant, body: Record<string, unknown>) {
  const res = await t.request('POST', '/v1/webhooks', { body });
  expect(res.status).toBe(201);
  receiver.trust(res.body.data.secret);
  return res.body.data;
}

const WEBHOOK_FIELDS = ['created_at', 'description', 'disabled_reason', 'enabled', 'events', 'id', 'updated_at', 'url'];

describe('endpoint management', () => {
  test('GET /webhooks/event-types lists every event type of the platform with its description and payload schema', async () => {
    const res = await tenant.request('GET', '/v1/webhooks/event-types');
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { type: EventType }) => e.type)).toEqual([...eventTypes]);
    for (const entry of res.body.data as { type: EventType; description: string; payload: unknown }[]) {
      expect(Object.keys(entry)).toEqual(['type', 'description', 'payload']);
      expect(entry.description).toBe(eventDescriptions[entry.type]);
      // The schema the services' events are checked against, as JSON Schema.
      expect(entry.payload).toEqual(JSON.parse(JSON.stringify(eventPayloads[entry.type])));
    }
    const byType = Object.fromEntries(res.body.data.map((e: { type: string; payload: any }) => [e.type, e.payload]));
    expect(byType['contact.deleted']).toMatchObject({ type: 'object', required: ['id'], properties: { id: { type: 'integer' } } });
    expect(byType['webhook.test'].required).toEqual(['webhook_id', 'message']);
    expect(byType['order.state_changed'].required).toContain('previous_state');
  }, 30_000);

  test('POST creates an endpoint and shows its whsec_ secret once; GET /secret shows it again', async () => {
    const res = await tenant.request('POST', '/v1/webhooks', {
      body: { url: `${receiver.url}/hooks`, events: ['contact.created'], description: 'CRM sync' },
    });
    expect(res.status).toBe(201);
    const hook = res.body.data;
    expect(Object.keys(hook).sort()).toEqual([...WEBHOOK_FIELDS, 'secret'].sort());
    expect(hook).toMatchObject({
      url: `${receiver.url}/hooks`,
      events: ['contact.created'],
      description: 'CRM sync',
      enabled: true,
      disabled_reason: null,
    });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(hook.secret.slice(6), 'base64')).toHaveLength(32);

    const got = await tenant.request('GET', `/v1/webhooks/${hook.id}`);
    expect(got.status).toBe(200);
    expect(Object.keys(got.body.data).sort()).toEqual(WEBHOOK_FIELDS);
    const secret = await tenant.request('GET', `/v1/webhooks/${hook.id}/secret`);
    expect(secret.body).toEqual({ data: { secret: hook.secret } });
  }, 30_000);

  test('events omitted or ["*"] subscribe to everything', async () => {
    const omitted = await createWebhook(tenant, { url: receiver.url });
    const star = await createWebhook(tenant, { url: receiver.url, events: ['*', 'contact.created'] });
    expect(omitted.events).toEqual(['*']);
    expect(star.events).toEqual(['*']);
    expect(omitted.description).toBeNull();
  }, 30_000);

  test('a non-http(s) URL and unknown event types are 422 naming each field', async () => {
    const res = await tenant.request('POST', '/v1/webhooks', {
      body: { url: 'ftp://example.test/x', events: ['contact.created', 'contact.exploded', 'nope'] },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.type).toBe('validation_error');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['url', 'events[1]', 'events[2]']);
    expect(res.body.error.message).toContain('events[1]');

    const missing = await tenant.request('POST', '/v1/webhooks', { body: { events: ['contact.created'], colour: 'red' } });
    expect(missing.status).toBe(422);
    const fields = missing.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toContain('url');
    expect(fields).toContain('colour');

    const notUrl = await tenant.request('POST', '/v1/webhooks', { body: { url: 'not a url' } });
    expect(notUrl.status).toBe(422);
    expect(notUrl.body.error.details).toEqual([{ field: 'url', message: expect.stringContaining('URL') }]);
  }, 30_000);

  test('list is paginated and tenant-scoped; another tenant sees 404', async () => {
    const own = await createTenantWithHooks(3);
    const list = await own.t.request('GET', '/v1/webhooks?per_page=2&page=2');
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ total: 3, per_page: 2, current_page: 2, last_page: 2, has_more: false, next_cursor: null });
    expect(list.body.data.map((h: { id: number }) => h.id)).toEqual([own.ids[2]]);

    const other = await stack.createTenant();
    for (const path of ['', '/secret', '/deliveries'])
      expect((await other.request('GET', `/v1/webhooks/${own.ids[0]}${path}`)).status).toBe(404);
    expect((await other.request('PUT', `/v1/webhooks/${own.ids[0]}`, { body: { enabled: false } })).status).toBe(404);
    expect((await other.request('DELETE', `/v1/webhooks/${own.ids[0]}`)).status).toBe(404);
    expect((await other.request('POST', `/v1/webhooks/${own.ids[0]}/rotate-secret`)).status).toBe(404);
    expect((await other.request('POST', `/v1/webhooks/${own.ids[0]}/test`)).status).toBe(404);
    expect((await other.request('GET', '/v1/webhooks')).body.data).toEqual([]);
    expect((await own.t.request('GET', '/v1/webhooks/abc')).status).toBe(404);
  }, 30_000);

  test('PUT and PATCH update partially, enabled toggles, DELETE removes', async () => {
    const hook = await createWebhook(tenant, { url: receiver.url, events: ['order.created'], description: 'orders' });
    const put = await tenant.request('PUT', `/v1/webhooks/${hook.id}`, {
      body: { events: ['order.created', 'order.state_changed'], enabled: false },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({
      url: receiver.url,
      description: 'orders',
      events: ['order.created', 'order.state_changed'],
      enabled: false,
    });
    const patch = await tenant.request('PATCH', `/v1/webhooks/${hook.id}`, { body: { enabled: true, description: null } });
    expect(patch.body.data).toMatchObject({ enabled: true, description: null, events: ['order.created', 'order.state_changed'] });
    const badPut = await tenant.request('PUT', `/v1/webhooks/${hook.id}`, { body: { events: ['order.shipped'] } });
    expect(badPut.status).toBe(422);
    expect(badPut.body.error.details[0].field).toBe('events[0]');

    expect((await tenant.request('DELETE', `/v1/webhooks/${hook.id}`)).body).toEqual({ deleted: true });
    expect((await tenant.request('GET', `/v1/webhooks/${hook.id}`)).status).toBe(404);
  }, 30_000);
});

async function createTenantWithHooks(count: number) {
  const t = await stack.createTenant();
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push((await createWebhook(t, { url: receiver.url })).id);
  return { t, ids };
}

describe('delivery', () => {
  test('POST /test sends a signed webhook.test whatever the filter, logged as delivered', async () => {
    const hook = await createWebhook(tenant, { url: `${receiver.url}/test-target`, events: ['product.deleted'] });
    const res = await tenant.request('POST', `/v1/webhooks/${hook.id}/test`);
    expect(res.status).toBe(202);
    const eventId = res.body.data.event_id;
    expect(eventId).toMatch(/^evt_/);

    const [got] = (await receiver.waitFor((all) => all.some((r) => r.body.id === eventId))).filter((r) => r.body.id === eventId);
    expect(got!.headers['webhook-id']).toBe(eventId);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toBe('crm-webhooks/1.0');
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(got!.verifiedWith).toEqual([hook.secret]);
    expect(Object.keys(got!.body)).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(got!.body).toMatchObject({ id: eventId, type: 'webhook.test', data: { webhook_id: hook.id } });
    expect(eventPayloadErrors('webhook.test', got!.body.data)).toEqual([]);
    expect(new Date(got!.body.timestamp).toISOString()).toBe(got!.body.timestamp);

    const log = await deliveriesUntil(tenant, hook.id, (rows) => rows.some((d) => d.status === 'delivered'));
    expect(log[0]).toEqual({
      id: expect.any(Number),
      event_id: eventId,
      event_type: 'webhook.test',
      attempt: 1,
      status: 'delivered',
      status_code: 200,
      error: null,
      response_excerpt: 'ok',
      duration_ms: expect.any(Number),
      created_at: expect.any(String),
      next_attempt_at: null,
    });
  }, 30_000);

  test('after rotate-secret deliveries carry both signatures; a receiver knowing either verifies', async () => {
    const hook = await createWebhook(tenant, { url: receiver.url });
    const rotated = await tenant.request('POST', `/v1/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.data.secret;
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(hook.secret);
    expect((await tenant.request('GET', `/v1/webhooks/${hook.id}/secret`)).body.data.secret).toBe(newSecret);
    receiver.trust(newSecret);

    const eventId = (await tenant.request('POST', `/v1/webhooks/${hook.id}/test`)).body.data.event_id;
    const got = (await receiver.waitFor((all) => all.some((r) => r.body.id === eventId))).find((r) => r.body.id === eventId)!;
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(got.verifiedWith.sort()).toEqual([hook.secret, newSecret].sort());
  }, 30_000);

  test('a 410 Gone disables the endpoint and fails the delivery', async () => {
    const gone = await startReceiver({ reply: () => ({ status: 410, body: 'gone' }) });
    try {
      const hook = await createWebhook(tenant, { url: gone.url });
      await tenant.request('POST', `/v1/webhooks/${hook.id}/test`);
      const log = await deliveriesUntil(tenant, hook.id, (rows) => rows.some((d) => d.status === 'failed'));
      expect(log[0]).toMatchObject({ attempt: 1, status: 'failed', status_code: 410, response_excerpt: 'gone', next_attempt_at: null });
      const after = await tenant.request('GET', `/v1/webhooks/${hook.id}`);
      expect(after.body.data.enabled).toBe(false);
      expect(after.body.data.disabled_reason).toContain('410');
      expect((await tenant.request('POST', `/v1/webhooks/${hook.id}/test`)).status).toBe(409);
    } finally {
      await gone.close();
    }
  }, 30_000);

  test('a redirect is not followed: logged as a failed attempt with a retry scheduled', async () => {
    const redirecting = await startReceiver({ reply: () => ({ status: 302, headers: { location: receiver.url } }) });
    try {
      const hook = await createWebhook(tenant, { url: redirecting.url });
      const eventId = (await tenant.request('POST', `/v1/webhooks/${hook.id}/test`)).body.data.event_id;
      const log = await deliveriesUntil(tenant, hook.id, (rows) => rows.length > 0);
      expect(log[0]).toMatchObject({ attempt: 1, status: 'pending', status_code: 302, error: 'redirects are not followed' });
      expect(Date.parse(log[0].next_attempt_at) - Date.parse(log[0].created_at)).toBeGreaterThan(3000);
      expect(redirecting.received).toHaveLength(1);
      expect(receiver.received.some((r) => r.body.id === eventId)).toBe(false);
      await tenant.request('DELETE', `/v1/webhooks/${hook.id}`);
    } finally {
      await redirecting.close();
    }
  }, 30_000);

  test('contact events reach only endpoints whose filter matches, with the contact in data', async () => {
    const t = await stack.createTenant();
    const created = await createWebhook(t, { url: `${receiver.url}/created`, events: ['contact.created'] });
    const deleted = await createWebhook(t, { url: `${receiver.url}/deleted`, events: ['contact.deleted'] });
    const contact = await t.request('POST', '/v1/contacts', { body: { name: `Filter Ltd ${crypto.randomUUID()}`, type: 'client' } });
    expect(contact.status).toBe(201);
    const got = await receiver.waitFor((all) =>
      all.some((r) => r.body.type === 'contact.created' && r.body.data?.id === contact.body.data.id),
    );
    const hits = got.filter((r) => r.body.data?.id === contact.body.data.id);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.body.data).toEqual(contact.body.data);
    expect(hits[0]!.verifiedWith).toEqual([created.secret]);
    const deletedLog = await t.request('GET', `/v1/webhooks/${deleted.id}/deliveries`);
    expect(deletedLog.body.data).toEqual([]);
  }, 30_000);
});
