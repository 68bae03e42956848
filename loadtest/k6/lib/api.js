// A thin client for the CRM API as k6 sees it: every request goes through `call`, which tags
// it with a low-cardinality `name` (so per-endpoint timings stay readable) and a `phase`
// (`setup` requests are kept out of the thresholds, which filter on `phase:main`).
import http from 'k6/http';

export const GATEWAY_URL = (__ENV.GATEWAY_URL || 'http://127.0.0.1:8080').replace(/\/$/, '');

/** The tenants handed over by the orchestrator (`loadtest/run.ts`) as JSON in `TENANTS`. */
export function tenants() {
  if (!__ENV.TENANTS) throw new Error('TENANTS is not set (run through `npm run loadtest`)');
  return JSON.parse(__ENV.TENANTS);
}

/** A unique-enough id for names and idempotency keys (k6 has no crypto.randomUUID in every mode). */
export function uid() {
  const iteration = typeof __ITER === 'undefined' ? 's' : __ITER;
  return `${Date.now().toString(36)}-${__VU}-${iteration}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Sends one request to the gateway with the tenant's key; `body` objects go as JSON. */
export function call(key, method, path, { body, headers = {}, name, phase = 'main', idempotencyKey, timeout = '30s' } = {}) {
  const h = { 'x-api-key': key, ...headers };
  let payload = body;
  if (body !== undefined && typeof body === 'object' && !(body instanceof ArrayBuffer) && !isMultipart(body)) {
    payload = JSON.stringify(body);
    h['content-type'] = 'application/json';
  }
  if (idempotencyKey) h['idempotency-key'] = idempotencyKey;
  const tags = { name: name || routeName(method, path), phase };
  return http.request(method, GATEWAY_URL + path, payload === undefined ? null : payload, { headers: h, tags, timeout });
}

function isMultipart(body) {
  return Object.values(body).some((v) => v && typeof v === 'object' && 'data' in v && 'filename' in v);
}

/** `GET /v1/contacts/123` → `GET /v1/contacts/{id}`: digits and keys become placeholders. */
export function routeName(method, path) {
  const clean = path
    .split('?')[0]
    .split('/')
    .map((part, i) => (i > 2 && /^(\d+|ORD-\d+|[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*)$/.test(part) ? '{id}' : part))
    .join('/');
  return `${method} ${clean}`;
}

/** The parsed JSON body, or undefined when it is not JSON. */
export function json(response) {
  try {
    return response.json();
  } catch {
    return undefined;
  }
}

/** `response.json().data`, or undefined. */
export function dataOf(response) {
  const body = json(response);
  return body && typeof body === 'object' ? body.data : undefined;
}

/** A contact create body that passes validation (type `client` exists in every tenant). */
export function contactBody(label, userEmail) {
  return {
    name: `LT ${label}`,
    type: 'client',
    email: `lt-${label}@example.test`.toLowerCase(),
    is_person: false,
    cif: `B${Math.floor(Math.random() * 1e8)}`,
    phone: '+34 600 000 000',
    comments: 'created by k6',
    users: userEmail ? [userEmail] : [],
    location: { city: 'Madrid', country: 'ES', postal: '28001' },
    extra_fields: { source: 'k6' },
  };
}

/** An order create body for a seeded contact and product. */
export function orderBody(seed, contactId) {
  return {
    enterprise_identifier: String(contactId),
    user_email: seed.userEmail,
    date_limit: '2030-01-31',
    state: 0,
    comments: 'k6 order',
    products: [{ reference: seed.productReference, quantity: 2, discount: 10 }],
  };
}

/** A small text file as a multipart body for the upload endpoints. */
export function smallFile(label) {
  return { file: http.file(`k6 upload ${label}\n`.repeat(8), `note-${label}.txt`, 'text/plain'), name: `k6 note ${label}` };
}
