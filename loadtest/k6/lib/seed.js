// Test data every mixed scenario needs, created in k6's setup() with the tenant's own key:
// a product (so orders have a line) and a pool of contacts to read, order for and upload to.
import { fail } from 'k6';
import { Counter } from 'k6/metrics';
import { call, contactBody, dataOf, uid } from './api.js';

/** Contacts created by setup(), so row counts can be compared with what k6 saw accepted. */
const seededContacts = new Counter('seeded_contacts');

/** Creates a category, a product and `contacts` contacts for one tenant; returns their ids. */
export function seedTenant(tenant, contacts = 50) {
  const key = tenant.api_key;
  const tag = uid();
  const opts = (name) => ({ phase: 'setup', name });
  const category = call(key, 'POST', '/v1/product-categories', {
    ...opts('seed category'),
    body: { name: `LT category ${tag}`, reference: `lt-cat-${tag}` },
  });
  const product = call(key, 'POST', '/v1/products', {
    ...opts('seed product'),
    body: {
      reference: `LT-${tag}`,
      name: `Load test product ${tag}`,
      vat: 21,
      product_category_ref: `lt-cat-${tag}`,
      rates: [{ sku: `LT-${tag}-STD`, cost: 5, price: 12.5, primary: true }],
    },
  });
  const ids = [];
  for (let start = 0; start < contacts; start += 100) {
    const items = [];
    for (let i = start; i < Math.min(contacts, start + 100); i++) items.push(contactBody(`${tag}-${i}`, tenant.user_email));
    const batch = call(key, 'POST', '/v1/contacts/batch', { ...opts('seed contacts'), body: { data: items } });
    const created = batch.status === 201 ? dataOf(batch) : undefined;
    if (Array.isArray(created)) {
      for (const c of created) ids.push(c.id);
      continue;
    }
    for (const item of items) {
      const one = call(key, 'POST', '/v1/contacts', { ...opts('seed contacts'), body: item });
      if (one.status === 201) ids.push(dataOf(one).id);
    }
  }
  seededContacts.add(ids.length);
  if (ids.length === 0) fail(`seeding contacts failed for tenant ${tenant.tenant_id}`);
  const productOk = category.status === 201 && product.status === 201;
  if (!productOk) console.warn(`seeding the catalog failed (${category.status}/${product.status}); order writes will fail`);
  return { apiKey: key, userEmail: tenant.user_email, contactIds: ids, productReference: `LT-${tag}` };
}
