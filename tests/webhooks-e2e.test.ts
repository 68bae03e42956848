import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ReceivedWebhook, type Receiver, type Stack, sharedStack, startReceiver, type TestTenant } from '@crm/testing';

let stack: Stack;
let tenant: TestTenant;
let receiver: Receiver;
let secret: string;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant({ users: [{ email: 'ann@acme.test', name: 'Ann Lee' }] });
  receiver = await startReceiver();
  const hook = await tenant.request('POST', '/v1/webhooks', { body: { url: `${receiver.url}/crm`, description: 'everything' } });
  expect(hook.status).toBe(201);
  secret = hook.body.data.secret;
  receiver.trust(secret);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
});

async function ok(method: string, path: string, options: Parameters<TestTenant['request']>[2] = {}, status = 200) {
  const res = await tenant.request(method, path, options);
  if (res.status !== status) throw new Error(`${method} ${path} → ${res.status} ${res.text}`);
  return res.body;
}

/** The one signed delivery of `type` whose data matches; fails if it is missing, duplicated or unverified. */
async function delivered(type: string, match: (data: any) => boolean): Promise<ReceivedWebhook> {
  const hits = await receiver.waitFor((all) => all.some((r) => r.body.type === type && match(r.body.data)), 20_000);
  const mine = hits.filter((r) => r.body.type === type && match(r.body.data));
  expect(mine).toHaveLength(1);
  const hook = mine[0] as ReceivedWebhook;
  expect(hook.verifiedWith).toEqual([secret]);
  expect(hook.headers['webhook-id']).toBe(hook.body.id);
  return hook;
}

describe('end to end: writes through the gateway arrive as signed webhooks', () => {
  test('contact, product, order (with a state change) and document events carry the resource', async () => {
    const contact = (await ok('POST', '/v1/contacts', { body: { name: 'Webhook Customer Ltd', type: 'client' } }, 201)).data;
    const contactUpdated = (await ok('PUT', `/v1/contacts/${contact.id}`, { body: { email: 'billing@customer.test' } })).data;

    await ok('POST', '/v1/product-categories', { body: { name: 'Hardware', reference: 'hardware' } }, 201);
    const product = (
      await ok(
        'POST',
        '/v1/products',
        {
          body: {
            reference: 'HOOK-1',
            name: 'Hook',
            vat: 21,
            product_category_ref: 'hardware',
            rates: [{ sku: 'HOOK-1-STD', cost: 1, price: 9.5 }],
          },
        },
        201,
      )
    ).data;
    const productUpdated = (await ok('PUT', '/v1/products/HOOK-1', { body: { name: 'Hook (large)' } })).data;

    const order = (
      await ok(
        'POST',
        '/v1/orders',
        {
          body: {
            enterprise_identifier: contact.id.toString(),
            user_email: 'ann@acme.test',
            date_limit: '2026-12-31',
            state: 1,
            products: [{ reference: 'HOOK-1', quantity: 2 }],
          },
        },
        201,
      )
    ).data;
    const orderUpdated = (await ok('PUT', `/v1/orders/${order.reference}`, { body: { state: 2 } })).data;

    const form = new FormData();
    form.set('file', new Blob([new TextEncoder().encode('signed webhooks\n')]), 'notes.txt');
    const document = (await ok('POST', `/v1/contacts/${contact.id}/documents`, { raw: form }, 201)).data;

    await ok('DELETE', `/v1/documents/${document.id}`);
    await ok('DELETE', `/v1/orders/${order.reference}`);
    await ok('DELETE', '/v1/products/HOOK-1');
    await ok('DELETE', `/v1/contacts/${contact.id}`);

    expect((await delivered('contact.created', (d) => d.id === contact.id)).body.data).toEqual(contact);
    expect((await delivered('contact.updated', (d) => d.id === contact.id)).body.data).toEqual(contactUpdated);
    expect((await delivered('contact.deleted', (d) => d.id === contact.id)).body.data.id).toBe(contact.id);

    expect((await delivered('product.created', (d) => d.id === product.id)).body.data).toEqual(product);
    expect((await delivered('product.updated', (d) => d.id === product.id)).body.data).toEqual(productUpdated);
    expect((await delivered('product.deleted', (d) => d.id === product.id)).body.data).toMatchObject({
      id: product.id,
      reference: 'HOOK-1',
    });

    expect((await delivered('order.created', (d) => d.id === order.id)).body.data).toEqual(order);
    expect((await delivered('order.updated', (d) => d.id === order.id)).body.data).toEqual(orderUpdated);
    const stateChanged = await delivered('order.state_changed', (d) => d.id === order.id);
    expect(stateChanged.body.data).toEqual({ ...orderUpdated, previous_state: 1 });
    expect((await delivered('order.deleted', (d) => d.id === order.id)).body.data).toMatchObject({
      id: order.id,
      reference: order.reference,
    });

    expect((await delivered('document.created', (d) => d.id === document.id)).body.data).toEqual(document);
    expect((await delivered('document.deleted', (d) => d.id === document.id)).body.data.id).toBe(document.id);

    const types = new Set(receiver.received.map((r) => r.body.type));
    for (const type of ['contact.created', 'product.created', 'order.state_changed', 'document.created'])
      expect(types.has(type)).toBe(true);
  }, 60_000);
});
