import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type NatsServer, type Receiver, type Stack, startNatsServer, startReceiver, startStack } from '@crm/testing';

// A NATS server of the test's own, stopped and started again while contacts are being written.
let stack: Stack;
let receiver: Receiver;
let nats: NatsServer;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  nats = await startNatsServer();
  stack = await startStack({ natsUrl: nats.url, env: { WEBHOOK_RETRY_SCHEDULE: '1,1,1' } });
  receiver = await startReceiver();
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  await nats?.close();
}, 60_000);

test('a NATS restart in the middle of the writes loses no webhook: every contact.created arrives once, verified', async () => {
  const tenant = await stack.createTenant();
  const hook = await tenant.request('POST', '/v1/webhooks', { body: { url: receiver.url, events: ['contact.created'] } });
  expect(hook.status).toBe(201);
  receiver.trust(hook.body.data.secret);

  const ids: number[] = [];
  const write = async (n: number, label: string) => {
    for (let i = 0; i < n; i++) {
      const res = await tenant.request('POST', '/v1/contacts', { body: { name: `${label} ${i}`, type: 'client' } });
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
  };
  await write(60, 'Before');
  await nats.stop();
  await write(60, 'During'); // accepted while NATS is down: the events wait in the outbox
  await nats.start();
  await write(60, 'After');

  const wanted = new Set(ids);
  const hits = () => receiver.received.filter((r) => r.body.type === 'contact.created' && wanted.has(r.body.data?.id));
  await receiver.waitFor(() => new Set(hits().map((h) => h.body.data.id)).size === ids.length, 60_000);
  await sleep(1500); // a late duplicate would arrive by now
  const delivered = hits();
  expect(new Set(delivered.map((h) => h.body.data.id)).size).toBe(180);
  expect(delivered.length).toBe(180);
  expect(new Set(delivered.map((h) => String(h.headers['webhook-id']))).size).toBe(180);
  expect(delivered.filter((h) => h.verifiedWith.length !== 1)).toEqual([]);
}, 150_000);
