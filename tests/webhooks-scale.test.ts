import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { freePort, type ServiceProcess, spawnService, waitReady } from '@crm/stack';
import { type Receiver, type Stack, startReceiver, startStack, type TestTenant } from '@crm/testing';

// Its own stack: the test stops and restarts the webhooks service and adds a second replica.
let stack: Stack;
let replica: ServiceProcess | undefined;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startStack();
  receiver = await startReceiver();
}, 180_000);

afterAll(async () => {
  await replica?.stop();
  await receiver?.close();
  await stack?.stop();
}, 60_000);

async function startReplica(): Promise<ServiceProcess> {
  const port = await freePort();
  const proc = spawnService({
    name: 'webhooks',
    port,
    env: { ...stack.env, WEBHOOKS_PORT: String(port) },
    logFile: join(stack.logDir, `webhooks-replica-${port}.log`),
  });
  await waitReady(proc, 90_000);
  return proc;
}

async function createContacts(tenant: TestTenant, count: number, prefix: string): Promise<number[]> {
  const ids: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await tenant.request('POST', '/v1/contacts', { body: { name: `${prefix} ${i}`, type: 'client' } });
      if (res.status !== 201) throw new Error(`contact ${i}: ${res.status} ${res.text}`);
      ids.push(res.body.data.id);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return ids;
}

async function subscribe(tenant: TestTenant) {
  const res = await tenant.request('POST', '/v1/webhooks', { body: { url: receiver.url, events: ['contact.created'] } });
  expect(res.status).toBe(201);
  receiver.trust(res.body.data.secret);
  return res.body.data as { id: number; secret: string };
}

/** Deliveries of contact.created for these contact ids: how many times each arrived, and how many verified. */
function tally(contactIds: number[]) {
  const wanted = new Set(contactIds);
  const hits = receiver.received.filter((r) => r.body.type === 'contact.created' && wanted.has(r.body.data?.id));
  const perEvent = new Map<string, number>();
  for (const h of hits) perEvent.set(String(h.headers['webhook-id']), (perEvent.get(String(h.headers['webhook-id'])) ?? 0) + 1);
  return {
    total: hits.length,
    distinctContacts: new Set(hits.map((h) => h.body.data.id)).size,
    duplicates: [...perEvent.values()].filter((n) => n > 1).length,
    unverified: hits.filter((h) => h.verifiedWith.length !== 1).length,
  };
}

describe('scale and faults', () => {
  test('two webhooks replicas deliver each event to each endpoint once', async () => {
    replica = await startReplica();
    const tenant = await stack.createTenant();
    const hook = await subscribe(tenant);
    const ids = await createContacts(tenant, 300, 'Replica');
    await receiver.waitFor(() => tally(ids).distinctContacts === ids.length, 60_000);
    await new Promise((r) => setTimeout(r, 1500)); // a late duplicate would arrive by now
    expect(tally(ids)).toEqual({ total: 300, distinctContacts: 300, duplicates: 0, unverified: 0 });
    const { rows } = await stack.sql(
      `select count(*)::int as attempts, count(distinct event_id)::int as events, max(attempt) as max_attempt
       from webhooks.delivery_attempts where endpoint_id = $1`,
      [hook.id],
    );
    expect(rows[0]).toEqual({ attempts: 300, events: 300, max_attempt: 1 });
    await replica.stop();
    replica = undefined;
  }, 180_000);

  test('1 000 contacts written while the webhooks service is down all arrive once it is back, each verified, none twice', async () => {
    const tenant = await stack.createTenant();
    await subscribe(tenant);
    expect(await stack.stopProcess('webhooks')).toBe(0);
    const ids = await createContacts(tenant, 1000, 'Offline');
    expect(tally(ids).total).toBe(0);

    await stack.restartProcess('webhooks');
    await receiver.waitFor(() => tally(ids).distinctContacts === ids.length, 120_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(tally(ids)).toEqual({ total: 1000, distinctContacts: 1000, duplicates: 0, unverified: 0 });
  }, 300_000);
});
