// The document's request examples are executable (issue 17): every request body example of the
// served document is sent, as it is, through the running API — in an order that satisfies its
// references (the contact before its opportunity, the category before its product, the product
// before the order…) — and every answer must be 2xx and match the document. The webhook example
// points at a loopback receiver, and what it receives must match the document's `webhooks` section.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ApiResponse, type Receiver, type Stack, sharedStack, startReceiver, type TestTenant } from '@crm/testing';
import { deref, documentValidator, type Json, mediaExample, operationsOf, servedDocument } from './openapi-document.ts';

let stack: Stack;
let tenant: TestTenant;
let receiver: Receiver;
let doc: Json;

beforeAll(async () => {
  stack = await sharedStack();
  // The examples name the demo account's user (what `npm start` creates).
  tenant = await stack.createTenant({ users: [{ email: 'demo@example.com', name: 'Demo User' }] });
  receiver = await startReceiver();
  doc = await servedDocument(stack.gatewayUrl);
}, 180_000);

afterAll(async () => {
  await receiver?.close();
});

/**
 * The order the examples run in: the webhook first (so every later change is delivered to the
 * receiver), then what others refer to before what refers to it, then the updates.
 */
const ORDER = [
  'post /v1/webhooks',
  'put /v1/webhooks/{id}',
  'patch /v1/webhooks/{id}',
  'post /v1/contacts',
  'post /v1/contacts/batch',
  'post /v1/contacts/batch/upsert',
  'post /v1/product-categories',
  'post /v1/products',
  'post /v1/products/batch',
  'post /v1/products/batch/upsert',
  'post /v1/opportunities',
  'post /v1/opportunities/batch',
  'post /v1/orders',
  'post /v1/orders/batch',
  'post /v1/contacts/{identifier}/documents',
  'post /v1/opportunities/{id}/documents',
  'put /v1/contacts/{identifier}',
  'patch /v1/contacts/{identifier}',
  'put /v1/opportunities/{id}',
  'patch /v1/opportunities/{id}',
  'put /v1/product-categories/{id}',
  'patch /v1/product-categories/{id}',
  'put /v1/products/{reference}',
  'patch /v1/products/{reference}',
  'put /v1/orders/{reference}',
  'patch /v1/orders/{reference}',
];

/** The resource each collection's creation example made, for the paths of later examples. */
const created = new Map<string, Json>();

/** `/v1/contacts/{identifier}/documents` → the contact created by `POST /v1/contacts`; `{reference}` → its reference. */
function concretePath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_match, name: string, offset: number) => {
    const resource = created.get(path.slice(0, offset - 1));
    if (!resource) throw new Error(`${path}: nothing created at ${path.slice(0, offset - 1)} yet (fix ORDER)`);
    return encodeURIComponent(String(name === 'reference' ? resource.reference : resource.id));
  });
}

/** A minimal PDF: what the upload example's `file` stands for. */
const PDF = '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n';

async function send(method: string, path: string, op: Json): Promise<{ url: string; sent: unknown; res: ApiResponse }> {
  const url = concretePath(path);
  const content = deref(doc, op.requestBody).content as Json;
  const [type, media] = Object.entries<Json>(content)[0] as [string, Json];
  const example = structuredClone(mediaExample(doc, media)) as Json;
  if (example === undefined) throw new Error(`${method} ${path}: no request example`);
  if (type === 'multipart/form-data') {
    const form = new FormData();
    for (const [field, value] of Object.entries(example)) {
      if (field === 'file') form.append('file', new File([PDF], 'contract.pdf', { type: 'application/pdf' }));
      else form.append(field, String(value));
    }
    return { url, sent: example, res: await tenant.request(method.toUpperCase(), url, { raw: form }) };
  }
  // The webhook example's public URL, pointed at the test's loopback receiver (allowed in tests).
  if (path.startsWith('/v1/webhooks') && typeof example.url === 'string') example.url = receiver.url + new URL(example.url).pathname;
  return { url, sent: example, res: await tenant.request(method.toUpperCase(), url, { body: example }) };
}

