// The realistic mix of the crud-mix, spike and soak scenarios: mostly reads of contacts, some
// creates of contacts and orders with Idempotency-Key (retried with the same key on 5xx and
// 409 idempotency_key_in_use, so a write the client saw accepted is counted once), and small
// document uploads. Counters `accepted_*` feed the scale run's "no accepted write lost" check.
import { check, sleep } from 'k6';
import { Counter, Rate } from 'k6/metrics';
import { call, contactBody, dataOf, orderBody, smallFile, uid } from './api.js';

export const acceptedContacts = new Counter('accepted_contacts');
export const acceptedOrders = new Counter('accepted_orders');
export const acceptedDocuments = new Counter('accepted_documents');
export const replays = new Counter('idempotent_replays');
/** Retries of keyed writes (same key, after a 5xx, a connection error or 409 idempotency_key_in_use). */
export const writeRetries = new Counter('write_retries');
/** Keyed writes still without a final answer (5xx, connection error, 409 in use) after WRITE_RETRIES: their outcome is unknown. */
export const unsettledWrites = new Counter('unsettled_writes');
/** Share of operations that failed after their retries (what a careful client would report). */
export const opFailed = new Rate('op_failed');

const RETRIES = Number(__ENV.WRITE_RETRIES || 5);

/** Weighted operations; weights sum to 100. */
const operations = [
  [35, listContacts],
  [30, readContact],
  [15, createContact],
  [8, createOrder],
  [5, uploadDocument],
  [7, listOrders],
];

/**
 * Always-true thresholds on each operation's requests: k6 only reports sub-metrics that have a
 * threshold, and these give the per-endpoint latencies in the JSON summary (the table skips them).
 */
export const perEndpoint = Object.fromEntries(
  [
    'GET /v1/contacts',
    'GET /v1/contacts/{id}',
    'POST /v1/contacts',
    'POST /v1/orders',
    'POST /v1/contacts/{id}/documents',
    'GET /v1/orders',
  ].map((name) => [`http_req_duration{name:${name}}`, ['max>=0']]),
);

const pick = (list) => list[Math.floor(Math.random() * list.length)];

/** Runs one operation of the mix, chosen by weight, for a seeded tenant. */
export function mixIteration(seed) {
  let roll = Math.random() * 100;
  for (const [weight, op] of operations) {
    roll -= weight;
    if (roll < 0) return op(seed);
  }
  return listContacts(seed);
}

function listContacts(seed) {
  const page = 1 + Math.floor(Math.random() * 3);
  const r = call(seed.apiKey, 'GET', `/v1/contacts?per_page=20&page=${page}`, { name: 'GET /v1/contacts' });
  const ok = check(r, { 'list contacts 200': (x) => x.status === 200 && Array.isArray(dataOf(x)) });
  opFailed.add(!ok);
}

function readContact(seed) {
  const r = call(seed.apiKey, 'GET', `/v1/contacts/${pick(seed.contactIds)}`, { name: 'GET /v1/contacts/{id}' });
  const ok = check(r, { 'read contact 200': (x) => x.status === 200 && dataOf(x)?.id !== undefined });
  opFailed.add(!ok);
}

function listOrders(seed) {
  const r = call(seed.apiKey, 'GET', '/v1/orders?per_page=10&sort=-id', { name: 'GET /v1/orders' });
  opFailed.add(!check(r, { 'list orders 200': (x) => x.status === 200 }));
}

/**
 * Sends a write with an Idempotency-Key, retrying with the SAME key while the answer is a 5xx,
 * a connection error or 409 idempotency_key_in_use; returns the final response.
 */
export function idempotentWrite(seed, method, path, body, name) {
  const key = `k6-${uid()}`;
  let r;
  let settled = false;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    if (attempt > 0) writeRetries.add(1);
    r = call(seed.apiKey, method, path, { body, idempotencyKey: key, name });
    const inUse = r.status === 409 && String(r.body).includes('idempotency_key_in_use');
    settled = r.status !== 0 && r.status < 500 && !inUse;
    if (settled) break;
    if (attempt < RETRIES) sleep(Math.min(Number(r.headers['Retry-After'] || 0.5), 5) + Math.random() * 0.3);
  }
  if (!settled) unsettledWrites.add(1);
  if (r.headers['Idempotent-Replayed'] === 'true') replays.add(1);
  return r;
}

function createContact(seed) {
  const r = idempotentWrite(seed, 'POST', '/v1/contacts', contactBody(uid(), seed.userEmail), 'POST /v1/contacts');
  const ok = check(r, { 'create contact 201': (x) => x.status === 201 && dataOf(x)?.id > 0 });
  if (ok) acceptedContacts.add(1);
  opFailed.add(!ok);
}

function createOrder(seed) {
  const r = idempotentWrite(seed, 'POST', '/v1/orders', orderBody(seed, pick(seed.contactIds)), 'POST /v1/orders');
  const ok = check(r, { 'create order 201': (x) => x.status === 201 && typeof dataOf(x)?.reference === 'string' });
  if (ok) acceptedOrders.add(1);
  opFailed.add(!ok);
}

function uploadDocument(seed) {
  const contact = pick(seed.contactIds);
  const r = idempotentWrite(seed, 'POST', `/v1/contacts/${contact}/documents`, smallFile(uid()), 'POST /v1/contacts/{id}/documents');
  const ok = check(r, { 'upload document 201': (x) => x.status === 201 && dataOf(x)?.contact_id === contact });
  if (ok) acceptedDocuments.add(1);
  opFailed.add(!ok);
}
