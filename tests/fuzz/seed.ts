// The fuzz tenant's starting data, made through the API: contacts, opportunities, product
// categories, products with rates, orders, uploaded documents and webhook endpoints (aimed at a
// local receiver that answers 204), so generated paths can name real resources.
import type { Stack, TestTenant } from '@crm/testing';
import { samples, uploadToContact, uploadToOpportunity } from '../documents-fixtures.ts';
import type { ResourcePool } from './pool.ts';

export const OWNER_EMAIL = 'owner@fuzz.test';

/** A local HTTP server that accepts every webhook delivery with 204. */
export function startReceiver() {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(null, { status: 204 }) });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

/** A tenant with a budget no fuzz run reaches (contract §7 limits are not under test here). */
export function createFuzzTenant(stack: Stack): Promise<TestTenant> {
  return stack.createTenant({
    name: 'Fuzz',
    users: [{ email: OWNER_EMAIL, name: 'Fuzz Owner' }],
    limits: { read_per_minute: 1_000_000, write_per_minute: 1_000_000 },
  });
}

async function created(tenant: TestTenant, path: string, body: unknown): Promise<any> {
  const res = await tenant.request('POST', path, { body });
  if (res.status !== 201) throw new Error(`seeding POST ${path} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

async function listed(tenant: TestTenant, path: string): Promise<any[]> {
  const res = await tenant.request('GET', path);
  if (res.status !== 200) throw new Error(`seeding GET ${path} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

/** Creates the seed resources and puts them into the pool under their collections. */
export async function seedResources(tenant: TestTenant, pool: ResourcePool, receiverUrl: string): Promise<void> {
  const { contactId, opportunityId } = await seedSales(tenant, pool);
  await seedCatalog(tenant, pool);
  await seedOrders(tenant, pool, contactId);
  await seedDocuments(tenant, pool, contactId, opportunityId);
  for (const category of await listed(tenant, '/v1/document-categories')) pool.add('document-categories', category);
  const webhooks = [];
  for (let i = 1; i <= 2; i++) webhooks.push(await created(tenant, '/v1/webhooks', { url: `${receiverUrl}/seed-${i}`, events: ['*'] }));
  for (const webhook of webhooks) pool.add('webhooks', webhook);
  await seedDeliveries(tenant, pool, webhooks[0].id);
}

/** Three contacts and three opportunities of the first contact. */
async function seedSales(tenant: TestTenant, pool: ResourcePool): Promise<{ contactId: string; opportunityId: number }> {
  const contacts = [];
  for (let i = 1; i <= 3; i++) {
    const body = { name: `Seed Contact ${i}`, type: 'client', email: `seed${i}@fuzz.test`, cif: `B0000000${i}` };
    contacts.push(await created(tenant, '/v1/contacts', body));
  }
  const contactId = String(contacts[0].id);
  const opportunities = [];
  for (let i = 1; i <= 3; i++) {
    opportunities.push(
      await created(tenant, '/v1/opportunities', { name: `Seed Deal ${i}`, enterprise_identifier: contactId, amount: 100 * i }),
    );
  }
  for (const contact of contacts) pool.add('contacts', contact);
  for (const opportunity of opportunities) pool.add('opportunities', opportunity);
  return { contactId, opportunityId: opportunities[0].id };
}

/** A root category with a child, a spare one, and three products with two rates each. */
async function seedCatalog(tenant: TestTenant, pool: ResourcePool): Promise<void> {
  const root = await created(tenant, '/v1/product-categories', { name: 'Seed Root', reference: 'SEED-CAT-ROOT' });
  pool.add('product-categories', root);
  pool.add(
    'product-categories',
    await created(tenant, '/v1/product-categories', { name: 'Seed Child', reference: 'SEED-CAT-CHILD', parent_id: root.id }),
  );
  pool.add('product-categories', await created(tenant, '/v1/product-categories', { name: 'Seed Spare', reference: 'SEED-CAT-SPARE' }));
  for (let i = 1; i <= 3; i++) {
    const rates = [
      { sku: `SEED-SKU-${i}A`, price: 10 * i, cost: 4 * i, primary: true },
      { sku: `SEED-SKU-${i}B`, price: 12 * i },
    ];
    const product = { reference: `SEED-PROD-${i}`, name: `Seed Product ${i}`, vat: 21, product_category_ref: 'SEED-CAT-ROOT', rates };
    pool.add('products', await created(tenant, '/v1/products', product));
  }
}

async function seedOrders(tenant: TestTenant, pool: ResourcePool, contactId: string): Promise<void> {
  for (let i = 1; i <= 3; i++) {
    const order = {
      enterprise_identifier: contactId,
      user_email: OWNER_EMAIL,
      date_limit: '2026-12-31',
      state: 0,
      products: [{ reference: 'SEED-PROD-1', quantity: i }],
    };
    pool.add('orders', await created(tenant, '/v1/orders', order));
  }
}

async function seedDocuments(tenant: TestTenant, pool: ResourcePool, contactId: string, opportunityId: number): Promise<void> {
  const uploads = [
    () => uploadToContact(tenant, contactId, 'seed notes.txt', (samples.txt as () => Uint8Array)()),
    () => uploadToContact(tenant, contactId, 'seed image.png', (samples.png as () => Uint8Array)()),
    () => uploadToOpportunity(tenant, opportunityId, 'seed offer.pdf', (samples.pdf as () => Uint8Array)()),
    () => uploadToOpportunity(tenant, opportunityId, 'seed sheet.csv', (samples.csv as () => Uint8Array)()),
  ];
  for (const upload of uploads) {
    const res = await upload();
    if (res.status !== 201) throw new Error(`seeding an upload failed: ${res.status} ${res.text}`);
    pool.add('documents', res.body.data);
  }
}

/** Sends a test event to the first endpoint and waits for its delivery, so delivery ids exist. */
async function seedDeliveries(tenant: TestTenant, pool: ResourcePool, webhookId: number): Promise<void> {
  const res = await tenant.request('POST', `/v1/webhooks/${webhookId}/test`);
  if (res.status !== 202) throw new Error(`seeding a webhook test failed: ${res.status} ${res.text}`);
  for (let i = 0; i < 50; i++) {
    const deliveries = await listed(tenant, `/v1/webhooks/${webhookId}/deliveries`);
    if (deliveries.length > 0) {
      for (const d of deliveries) pool.add('deliveries', d);
      return;
    }
    await Bun.sleep(100);
  }
}