describe('OpenAPI request examples run against the API', () => {
  test('every request body example is accepted (2xx) and answered as the document says', async () => {
    const validator = documentValidator(doc);
    const withBody = operationsOf(doc).filter(({ op }) => op.requestBody);
    const keys = withBody.map(({ method, path }) => `${method} ${path}`);
    // Every operation that takes a body is run; a new one needs its place in ORDER.
    expect(keys.filter((key) => !ORDER.includes(key))).toEqual([]);
    expect(ORDER.filter((key) => !keys.includes(key))).toEqual([]);

    const problems: string[] = [];
    const seen: string[] = [];
    for (const key of ORDER) {
      const { method, path, op } = withBody.find((o) => `${o.method} ${o.path}` === key) as (typeof withBody)[number];
      const { url, res } = await send(method, path, op);
      const label = `${method.toUpperCase()} ${url} → ${res.status}`;
      seen.push(label);
      if (res.status < 200 || res.status >= 300) {
        problems.push(`${label}: ${res.text.slice(0, 400)}`);
        continue;
      }
      const documented = deref(doc, op.responses[String(res.status)]);
      const schema = documented?.content?.['application/json']?.schema;
      if (!schema) problems.push(`${label}: status not documented with a JSON body`);
      else for (const problem of validator.problems(schema, res.body)) problems.push(`${label}: ${problem}`);
      if (method === 'post' && !path.endsWith('}') && res.body?.data && !Array.isArray(res.body.data)) {
        created.set(path, res.body.data);
        if (path === '/v1/webhooks') receiver.trust(res.body.data.secret);
      }
    }
    console.log(`examples: ${seen.length} requests\n${seen.join('\n')}`);
    expect(problems).toEqual([]);
    // The examples tell one story: the order of the example contact, priced from the example product when it was written.
    const order = await tenant.request('GET', '/v1/orders/ORD-2027-0001');
    expect(order.body.data).toMatchObject({ state: 2, total: 474.05, products: [{ reference: 'WIDGET-1', name: 'Widget' }] });
  }, 120_000);

  test('the webhook deliveries they caused match the webhooks section and verify with the secret', async () => {
    const hook = created.get('/v1/webhooks');
    expect(hook).toBeDefined();
    const sent = await tenant.request('POST', `/v1/webhooks/${hook?.id}/test`);
    expect(sent.status).toBe(202);
    // Every event of the account (the feed lists them all but webhook.test) reaches the receiver.
    const feed = await tenant.request('GET', '/v1/events?per_page=100');
    const ids = new Set<string>([...feed.body.data.map((e: Json) => e.id), sent.body.data.event_id]);
    expect(ids.size).toBeGreaterThan(20);
    await receiver.waitFor((all) => [...ids].every((id) => all.some((r) => r.body.id === id)), 60_000);

    const validator = documentValidator(doc);
    const problems: string[] = [];
    const types = new Set<string>();
    for (const delivery of receiver.received) {
      const type = delivery.body.type;
      types.add(type);
      const media = doc.webhooks?.[type]?.post?.requestBody?.content?.['application/json'];
      if (!media) {
        problems.push(`${type}: not in the webhooks section`);
        continue;
      }
      for (const problem of validator.problems(media.schema, delivery.body)) problems.push(`${type} ${delivery.body.id}: ${problem}`);
      for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
        if (!delivery.headers[header]) problems.push(`${type}: no ${header} header`);
      if (delivery.verifiedWith.length !== 1) problems.push(`${type} ${delivery.body.id}: signature does not verify with the secret`);
    }
    expect(problems).toEqual([]);
    for (const type of ['contact.created', 'contact.updated', 'product.created', 'order.created', 'order.state_changed', 'webhook.test'])
      expect(types).toContain(type);
  }, 90_000);
});
