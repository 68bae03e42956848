// The gateway's reads to sales, catalog and webhooks, and its writes there under an
// Idempotency-Key with a JSON body or none, go through its own keep-alive HTTP/1.1 client
// (UPSTREAM_READ_CLIENT=http1, the default on Bun): a client sees exactly what the fetch path
// gives, and connections are reused across requests. Writes without a key, which are not safe
// to send twice, stay with fetch.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Stack, send, sharedStack, type TestTenant } from '@crm/testing';

let stack: Stack;
let tenant: TestTenant;
let own: Awaited<ReturnType<Stack['startGatewayReplica']>>;
let viaFetch: Awaited<ReturnType<Stack['startGatewayReplica']>>;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  [own, viaFetch] = await Promise.all([stack.startGatewayReplica(), stack.startGatewayReplica({ UPSTREAM_READ_CLIENT: 'fetch' })]);
}, 180_000);

afterAll(async () => {
  await Promise.all([own?.stop(), viaFetch?.stop()]);
});

async function counter(name: string): Promise<number> {
  const text = await (await fetch(`${own.opsUrl}/metrics`)).text();
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
}

const opened = () => counter('gateway_upstream_connections_opened_total');
const sentByOwnClient = () => counter('gateway_upstream_client_requests_total');

/** What a client can see of an answer, the per-request headers aside. */
function visible(response: { status: number; headers: Headers; text: string }) {
  const headers = [...response.headers].filter(([name]) => !['date', 'ratelimit'].includes(name));
  return { status: response.status, headers: headers.sort(), text: response.text };
}

test('reads through the own client answer byte for byte what the fetch path answers', async () => {
  const created = await tenant.request('POST', '/v1/contacts', {
    body: { name: 'Upstream Client Ltd', type: 'client', email: 'uc@example.test' },
  });
  expect(created.status).toBe(201);
  const id = created.body.data.id as number;
  const key = { 'x-api-key': tenant.apiKey };
  const etag = created.headers.get('etag') as string;
  const cases: [string, string, Record<string, string>][] = [
    ['GET', `/v1/contacts/${id}`, {}],
    ['HEAD', `/v1/contacts/${id}`, {}],
    ['GET', `/v1/contacts/${id}`, { 'if-none-match': etag }],
    ['GET', '/v1/contacts?per_page=2', {}],
    ['GET', '/v1/contacts/999999999', {}],
    ['GET', '/v1/contacts?per_page=abc', {}],
    ['GET', '/v1/products?per_page=2', {}],
    ['GET', '/v1/webhooks', {}],
  ];
  for (const [method, path, headers] of cases) {
    // One request id for both, so that error bodies (which carry it) compare too.
    const same = { ...key, ...headers, 'x-request-id': crypto.randomUUID() };
    const [a, b] = await Promise.all([send(own.url, method, path, { headers: same }), send(viaFetch.url, method, path, { headers: same })]);
    expect({ method, path, ...visible(a) }).toEqual({ method, path, ...visible(b) });
  }
  // The cases cover the shapes that matter: a body, none (HEAD, 304), a Link header, errors.
  const statuses = await Promise.all(
    cases.map(([method, path, headers]) => send(own.url, method, path, { headers: { ...key, ...headers } })),
  );
  expect(statuses.map((r) => r.status)).toEqual([200, 200, 304, 200, 404, 422, 200, 200]);
});

test('forty reads in a row open one connection, not forty', async () => {
  const before = await opened();
  expect(before).toBeGreaterThanOrEqual(0);
  for (let i = 0; i < 40; i += 1) {
    const response = await send(own.url, 'GET', '/v1/contacts?per_page=1', { headers: { 'x-api-key': tenant.apiKey } });
    expect(response.status).toBe(200);
  }
  expect((await opened()) - before).toBeLessThanOrEqual(1);
  // Reads in parallel open at most one connection each, then reuse them.
  const burst = async () =>
    Promise.all(
      Array.from({ length: 8 }, () => send(own.url, 'GET', '/v1/contacts?per_page=1', { headers: { 'x-api-key': tenant.apiKey } })),
    );
  await burst();
  const afterFirstBurst = await opened();
  await burst();
  await burst();
  expect((await opened()) - afterFirstBurst).toBeLessThanOrEqual(2);
});

test('keyed writes with a JSON body or none go through the own client and answer what the fetch path answers', async () => {
  const key = { 'x-api-key': tenant.apiKey };
  /** A keyed write's sequence on one replica: create, replay, update, a refused body, delete. */
  async function keyedWrites(url: string, tag: string) {
    const idem = (step: string) => ({ ...key, 'idempotency-key': `upstream-${tag}-${step}-${crypto.randomUUID()}` });
    const createKey = idem('create');
    const body = { name: `Keyed Ñandú ${tag} ${crypto.randomUUID()}`, type: 'client' };
    const created = await send(url, 'POST', '/v1/contacts', { headers: createKey, body });
    const replayed = await send(url, 'POST', '/v1/contacts', { headers: createKey, body });
    const id = created.body.data.id as number;
    const updated = await send(url, 'PATCH', `/v1/contacts/${id}`, { headers: idem('update'), body: { comments: 'via the gateway' } });
    const requestId = crypto.randomUUID();
    const refused = await send(url, 'POST', '/v1/contacts', {
      headers: { ...idem('refused'), 'x-request-id': requestId },
      body: { type: 'nope' },
    });
    const deleted = await send(url, 'DELETE', `/v1/contacts/${id}`, { headers: idem('delete') });
    const gone = await send(url, 'GET', `/v1/contacts/${id}`, { headers: key });
    return { created, replayed, updated, refused, deleted, gone, body };
  }

  const before = await sentByOwnClient();
  const mine = await keyedWrites(own.url, 'own');
  // Create, update, the refused create, the delete and the read after it went upstream through
  // the own client (the replay was answered from the gateway's record).
  expect((await sentByOwnClient()) - before).toBe(5);
  const theirs = await keyedWrites(viaFetch.url, 'fetch');

  for (const run of [mine, theirs]) {
    expect(run.created.status).toBe(201);
    expect(run.created.body.data.name).toBe(run.body.name);
    expect(run.replayed.status).toBe(201);
    expect(run.replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(run.replayed.text).toBe(run.created.text);
    expect(run.updated.status).toBe(200);
    expect(run.updated.body.data.comments).toBe('via the gateway');
    expect(run.refused.status).toBe(422);
    expect(run.deleted.status).toBe(200);
    expect(run.gone.status).toBe(404);
  }
  const names = (response: { headers: Headers }) => [...response.headers.keys()].filter((name) => name !== 'date').sort();
  for (const step of ['created', 'replayed', 'updated', 'refused', 'deleted'] as const) {
    expect({ step, headers: names(mine[step]) }).toEqual({ step, headers: names(theirs[step]) });
  }
  // The refused body's error names the same fields either way (its request id differs).
  const fields = (response: { body: any }) => response.body.error.details;
  expect(fields(mine.refused)).toEqual(fields(theirs.refused));

  // A write without a key is not safe to send twice: it goes through fetch.
  const unkeyedBefore = await sentByOwnClient();
  const unkeyed = await send(own.url, 'POST', '/v1/contacts', {
    headers: key,
    body: { name: `Unkeyed ${crypto.randomUUID()}`, type: 'client' },
  });
  expect(unkeyed.status).toBe(201);
  expect(await sentByOwnClient()).toBe(unkeyedBefore);
});
