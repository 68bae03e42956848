// smoke: every public endpoint once, in a realistic order, with one check per call. One VU, one
// iteration; the run fails unless every check passes.
import { check, group, sleep } from 'k6';
import http from 'k6/http';
import { call, contactBody, dataOf, GATEWAY_URL, json, routeName, smallFile, tenants, uid } from './lib/api.js';
import { summaryWriter } from './lib/summary.js';

export const options = {
  scenarios: { smoke: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '3m' } },
  thresholds: { checks: ['rate==1'], 'http_req_duration{phase:main}': ['p(95)<2000'] },
};

const tenant = tenants()[0];
const key = tenant.api_key;

/** Calls one endpoint and checks its status (plus an optional predicate on the response). */
function hit(method, path, status, { predicate, ...opts } = {}) {
  const r = call(key, method, path, opts);
  const label = `${opts.name || routeName(method, path)} → ${status}`;
  check(r, { [label]: (x) => x.status === status && (!predicate || predicate(x)) });
  if (r.status !== status) console.warn(`${label}: got ${r.status} ${String(r.body).slice(0, 300)}`);
  return r;
}

const id = (r) => dataOf(r)?.id;

export default function smoke() {
  const tag = uid();
  const catalog = group('catalog', () => catalogFlow(tag));
  const sales = group('sales', () => salesFlow(tag, catalog));
  const docs = group('documents', () => documentsFlow(sales));
  group('webhooks', () => webhooksFlow());
  group('platform', () => platformFlow());
  group('cleanup', () => cleanup(catalog, sales, docs));
}

function catalogFlow(tag) {
  const root = hit('POST', '/v1/product-categories', 201, { body: { name: 'Root', reference: `root-${tag}` } });
  const child = hit('POST', '/v1/product-categories', 201, { body: { name: 'Child', reference: `child-${tag}`, parent_id: id(root) } });
  hit('GET', '/v1/product-categories', 200, { predicate: (r) => Array.isArray(dataOf(r)) });
  hit('GET', `/v1/product-categories/${id(root)}`, 200, { predicate: (r) => dataOf(r)?.children?.length === 1 });
  hit('PUT', `/v1/product-categories/${id(child)}`, 200, { body: { name: 'Child renamed' } });
  const reference = `SM-${tag}`;
  const product = {
    reference,
    name: 'Smoke product',
    vat: 21,
    product_category_ref: `child-${tag}`,
    rates: [{ sku: `${reference}-A`, cost: 4, price: 10, primary: true }],
  };
  hit('POST', '/v1/products', 201, { body: product });
  hit('GET', '/v1/products?per_page=5', 200);
  hit('GET', `/v1/products/${reference}`, 200, {
    name: 'GET /v1/products/{reference}',
    predicate: (r) => dataOf(r)?.category?.id === id(child),
  });
  hit('PUT', `/v1/products/${reference}`, 200, { name: 'PUT /v1/products/{reference}', body: { stock: 7 } });
  const batch = [1, 2].map((i) => ({
    ...product,
    reference: `${reference}-B${i}`,
    rates: [{ sku: `${reference}-B${i}-A`, cost: 1, price: 2 }],
  }));
  hit('POST', '/v1/products/batch', 201, { body: { data: batch }, predicate: (r) => dataOf(r)?.length === 2 });
  return { rootId: id(root), childId: id(child), reference, batchRefs: batch.map((p) => p.reference) };
}

