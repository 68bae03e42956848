import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { freePort } from '@crm/stack';
import { type Receiver, type ReplyFn, type Stack, startReceiver, startStack, type TestTenant } from '@crm/testing';
import { deliveriesUntil } from './webhook-deliveries.ts';

// A stack of its own: a retry schedule of seconds and a short attempt timeout.
let stack: Stack;
let tenant: TestTenant;
const receivers: Receiver[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOK_RETRY_SCHEDULE: '1,1,1', WEBHOOK_TIMEOUT_MS: '1500', WEBHOOK_POLL_MS: '100' } });
  tenant = await stack.createTenant();
}, 180_000);

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await stack?.stop();
}, 60_000);

async function receiverWith(reply: ReplyFn) {
  const receiver = await startReceiver({ reply });
  receivers.push(receiver);
  return receiver;
}

async function webhookFor(url: string) {
  const res = await tenant.request('POST', '/v1/webhooks', { body: { url } });
  expect(res.status).toBe(201);
  return res.body.data as { id: number; secret: string };
}

async function sendTest(id: number): Promise<string> {
  const res = await tenant.request('POST', `/v1/webhooks/${id}/test`);
  expect(res.status).toBe(202);
  return res.body.data.event_id;
}

/** An endpoint's delivery log once `done` holds: up to 20 s, as some waits here span a whole retry schedule. */
const waitForLog = (id: number, done: (rows: any[]) => boolean) => deliveriesUntil(tenant, id, done, 20_000);

describe('retries', () => {
  test('5xx answers are retried on the schedule with the same webhook-id until a 2xx', async () => {
    const receiver = await receiverWith((_, i) => (i < 2 ? { status: 500, body: 'boom' } : { status: 204 }));
    const hook = await webhookFor(receiver.url);
    receiver.trust(hook.secret);
    const eventId = await sendTest(hook.id);

    const log = await waitForLog(hook.id, (rows) => rows.some((d) => d.status === 'delivered'));
    expect(log.map((d) => [d.attempt, d.status, d.status_code])).toEqual([
      [1, 'pending', 500],
      [2, 'pending', 500],
      [3, 'delivered', 204],
    ]);
    expect(log[0].response_excerpt).toBe('boom');
    const wait = Date.parse(log[0].next_attempt_at) - Date.parse(log[0].created_at);
    expect(wait).toBeGreaterThanOrEqual(790);
    expect(wait).toBeLessThanOrEqual(1300);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId, eventId]);
    for (const r of receiver.received) expect(r.verifiedWith).toEqual([hook.secret]);
    expect(receiver.received[2]!.receivedAt - receiver.received[1]!.receivedAt).toBeGreaterThanOrEqual(700);
  }, 30_000);

  test('after the last retry the delivery is failed and nothing more is sent', async () => {
    const receiver = await receiverWith(() => ({ status: 503 }));
    const hook = await webhookFor(receiver.url);
    await sendTest(hook.id);
    const log = await waitForLog(hook.id, (rows) => rows.some((d) => d.status === 'failed'));
    expect(log.map((d) => [d.attempt, d.status])).toEqual([
      [1, 'pending'],
      [2, 'pending'],
      [3, 'pending'],
      [4, 'failed'],
    ]);
    expect(log[3].next_attempt_at).toBeNull();
    await new Promise((r) => setTimeout(r, 2500));
    expect(receiver.received).toHaveLength(4);
  }, 30_000);

  test('Retry-After postpones the next attempt beyond the schedule', async () => {
    const receiver = await receiverWith((_, i) => (i === 0 ? { status: 429, headers: { 'retry-after': '4' } } : { status: 200 }));
    const hook = await webhookFor(receiver.url);
    await sendTest(hook.id);
    const log = await waitForLog(hook.id, (rows) => rows.length > 0);
    expect(log[0]).toMatchObject({ status: 'pending', status_code: 429 });
    expect(Date.parse(log[0].next_attempt_at) - Date.parse(log[0].created_at)).toBeGreaterThanOrEqual(3900);
    await waitForLog(hook.id, (rows) => rows.some((d) => d.status === 'delivered'));
    expect(receiver.received[1]!.receivedAt - receiver.received[0]!.receivedAt).toBeGreaterThanOrEqual(3900);
  }, 30_000);

  test('a timeout and a refused connection are logged as network errors without a status code', async () => {
    const slow = await receiverWith(() => ({ status: 200, delayMs: 3000 }));
    const slowHook = await webhookFor(slow.url);
    await sendTest(slowHook.id);
    const slowLog = await waitForLog(slowHook.id, (rows) => rows.length > 0);
    expect(slowLog[0]).toMatchObject({ attempt: 1, status: 'pending', status_code: null, response_excerpt: null });
    expect(slowLog[0].error).toContain('timeout');
    expect(slowLog[0].duration_ms).toBeGreaterThanOrEqual(1400);

    const closedHook = await webhookFor(`http://127.0.0.1:${await freePort()}/nobody`);
    await sendTest(closedHook.id);
    const closedLog = await waitForLog(closedHook.id, (rows) => rows.length > 0);
    expect(closedLog[0]).toMatchObject({ status_code: null, status: 'pending' });
    expect(closedLog[0].error).toContain('ECONNREFUSED');
    await tenant.request('PUT', `/v1/webhooks/${slowHook.id}`, { body: { enabled: false } });
    await tenant.request('PUT', `/v1/webhooks/${closedHook.id}`, { body: { enabled: false } });
  }, 30_000);

  test('a manual retry makes a new attempt with the same webhook-id and a fresh signature', async () => {
    let healthy = false;
    const receiver = await receiverWith(() => (healthy ? { status: 200 } : { status: 500 }));
    const hook = await webhookFor(receiver.url);
    receiver.trust(hook.secret);
    const eventId = await sendTest(hook.id);
    const failed = await waitForLog(hook.id, (rows) => rows.some((d) => d.status === 'failed'));
    healthy = true;
    await new Promise((r) => setTimeout(r, 1100)); // a new second, so the signed timestamp differs

    const retry = await tenant.request('POST', `/v1/webhooks/${hook.id}/deliveries/${failed[3].id}/retry`);
    expect(retry.status).toBe(202);
    expect(retry.body.data).toMatchObject({
      event_id: eventId,
      event_type: 'webhook.test',
      attempt: 5,
      status: 'pending',
      status_code: null,
    });
    const log = await waitForLog(hook.id, (rows) => rows.some((d) => d.status === 'delivered'));
    expect(log.at(-1)).toMatchObject({ id: retry.body.data.id, attempt: 5, status: 'delivered', status_code: 200 });

    const [last, previous] = [receiver.received.at(-1)!, receiver.received.at(-2)!];
    expect(last.headers['webhook-id']).toBe(eventId);
    expect(last.headers['webhook-timestamp']).not.toBe(previous.headers['webhook-timestamp']);
    expect(last.headers['webhook-signature']).not.toBe(previous.headers['webhook-signature']);
    expect(last.verifiedWith).toEqual([hook.secret]);
    expect(last.rawBody).toBe(previous.rawBody);

    const unknown = await tenant.request('POST', `/v1/webhooks/${hook.id}/deliveries/999999999/retry`);
    expect(unknown.status).toBe(404);
  }, 30_000);
});
