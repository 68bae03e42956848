import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '@crm/stack';
import { pollUntil, type Stack, startReceiver, startStack, type TestTenant, until } from '@crm/testing';
import { Webhook } from 'standardwebhooks';
import { formatWithBiome, SCHEMA_FILE, schemaSource } from '../clients/typescript/scripts/schema-source.ts';
import {
  type ClientOptions,
  CrmApiError,
  createClient,
  PreconditionFailedError,
  type RetryEvent,
  verifyWebhook,
  WebhookVerificationError,
} from '../clients/typescript/src/index.ts';
import { startLossyProxy } from '../clients/typescript/test/lossy-proxy.ts';

// The SDK (clients/typescript) against the real stack. A stack of this file's own: one test stops sales.
let stack: Stack;

beforeAll(async () => {
  // A 409 idempotency_key_in_use names the claim's remaining lock (upstream timeout + margin) as its
  // Retry-After, and the SDK waits all of it: shorter than the defaults (15 s + 5 s) to keep this file quick.
  stack = await startStack({ env: { UPSTREAM_TIMEOUT_MS: '4000', IDEMPOTENCY_CLAIM_MARGIN_MS: '1000' } });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** A tenant of its own and an SDK client for it; `retries` records every retry. */
async function world(options: Partial<ClientOptions> = {}, limits?: { write_per_minute?: number }) {
  const tenant = await stack.createTenant(limits ? { limits } : {});
  const retries: RetryEvent[] = [];
  const client = createClient({ baseUrl: stack.gatewayUrl, apiKey: tenant.apiKey, onRetry: (e) => retries.push(e), ...options });
  return { tenant, client, retries };
}

/** The tenant's audit records of one method and path (written in batches: waits until `count` are there). */
async function audited(tenant: TestTenant, method: string, path: string, count: number) {
  const query = `method=${method}&path=${encodeURIComponent(path)}&sort=occurred_at&per_page=100`;
  const records = async (): Promise<{ status: number; idempotency_key: string | null }[]> =>
    (await tenant.request('GET', `/v1/audit-logs?${query}`)).body.data;
  return pollUntil(`${count} audit records of ${method} ${path}`, records, (listed) => listed.length >= count, { everyMs: 200 });
}

test('the committed SDK types are what the served OpenAPI document generates', async () => {
  const document = await (await fetch(`${stack.gatewayUrl}/openapi/v1.yaml`)).text();
  const fresh = await schemaSource(document);
  const committed = formatWithBiome(readFileSync(SCHEMA_FILE, 'utf8'));
  if (fresh === committed) return;
  const [a, b] = [committed.split('\n'), fresh.split('\n')];
  const first = a.findIndex((text, i) => text !== b[i]);
  const line = first < 0 ? a.length : first;
  throw new Error(
    `the SDK types are stale: run npm run sdk:generate (clients/typescript/src/schema.d.ts differs from line ${line + 1}:\n` +
      `  committed: ${a[line]?.trim()}\n  generated: ${b[line]?.trim()})`,
  );
}, 60_000);

test('contacts: create, get, update, delete, typed, with errors carrying type and request id', async () => {
  const { client } = await world();
  const created = await client.contacts.create({
    name: 'Acme SDK Ltd',
    type: 'client',
    email: 'hello@acme.test',
    location: { city: 'Lyon' },
  });
  expect(created.status).toBe(201);
  expect(created.data).toMatchObject({ name: 'Acme SDK Ltd', email: 'hello@acme.test', location: { city: 'Lyon' } });
  expect(created.etag).toMatch(/^"/);
  expect(created.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  expect(created.requestId).toMatch(/^[0-9a-f-]{36}$/);

  const byName = await client.contacts.get('Acme SDK Ltd');
  expect(byName.data).toEqual(created.data);
  expect(byName.etag).toBe(created.etag);

  const updated = await client.contacts.update(created.data.id, { phone: '+33 1 23 45 67 89', location: null });
  expect(updated.data).toMatchObject({ id: created.data.id, phone: '+33 1 23 45 67 89', location: null });
  expect((await client.contacts.delete(created.data.id)).body).toEqual({ deleted: true });

  const missing = await client.contacts.get(created.data.id).catch((e) => e);
  expect(missing).toBeInstanceOf(CrmApiError);
  expect({ status: missing.status, type: missing.type, attempts: missing.attempts }).toEqual({
    status: 404,
    type: 'not_found',
    attempts: 1,
  });
  expect(missing.requestId).toMatch(/^[0-9a-f-]{36}$/);

  const invalid = await client.contacts.create({ name: '', type: 'client' }).catch((e) => e);
  expect({ status: invalid.status, type: invalid.type }).toEqual({ status: 422, type: 'validation_error' });
  expect(invalid.details.map((d: { field: string }) => d.field)).toContain('name');
});

describe('retries with the same Idempotency-Key', () => {
  test('answers lost after the write (a 503 page, then a reset connection): one contact, the third attempt replays it', async () => {
    const { tenant } = await world();
    const proxy = await startLossyProxy(stack.gatewayUrl, (n) => (['answer-503', 'reset'] as const)[n] ?? 'pass');
    try {
      const retries: RetryEvent[] = [];
      const client = createClient({ baseUrl: proxy.url, apiKey: tenant.apiKey, onRetry: (e) => retries.push(e) });
      const created = await client.contacts.create({ name: 'Lost Answer Ltd', type: 'client' });
      expect({ status: created.status, attempts: created.attempts, replayed: created.replayed }).toEqual({
        status: 201,
        attempts: 3,
        replayed: true,
      });
      expect(retries.map((r) => r.status)).toEqual([503, null]);
      expect(proxy.seen.map((s) => [s.method, s.status, s.loss])).toEqual([
        ['POST', 201, 'answer-503'],
        ['POST', 201, 'reset'],
        ['POST', 201, 'pass'],
      ]);
      expect(new Set(proxy.seen.map((s) => s.idempotencyKey))).toEqual(new Set([created.idempotencyKey]));
    } finally {
      await proxy.close();
    }
    const listed = await tenant.request('GET', '/v1/contacts?q=Lost%20Answer');
    expect(listed.body.pagination.total).toBe(1);
  });

  test('sales down: the gateway 503 is retried until sales is back, and the write happens once', async () => {
    const { tenant, client, retries } = await world({ retries: { maxRetries: 30, budgetMs: 60_000, maxDelayMs: 1_000 } });
    await stack.stopProcess('sales');
    let restarted: Promise<void> | undefined;
    try {
      const writing = client.contacts.create({ name: 'Outage Survivor Ltd', type: 'client' });
      await Bun.sleep(1_500);
      restarted = stack.restartProcess('sales');
      const created = await writing;
      expect(created.status).toBe(201);
      expect(created.attempts).toBeGreaterThan(1);
      expect(retries.length).toBe(created.attempts - 1);
      // 503 service_unavailable while sales is down (a 504 if it was caught half started).
      expect(retries.every((r) => [503, 504].includes(r.status as number) && r.idempotencyKey === created.idempotencyKey)).toBe(true);
    } finally {
      await (restarted ?? stack.restartProcess('sales'));
    }
    const posts = await audited(tenant, 'POST', '/v1/contacts', retries.length + 1);
    expect(posts.map((p) => p.status)).toEqual([...retries.map((r) => r.status as number), 201]);
    expect(new Set(posts.map((p) => p.idempotency_key)).size).toBe(1);
    expect((await tenant.request('GET', '/v1/contacts?q=Outage')).body.pagination.total).toBe(1);
  }, 90_000);

  test('409 idempotency_key_in_use while the first request with the key runs: waited out, then answered by its replay', async () => {
    const { tenant, client, retries } = await world();
    const key = `sdk-${crypto.randomUUID()}`;
    const body = { name: 'Concurrent Ltd', type: 'client' };
    // Sales frozen: the gateway has claimed the key for the first request and waits for its answer.
    const sales = stack.processes.sales.child.pid as number;
    process.kill(sales, 'SIGSTOP');
    let first: Promise<{ status: number; body: any }> | undefined;
    let second: ReturnType<typeof client.contacts.create> | undefined;
    try {
      first = tenant.request('POST', '/v1/contacts', { body, headers: { 'idempotency-key': key } });
      await Bun.sleep(300);
      second = client.contacts.create(body, { idempotencyKey: key });
      await until('the client to retry after the 409', async () => retries.length > 0, { timeoutMs: 5_000, everyMs: 50 });
    } finally {
      process.kill(sales, 'SIGCONT');
    }
    const [original, retried] = await Promise.all([first, second]);
    expect(original?.status).toBe(201);
    expect(retries[0]).toMatchObject({ status: 409, reason: 'idempotency_key_in_use', idempotencyKey: key });
    expect({ status: retried?.status, replayed: retried?.replayed, data: retried?.data }).toEqual({
      status: 201,
      replayed: true,
      data: original?.body.data,
    });
  }, 60_000);

  test('429: the client waits the Retry-After the gateway names, then the write goes through', async () => {
    const { tenant, client, retries } = await world({}, { write_per_minute: 20 });
    // Spend the burst with refused writes (422 still counts as a write).
    let refused = 0;
    for (let i = 0; i < 40 && refused === 0; i++)
      refused = (await tenant.request('POST', '/v1/contacts', { body: {} })).status === 429 ? 1 : 0;
    expect(refused).toBe(1);
    const started = Date.now();
    const created = await client.contacts.create({ name: 'Patient Ltd', type: 'client' });
    expect(created.status).toBe(201);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    const first = retries[0] as RetryEvent;
    expect({ status: first.status, reason: first.reason }).toEqual({ status: 429, reason: 'rate_limited' });
    expect(first.delayMs).toBeGreaterThanOrEqual(1000);
    expect(first.delayMs % 1000).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(first.delayMs);
  }, 60_000);
});

test('iterate walks 40 contacts 15 at a time: page mode first, then cursors; 40 distinct, in order', async () => {
  const urls: string[] = [];
  const { client } = await world({
    fetch: (url, init) => {
      urls.push(url);
      return fetch(url, init);
    },
  });
  const data = Array.from({ length: 40 }, (_, i) => ({ name: `Walker ${String(i).padStart(2, '0')}`, type: 'client' }));
  const batch = await client.request('post', '/v1/contacts/batch', { body: { data } });
  urls.length = 0;
  const walked = [];
  for await (const contact of client.contacts.iterate({ per_page: 15 })) walked.push(contact);
  expect(walked.map((c) => c.name)).toEqual(data.map((d) => d.name));
  expect(walked.map((c) => c.id)).toEqual((batch.data ?? []).map((c) => c.id));
  expect(new Set(walked.map((c) => c.id)).size).toBe(40);
  expect(urls.map((u) => new URL(u).searchParams.has('cursor'))).toEqual([false, true, true]);

  // One page at a time: `links` is the Link header (page URLs in page mode, the next cursor in cursor mode).
  const page = await client.contacts.list({ per_page: 15 });
  expect(Object.keys(page.links).sort()).toEqual(['first', 'last', 'next']);
  expect(new URL(page.links.next as string, stack.gatewayUrl).searchParams.get('page')).toBe('2');
  const next = await client.contacts.list({ per_page: 15, cursor: page.body.pagination.next_cursor as string });
  expect(next.body.pagination).toMatchObject({ total: null, has_more: true });
  expect(new URL(next.links.next as string, stack.gatewayUrl).searchParams.get('cursor')).toBe(next.body.pagination.next_cursor);
});

test('upload and download: the bytes come back equal, with type and file name', async () => {
  const { client } = await world();
  await client.contacts.create({ name: 'Files Ltd', type: 'client' });
  const bytes = new TextEncoder().encode('id;name\n1;Ünïcödé row\n');
  const uploaded = await client.documents.uploadToContact('Files Ltd', bytes, { filename: 'export 2026.csv', name: 'Export' });
  expect(uploaded.status).toBe(201);
  expect(uploaded.data).toMatchObject({ name: 'Export', extension: 'csv', size_bytes: bytes.length });
  expect(uploaded.idempotencyKey).toBeTruthy();

  const file = await client.download(uploaded.data.id);
  expect(file.contentType).toStartWith('text/csv');
  expect(file.filename).toBe('Export.csv'); // the display name with the stored extension
  // The gateway may re-chunk the stream (no Content-Length then; see tests/documents-uploads.test.ts).
  expect([null, bytes.length]).toContain(file.size);
  expect(await file.bytes()).toEqual(bytes);

  const asFile = new File([bytes], 'same.csv', { type: 'text/csv' });
  const second = await client.documents.uploadToContact('Files Ltd', asFile);
  expect(second.data.name).toBe('same');
  expect(await (await client.documents.download(second.data.id)).text()).toBe('id;name\n1;Ünïcödé row\n');
});

test('ETags: If-Match with a stale ETag is a PreconditionFailedError and changes nothing; the fresh one succeeds', async () => {
  const { client } = await world();
  const created = await client.contacts.create({ name: 'Versioned Ltd', type: 'client' });
  const first = await client.contacts.update(created.data.id, { phone: '1' }, { ifMatch: created.etag as string });
  expect(first.etag).not.toBe(created.etag);

  const stale = await client.contacts.update(created.data.id, { phone: '2' }, { ifMatch: created.etag as string }).catch((e) => e);
  expect(stale).toBeInstanceOf(PreconditionFailedError);
  expect({ status: stale.status, type: stale.type, attempts: stale.attempts }).toEqual({
    status: 412,
    type: 'precondition_failed',
    attempts: 1,
  });
  expect(stale.requestId).toMatch(/^[0-9a-f-]{36}$/);
  expect((await client.contacts.get(created.data.id)).data.phone).toBe('1');

  const current = await client.contacts.get(created.data.id);
  const second = await client.contacts.update(created.data.id, { phone: '2' }, { ifMatch: current.etag as string });
  expect(second.data.phone).toBe('2');
  expect(await client.contacts.getIfChanged(created.data.id, second.etag as string)).toBeNull();
  expect((await client.contacts.getIfChanged(created.data.id, created.etag as string))?.data.phone).toBe('2');
  const gone = await client.contacts.delete(created.data.id, { ifMatch: created.etag as string }).catch((e) => e);
  expect(gone).toBeInstanceOf(PreconditionFailedError);
});

test('verifyWebhook accepts what the webhooks service delivers and what standardwebhooks signs; rejects forgeries', async () => {
  const { client } = await world();
  const receiver = await startReceiver();
  try {
    const hook = await client.webhooks.create({ url: `${receiver.url}/crm`, events: ['contact.created'] });
    const secret = hook.data.secret;
    const contact = await client.contacts.create({ name: 'Signed Ltd', type: 'client' });
    const [delivery] = await receiver.waitFor((all) => all.some((r) => r.body.type === 'contact.created'));
    if (!delivery) throw new Error('no delivery');

    const event = await verifyWebhook(delivery.rawBody, delivery.headers, secret);
    expect(event).toMatchObject({ type: 'contact.created', data: { id: contact.data.id, name: 'Signed Ltd' } });
    expect(event.id).toBe(delivery.headers['webhook-id'] as string);
    expect(new Webhook(secret).verify(delivery.rawBody, delivery.headers as Record<string, string>)).toEqual(event);
    const rejected = (p: Promise<unknown>) => expect(p).rejects.toBeInstanceOf(WebhookVerificationError);
    await rejected(verifyWebhook(delivery.rawBody.replace('Signed Ltd', 'Forged Ltd'), delivery.headers, secret));
    await rejected(verifyWebhook(delivery.rawBody, delivery.headers, `whsec_${btoa('not the endpoint secret, 32 bytes')}`));
    await rejected(verifyWebhook(delivery.rawBody, delivery.headers, secret, { now: Date.now() + 600_000 }));

    const at = new Date(Date.now() - 10 * 60_000);
    const body = JSON.stringify({ id: 'evt_x', type: 'contact.updated', timestamp: at.toISOString(), data: { id: 1 } });
    const signed = {
      'webhook-id': 'evt_x',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('evt_x', at, body),
    };
    await rejected(verifyWebhook(body, signed, secret));
    expect((await verifyWebhook(body, signed, secret, { toleranceSeconds: 900 })).type).toBe('contact.updated');
  } finally {
    await receiver.close();
  }
});

describe('runtimes: the same SDK on Node 20 and Deno, one real request each', () => {
  const smoke = join(repoRoot, 'clients', 'typescript', 'test', 'smoke.mjs');
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'crm-sdk-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function check(command: string, args: string[], entry: string, name: string, runtime: RegExp) {
    const tenant = await stack.createTenant();
    const run = spawnSync(command, [...args, smoke, entry, stack.gatewayUrl, tenant.apiKey, name], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (run.status !== 0) throw new Error(`${command} failed (${run.status}): ${run.stderr}`);
    const seen = JSON.parse(run.stdout.trim().split('\n').at(-1) as string);
    expect(seen.runtime).toMatch(runtime);
    expect(seen).toMatchObject({ status: 201, found: [seen.id], notFound: { name: 'CrmApiError', status: 404, type: 'not_found' } });
    expect(seen.etag).toMatch(/^"/);
    const stored = await tenant.request('GET', `/v1/contacts/${seen.id}`);
    expect(stored.body.data.name).toBe(name);
  }

  test("Node 20 runs the build (tsc → dist/*.js; typechecking is npm run typecheck's job)", async () => {
    const tsc = spawnSync(
      join(repoRoot, 'node_modules', '.bin', 'tsc'),
      ['-p', 'clients/typescript/tsconfig.build.json', '--outDir', join(dir, 'dist'), '--noCheck', '--declaration', 'false'],
      {
        cwd: repoRoot,
        encoding: 'utf8',
      },
    );
    if (tsc.status !== 0) throw new Error(`tsc failed: ${tsc.stdout}${tsc.stderr}`);
    await check('node', [], pathToFileURL(join(dir, 'dist', 'index.js')).href, 'Node Runtime Ltd', /^node 2\d\./);
  }, 90_000);

  test('Deno runs the TypeScript source', async () => {
    const entry = pathToFileURL(join(repoRoot, 'clients', 'typescript', 'src', 'index.ts')).href;
    await check(
      join(repoRoot, 'node_modules', '.bin', 'deno'),
      ['run', '--allow-net=127.0.0.1', `--allow-read=${repoRoot}`],
      entry,
      'Deno Runtime Ltd',
      /^deno 2\./,
    );
  }, 90_000);
});