function salesFlow(tag, catalog) {
  hit('GET', '/v1/users', 200, { predicate: (r) => dataOf(r)?.some((u) => u.email === tenant.user_email) });
  hit('GET', '/v1/contacts/types', 200, { predicate: (r) => dataOf(r)?.some((t) => t.reference === 'client') });
  const body = contactBody(`smoke-${tag}`, tenant.user_email);
  const idem = `smoke-${tag}`;
  const contact = hit('POST', '/v1/contacts', 201, { body, idempotencyKey: idem });
  hit('POST', '/v1/contacts', 201, {
    name: 'POST /v1/contacts (replay)',
    body,
    idempotencyKey: idem,
    predicate: (r) => r.headers['Idempotent-Replayed'] === 'true' && id(r) === id(contact),
  });
  const contactId = id(contact);
  hit('GET', `/v1/contacts?q=${encodeURIComponent(`smoke-${tag}`)}`, 200, { predicate: (r) => json(r)?.pagination?.total === 1 });
  hit('GET', `/v1/contacts/${contactId}`, 200, { predicate: (r) => dataOf(r)?.location?.city === 'Madrid' });
  hit('PUT', `/v1/contacts/${contactId}`, 200, { body: { phone: '+34 611 111 111' } });
  hit('PATCH', `/v1/contacts/${contactId}`, 200, { body: { comments: 'patched' } });
  hit('POST', '/v1/contacts/batch', 201, { body: { data: [contactBody(`b1-${tag}`), contactBody(`b2-${tag}`)] } });
  const opp = hit('POST', '/v1/opportunities', 201, {
    body: { name: 'Smoke deal', enterprise_identifier: String(contactId), amount: 1000 },
  });
  hit('GET', `/v1/opportunities?enterprise_id=${contactId}`, 200);
  hit('GET', `/v1/opportunities/${id(opp)}`, 200);
  hit('PUT', `/v1/opportunities/${id(opp)}`, 200, { body: { status: 'won', probability: 100 } });
  hit('POST', '/v1/opportunities/batch', 201, { body: { data: [{ name: 'Batch deal', enterprise_identifier: String(contactId) }] } });
  const orderBody = {
    enterprise_identifier: String(contactId),
    user_email: tenant.user_email,
    opportunity_id: id(opp),
    date_limit: '2030-06-30',
    state: 1,
    products: [{ reference: catalog.reference, quantity: 3 }],
  };
  const order = hit('POST', '/v1/orders', 201, { body: orderBody, idempotencyKey: `order-${tag}` });
  const ref = dataOf(order)?.reference;
  hit('GET', `/v1/orders?enterprise_id=${contactId}`, 200);
  hit('GET', `/v1/orders/${ref}`, 200, { name: 'GET /v1/orders/{reference}', predicate: (r) => dataOf(r)?.products?.length === 1 });
  hit('PUT', `/v1/orders/${ref}`, 200, {
    name: 'PUT /v1/orders/{reference}',
    body: { state: 2 },
    predicate: (r) => dataOf(r)?.states?.length === 2,
  });
  hit('POST', '/v1/orders/batch', 201, { body: { data: [{ ...orderBody, opportunity_id: undefined }] } });
  return { contactId, opportunityId: id(opp), orderRef: ref };
}

function documentsFlow(sales) {
  hit('GET', '/v1/document-categories', 200);
  const upload = hit('POST', `/v1/contacts/${sales.contactId}/documents`, 201, { body: smallFile('smoke') });
  const docId = id(upload);
  hit('GET', `/v1/contacts/${sales.contactId}/documents`, 200, { predicate: (r) => dataOf(r)?.length === 1 });
  hit('GET', `/v1/documents?contact_id=${sales.contactId}`, 200);
  hit('GET', `/v1/documents/${docId}`, 200, { predicate: (r) => dataOf(r)?.extension === 'txt' });
  hit('GET', `/v1/documents/${docId}/content`, 200, { predicate: (r) => String(r.body).startsWith('k6 upload smoke') });
  hit('DELETE', `/v1/contacts/${sales.contactId}/documents/${docId}`, 200, { predicate: (r) => dataOf(r)?.contact_id === null });
  hit('PUT', `/v1/contacts/${sales.contactId}/documents/${docId}`, 200, { predicate: (r) => dataOf(r)?.contact_id === sales.contactId });
  const oppDoc = hit('POST', `/v1/opportunities/${sales.opportunityId}/documents`, 201, { body: smallFile('opp') });
  hit('PUT', `/v1/opportunities/${sales.opportunityId}/documents/${docId}`, 200);
  hit('GET', `/v1/opportunities/${sales.opportunityId}/documents?include=metadata`, 200, { predicate: (r) => dataOf(r)?.length === 2 });
  hit('DELETE', `/v1/opportunities/${sales.opportunityId}/documents/${docId}`, 200, { predicate: (r) => json(r)?.detached === true });
  return { docIds: [docId, id(oppDoc)] };
}

function webhooksFlow() {
  const target = __ENV.WEBHOOK_TARGET;
  hit('GET', '/v1/webhooks/event-types', 200, { predicate: (r) => JSON.stringify(json(r)).includes('contact.created') });
  const hook = hit('POST', '/v1/webhooks', 201, {
    body: { url: target || 'http://127.0.0.1:9/none', events: ['contact.created'], description: 'smoke' },
    predicate: (r) => String(dataOf(r)?.secret).startsWith('whsec_'),
  });
  const hookId = id(hook);
  hit('GET', '/v1/webhooks', 200);
  hit('GET', `/v1/webhooks/${hookId}`, 200);
  hit('PUT', `/v1/webhooks/${hookId}`, 200, { body: { description: 'smoke (edited)', enabled: true } });
  hit('GET', `/v1/webhooks/${hookId}/secret`, 200);
  hit('POST', `/v1/webhooks/${hookId}/rotate-secret`, 200, { predicate: (r) => String(dataOf(r)?.secret).startsWith('whsec_') });
  hit('POST', `/v1/webhooks/${hookId}/test`, 202, { predicate: (r) => Boolean(dataOf(r)?.event_id) });
  let deliveries = [];
  for (let i = 0; i < 40 && deliveries.length === 0; i++) {
    sleep(0.25);
    deliveries = dataOf(call(key, 'GET', `/v1/webhooks/${hookId}/deliveries`, { phase: 'poll' })) || [];
  }
  hit('GET', `/v1/webhooks/${hookId}/deliveries`, 200, { predicate: (r) => dataOf(r)?.length >= 1 });
  if (deliveries[0]) hit('POST', `/v1/webhooks/${hookId}/deliveries/${deliveries[0].id}/retry`, 202);
  else check(null, { 'POST /v1/webhooks/{id}/deliveries/{id}/retry → 202': () => false });
  hit('DELETE', `/v1/webhooks/${hookId}`, 200, { predicate: (r) => json(r)?.deleted === true });
}

function platformFlow() {
  hit('GET', '/v1/health', 200);
  hit('GET', '/v1/audit-logs?per_page=5', 200, { predicate: (r) => dataOf(r)?.length > 0 });
  hit('GET', '/v1/contacts/999999999', 404, { predicate: (r) => json(r)?.error?.type === 'not_found' });
  const anonymous = http.get(`${GATEWAY_URL}/v1/contacts`, { tags: { name: 'GET /v1/contacts (no key)', phase: 'main' } });
  check(anonymous, { 'GET /v1/contacts without key → 401': (r) => r.status === 401 });
  const spec = http.get(`${GATEWAY_URL}/openapi/v1.yaml`, { tags: { name: 'GET /openapi/v1.yaml', phase: 'main' } });
  check(spec, { 'GET /openapi/v1.yaml → 200': (r) => r.status === 200 && String(r.body).includes('openapi: 3.1') });
  const docs = http.get(`${GATEWAY_URL}/docs`, { tags: { name: 'GET /docs', phase: 'main' } });
  check(docs, { 'GET /docs → 200': (r) => r.status === 200 });
}

function cleanup(catalog, sales, docs) {
  for (const docId of docs.docIds) hit('DELETE', `/v1/documents/${docId}`, 200, { predicate: (r) => json(r)?.deleted === true });
  hit('DELETE', `/v1/orders/${sales.orderRef}`, 200, { name: 'DELETE /v1/orders/{reference}' });
  hit('DELETE', `/v1/opportunities/${sales.opportunityId}`, 200);
  hit('DELETE', `/v1/contacts/${sales.contactId}`, 200);
  hit('GET', `/v1/contacts/${sales.contactId}`, 404, { name: 'GET /v1/contacts/{id} (deleted)' });
  hit('DELETE', `/v1/products/${catalog.reference}`, 200, { name: 'DELETE /v1/products/{reference}' });
  for (const ref of catalog.batchRefs) call(key, 'DELETE', `/v1/products/${ref}`, { phase: 'cleanup' });
  hit('DELETE', `/v1/product-categories/${catalog.childId}`, 200);
  hit('DELETE', `/v1/product-categories/${catalog.rootId}`, 200);
}

export const handleSummary = summaryWriter();
