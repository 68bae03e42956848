// Contract §19 on every webhooks route: NUL, integer ranges, timestamps, unknown fields, booleans,
// event types, content types and UTF-8, each refused with the stated status and one 422 naming
// every field; a refused write leaves no endpoint, event or delivery behind; the database holds the
// same bounds; and nothing from outside the API (an event on the stream, a receiver's answer) can
// make the consumer or the worker fail in a loop.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newEventId } from '@crm/contracts';
import { createDb, migrate } from '@crm/db';
import { pollUntil, type Receiver, type Stack, sharedStack, startReceiver, type TestTenant } from '@crm/testing';
import { sql } from 'kysely';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { migrations } from '../services/webhooks/src/db/migrations/index.ts';
import { deliveriesUntil } from './webhook-deliveries.ts';

let stack: Stack;
let tenant: TestTenant;
let receiver: Receiver;
let hook: { id: number; secret: string; url: string; events: string[]; description: string | null; enabled: boolean };

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
  receiver = await startReceiver();
  hook = await createWebhook(tenant, { url: `${receiver.url}/kept`, events: ['contact.created'], description: 'kept' });
}, 120_000);

afterAll(async () => {
  await receiver?.close();
});

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
const MAX_INT = 2147483647;
const details = (res: { body: any }) => res.body.error?.details as { field: string; message: string }[];

async function createWebhook(t: TestTenant, body: Record<string, unknown>) {
  const res = await t.request('POST', '/v1/webhooks', { body });
  expect(res.status).toBe(201);
  receiver.trust(res.body.data.secret);
  return res.body.data;
}

/** What the tenant has in the webhooks schema: endpoints, events, queued deliveries, logged attempts. */
async function stored(t: TestTenant) {
  const count = async (table: string) =>
    (await stack.sql(`select count(*)::int as n from webhooks.${table} where tenant_id = $1`, [t.tenantId])).rows[0].n;
  return {
    endpoints: await count('endpoints'),
    events: await count('events'),
    tasks: await count('delivery_tasks'),
    attempts: await count('delivery_attempts'),
  };
}
const NOTHING = { endpoints: 0, events: 0, tasks: 0, attempts: 0 };

/** The kept webhook as the API shows it, to prove a refused write changed nothing. */
const keptHook = async () => (await tenant.request('GET', `/v1/webhooks/${hook.id}`)).body.data;

describe('NUL (U+0000)', () => {
  test('in url, description, events[i] or a key of a body → 422 naming the field; nothing stored or changed', async () => {
    const t = await stack.createTenant();
    const before = await keptHook();
    const url = `${receiver.url}/x`;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ url: `${receiver.url}/a\u0000b` }, 'url', NUL_MESSAGE],
      [{ url, description: 'a\u0000b' }, 'description', NUL_MESSAGE],
      [{ url, events: ['contact.created', 'contact.updated\u0000'] }, 'events[1]', NUL_MESSAGE],
      [{ url, 'enabled\u0000': true }, 'enabled\\u0000', 'is not a known field'],
    ];
    for (const [body, field, message] of cases) {
      const created = await t.request('POST', '/v1/webhooks', { body });
      expect([field, created.status, details(created)]).toEqual([field, 422, [{ field, message }]]);
      for (const method of ['PUT', 'PATCH']) {
        const updated = await tenant.request(method, `/v1/webhooks/${hook.id}`, { body });
        expect([method, field, updated.status, details(updated)]).toEqual([method, field, 422, [{ field, message }]]);
      }
    }
    expect(await stored(t)).toEqual(NOTHING);
    expect(await keptHook()).toEqual(before);
  });

  test('in any query parameter, known or not, of every route → 422 naming it', async () => {
    for (const path of [
      '/v1/webhooks?x=%00',
      '/v1/webhooks?updated_since=%00',
      '/v1/webhooks?sort=id%00',
      '/v1/webhooks/event-types?x=a%00',
      `/v1/webhooks/${hook.id}?x=%00`,
      `/v1/webhooks/${hook.id}/secret?x=%00`,
      `/v1/webhooks/${hook.id}/deliveries?x=%00`,
    ]) {
      const res = await tenant.request('GET', path);
      const name = new URL(path, 'http://x').searchParams.keys().next().value as string;
      expect([path, res.status, details(res)]).toEqual([path, 422, [{ field: name, message: NUL_MESSAGE }]]);
    }
    const filters = await tenant.request('GET', `/v1/webhooks/${hook.id}/deliveries?event_id=evt%00&status=%00`);
    expect(filters.status).toBe(422);
    expect(
      details(filters)
        .map((d) => d.field)
        .sort(),
    ).toEqual(['event_id', 'status']);
  });

  test('in a numeric path id → 404', async () => {
    for (const [method, path] of [
      ['GET', `/v1/webhooks/${hook.id}%00`],
      ['DELETE', '/v1/webhooks/%00'],
      ['POST', `/v1/webhooks/${hook.id}%00/test`],
      ['GET', `/v1/webhooks/%00${hook.id}/deliveries`],
      ['POST', `/v1/webhooks/${hook.id}/deliveries/1%00/retry`],
    ] as const) {
      const res = await tenant.request(method, path);
      expect([method, path, res.status, res.body.error.type]).toEqual([method, path, 404, 'not_found']);
    }
    expect((await keptHook()).id).toBe(hook.id);
  });
});

describe('integers', () => {
  const badIds = ['0', '-1', String(MAX_INT + 1), '99999999999999999999', '1.5', '1e3', 'abc', '%20', '0x10'];

  test('a webhook id outside 1..2147483647 (or not a number) is not found on every route; nothing changes', async () => {
    const t = await stack.createTenant();
    for (const id of badIds) {
      for (const [method, path, body] of [
        ['GET', `/v1/webhooks/${id}`],
        ['PUT', `/v1/webhooks/${id}`, { enabled: false }],
        ['PATCH', `/v1/webhooks/${id}`, { description: 'x' }],
        ['DELETE', `/v1/webhooks/${id}`],
        ['GET', `/v1/webhooks/${id}/secret`],
        ['POST', `/v1/webhooks/${id}/rotate-secret`],
        ['POST', `/v1/webhooks/${id}/test`],
        ['GET', `/v1/webhooks/${id}/deliveries`],
        ['POST', `/v1/webhooks/${id}/deliveries/1/retry`],
        ['POST', `/v1/webhooks/${hook.id}/deliveries/${id}/retry`],
      ] as const) {
        const res = await t.request(method, path, body ? { body } : {});
        expect([method, path, res.status, res.body.error?.type]).toEqual([method, path, 404, 'not_found']);
      }
    }
    // In range but nobody's: still 404, and a refused test event or retry queues nothing.
    expect((await t.request('GET', `/v1/webhooks/${MAX_INT}`)).status).toBe(404);
    expect((await t.request('POST', `/v1/webhooks/${MAX_INT}/test`)).status).toBe(404);
    expect((await tenant.request('POST', `/v1/webhooks/${hook.id}/deliveries/${MAX_INT}/retry`)).status).toBe(404);
    expect(await stored(t)).toEqual(NOTHING);
  });

  test('page and per_page on both lists: out of range → 422 stating the bound; the largest page answers an empty page', async () => {
    for (const list of ['/v1/webhooks', `/v1/webhooks/${hook.id}/deliveries`]) {
      for (const [query, field, message] of [
        [`page=${MAX_INT + 1}`, 'page', `must be at most ${MAX_INT}`],
        ['page=99999999999999999999', 'page', `must be at most ${MAX_INT}`],
        ['page=0', 'page', 'must be at least 1'],
        ['page=-3', 'page', 'must be at least 1'],
        ['page=1.5', 'page', 'must be an integer'],
        ['page=two', 'page', 'must be an integer'],
        ['per_page=0', 'per_page', 'must be at least 1'],
        ['per_page=101', 'per_page', 'must be at most 100'],
        ['per_page=1e2', 'per_page', 'must be an integer'],
      ] as const) {
        const res = await tenant.request('GET', `${list}?${query}`);
        expect([list, query, res.status, details(res)]).toEqual([list, query, 422, [{ field, message }]]);
      }
      const both = await tenant.request('GET', `${list}?page=0&per_page=500&sort=colour`);
      expect(details(both).map((d) => d.field)).toEqual(['per_page', 'page', 'sort']);
      const last = await tenant.request('GET', `${list}?page=${MAX_INT}&per_page=100`);
      expect(last.status).toBe(200);
      expect(last.body.data).toEqual([]);
      expect(last.body.pagination).toMatchObject({ current_page: MAX_INT, per_page: 100, has_more: false });
    }
  });
});

describe('timestamps and filters', () => {
  test('updated_since must be a real RFC 3339 instant on both lists', async () => {
    for (const list of ['/v1/webhooks', `/v1/webhooks/${hook.id}/deliveries`]) {
      for (const value of [
        '2026-02-30T00:00:00Z',
        '2026-13-01T00:00:00Z',
        '2026-01-01',
        '2026-01-01T00:00:00',
        '2026-01-01T24:00:00Z',
        'yesterday',
      ]) {
        const res = await tenant.request('GET', `${list}?updated_since=${encodeURIComponent(value)}`);
        expect([list, value, res.status, details(res)]).toEqual([
          list,
          value,
          422,
          [{ field: 'updated_since', message: 'must be an RFC 3339 timestamp with Z or a ±hh:mm offset' }],
        ]);
      }
      const ok = await tenant.request('GET', `${list}?updated_since=${encodeURIComponent('2000-01-01T00:00:00+02:00')}`);
      expect(ok.status).toBe(200);
    }
  });

  test('sort, status and event_id on the delivery log are checked; the webhooks list sorts on its own fields', async () => {
    const deliveries = `/v1/webhooks/${hook.id}/deliveries`;
    const res = await tenant.request('GET', `${deliveries}?sort=-updated_at&status=lost&event_id=${'e'.repeat(256)}`);
    expect(res.status).toBe(422);
    expect(details(res)).toEqual([
      { field: 'event_id', message: 'must be at most 255 characters' },
      { field: 'status', message: 'must be one of pending, delivered, failed' },
      { field: 'sort', message: 'must be one of id, created_at (prefix - for descending)' },
    ]);
    const empty = await tenant.request('GET', `${deliveries}?event_id=`);
    expect(details(empty)).toEqual([{ field: 'event_id', message: 'must not be empty' }]);
    for (const query of ['sort=-created_at&status=pending&event_id=evt_none', 'sort=id']) {
      expect((await tenant.request('GET', `${deliveries}?${query}`)).status).toBe(200);
    }
    expect(details(await tenant.request('GET', '/v1/webhooks?sort=url'))).toEqual([
      { field: 'sort', message: 'must be one of id, created_at, updated_at (prefix - for descending)' },
    ]);
    expect((await tenant.request('GET', '/v1/webhooks?sort=-updated_at')).status).toBe(200);
  });
});

describe('bodies', () => {
  test('one 422 names every failing field: schema first, then the URL and event-type rules; nothing stored', async () => {
    const t = await stack.createTenant();
    const res = await t.request('POST', '/v1/webhooks', {
      body: {
        url: 'ftp://example.test/x',
        events: ['contact.created', 'contact.exploded', 7],
        description: 'd'.repeat(256),
        enabled: 'yes',
        colour: 'red',
      },
    });
    expect(res.status).toBe(422);
    expect(details(res)).toEqual([
      { field: 'colour', message: 'is not a known field' },
      { field: 'events[2]', message: 'must be a string' },
      { field: 'description', message: 'must be at most 255 characters' },
      { field: 'enabled', message: 'must be a boolean' },
      { field: 'url', message: 'must be an http or https URL' },
      { field: 'events[1]', message: 'is not a known event type (see GET /webhooks/event-types)' },
    ]);
    for (const d of details(res)) expect(res.body.error.message).toContain(d.field);
    expect(await stored(t)).toEqual(NOTHING);
  });

  test('each rule of a webhook body, on POST, PUT and PATCH; a refused update changes nothing', async () => {
    const t = await stack.createTenant();
    const before = await keptHook();
    const url = `${receiver.url}/x`;
    const cases: [Record<string, unknown>, { field: string; message: string }[]][] = [
      [{ url, enabled: 'true' }, [{ field: 'enabled', message: 'must be a boolean' }]],
      [{ url, enabled: 1 }, [{ field: 'enabled', message: 'must be a boolean' }]],
      [{ url, enabled: null }, [{ field: 'enabled', message: 'must be a boolean' }]],
      [{ url, events: [] }, [{ field: 'events', message: 'must have at least 1 item' }]],
      [{ url, events: Array(101).fill('contact.created') }, [{ field: 'events', message: 'must have at most 100 items' }]],
      [{ url, events: 'contact.created' }, [{ field: 'events', message: 'must be an array' }]],
      [{ url, events: [{ type: 'contact.created' }] }, [{ field: 'events[0]', message: 'must be a string' }]],
      [
        { url, events: ['Contact.Created', ''] },
        [
          { field: 'events[0]', message: 'is not a known event type (see GET /webhooks/event-types)' },
          { field: 'events[1]', message: 'is not a known event type (see GET /webhooks/event-types)' },
        ],
      ],
      [{ url, description: 'd'.repeat(256) }, [{ field: 'description', message: 'must be at most 255 characters' }]],
      [{ url, description: 5 }, [{ field: 'description', message: 'must be a string or null' }]],
      [{ url: `${receiver.url}/${'p'.repeat(2048)}` }, [{ field: 'url', message: 'must be at most 2048 characters' }]],
      [{ url: 42 }, [{ field: 'url', message: 'must be a string' }]],
      [{ url: `${receiver.url}/a\tb` }, [{ field: 'url', message: expect.stringContaining('U+0009') }]],
      [{ url, secret: 'whsec_mine' }, [{ field: 'secret', message: 'is not a known field' }]],
    ];
    for (const [body, expected] of cases) {
      const created = await t.request('POST', '/v1/webhooks', { body });
      expect([JSON.stringify(body).slice(0, 80), created.status, details(created)]).toEqual([
        JSON.stringify(body).slice(0, 80),
        422,
        expected,
      ]);
      for (const method of ['PUT', 'PATCH']) {
        const updated = await tenant.request(method, `/v1/webhooks/${hook.id}`, { body });
        expect([method, JSON.stringify(body).slice(0, 80), updated.status, details(updated)]).toEqual([
          method,
          JSON.stringify(body).slice(0, 80),
          422,
          expected,
        ]);
      }
    }
    expect(await stored(t)).toEqual(NOTHING);
    expect(await keptHook()).toEqual(before);
    // A body that is not an object at all.
    for (const body of [[], 'x', 7, null]) {
      const res = await t.request('POST', '/v1/webhooks', { body });
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 422]);
    }
    expect(await stored(t)).toEqual(NOTHING);
  });

  test('malformed bodies: other Content-Types, invalid UTF-8, unpaired surrogates, deep nesting → 400; non-finite numbers → 422', async () => {
    const t = await stack.createTenant();
    const json = JSON.stringify({ url: `${receiver.url}/x` });
    const form = new FormData();
    form.set('url', `${receiver.url}/x`);
    const raw: [string, BodyInit, Record<string, string>, number][] = [
      ['multipart', form, {}, 400],
      ['urlencoded', `url=${encodeURIComponent(`${receiver.url}/x`)}`, { 'content-type': 'application/x-www-form-urlencoded' }, 400],
      ['text/plain', json, { 'content-type': 'text/plain' }, 400],
      ['no content-type', new Blob([json]), {}, 400],
      [
        'invalid UTF-8',
        new Uint8Array([...Buffer.from('{"url":"'), 0xff, 0xfe, ...Buffer.from('"}')]),
        { 'content-type': 'application/json' },
        400,
      ],
      ['unpaired surrogate', `{"url":"${receiver.url}/x","description":"\\ud800"}`, { 'content-type': 'application/json' }, 400],
      [
        '65 levels',
        `{"url":"${receiver.url}/x","description":${'['.repeat(64)}${']'.repeat(64)}}`,
        { 'content-type': 'application/json' },
        400,
      ],
      ['truncated', '{"url":', { 'content-type': 'application/json' }, 400],
      ['1e400', `{"url":"${receiver.url}/x","enabled":1e400}`, { 'content-type': 'application/json' }, 422],
    ];
    for (const [name, body, headers, status] of raw) {
      const created = await t.request('POST', '/v1/webhooks', { raw: body, headers });
      expect([name, created.status]).toEqual([name, status]);
      const updated = await tenant.request('PUT', `/v1/webhooks/${hook.id}`, { raw: body, headers });
      expect([name, updated.status]).toEqual([name, status]);
    }
    const infinite = await t.request('POST', '/v1/webhooks', {
      raw: `{"url":"${receiver.url}/x","enabled":1e400}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(details(infinite)).toEqual([{ field: 'enabled', message: 'must be a finite number' }]);
    expect(await stored(t)).toEqual(NOTHING);
    // Routes without a body need no Content-Type.
    const plain = await createWebhook(t, { url: `${receiver.url}/plain` });
    expect((await t.request('POST', `/v1/webhooks/${plain.id}/rotate-secret`)).status).toBe(200);
    expect((await t.request('POST', `/v1/webhooks/${plain.id}/test`)).status).toBe(202);
  });
});

describe('the database holds the same bounds', () => {
  test('out-of-bounds values written with direct SQL are refused by CHECK constraints', async () => {
    const { rows } = await stack.sql('select id from webhooks.delivery_tasks where tenant_id = $1 and endpoint_id = $2 limit 1', [
      tenant.tenantId,
      hook.id,
    ]);
    let taskId = rows[0]?.id;
    if (!taskId) {
      await tenant.request('POST', `/v1/webhooks/${hook.id}/test`);
      taskId = (await stack.sql('select id from webhooks.delivery_tasks where endpoint_id = $1 limit 1', [hook.id])).rows[0].id;
    }
    const endpoint = (columns: string, values: string) =>
      `insert into webhooks.endpoints (tenant_id, secret, ${columns}) values ('${tenant.tenantId}', 'whsec_x', ${values})`;
    const event = (columns: string, values: string) => `insert into webhooks.events (${columns}) values (${values})`;
    const attempt = (columns: string, values: string) =>
      `insert into webhooks.delivery_attempts (tenant_id, task_id, endpoint_id, event_id, event_type, status, attempt, ${columns})
       values ('${tenant.tenantId}', ${taskId}, ${hook.id}, 'evt_x', 'webhook.test', 'pending', 1, ${values})`;
    for (const statement of [
      endpoint('id, url', `${MAX_INT + 1}, 'http://a.test'`),
      endpoint('id, url', `0, 'http://a.test'`),
      endpoint('url', `''`),
      endpoint('url', `'http://a.test/${'p'.repeat(2048)}'`),
      endpoint('url, description', `'http://a.test', repeat('d', 256)`),
      endpoint('url, events', `'http://a.test', '{}'`),
      endpoint('url, events', `'http://a.test', array['contact.created', null]`),
      endpoint('url, events', `'http://a.test', '{Contact.Created}'`),
      endpoint('url, events', `'http://a.test', '{"contact.created,order.created"}'`),
      endpoint('url, events', `'http://a.test', array_fill('contact.created'::text, array[101])`),
      endpoint('url, created_at', `'http://a.test', 'infinity'`),
      endpoint('url, previous_secret, previous_secret_expires_at', `'http://a.test', 'whsec_y', '10000-01-01T00:00:00Z'`),
      event('id, tenant_id, type, data, occurred_at', `'', 't', 'contact.created', '{}', now()`),
      event('id, tenant_id, type, data, occurred_at', `repeat('e', 256), 't', 'contact.created', '{}', now()`),
      event('id, tenant_id, type, data, occurred_at', `'evt_y', 't', '', '{}', now()`),
      event('id, tenant_id, type, data, occurred_at', `'evt_y', 't', 'contact.created', '{}', '-infinity'`),
      `update webhooks.delivery_tasks set status = 'lost' where id = ${taskId}`,
      `update webhooks.delivery_tasks set attempts = -1 where id = ${taskId}`,
      attempt('id', `${MAX_INT + 1}`),
      attempt('status_code', '42'),
      attempt('status_code', '1000'),
      attempt('duration_ms', '-1'),
      attempt('response_excerpt', `repeat('r', 2049)`),
      attempt('next_attempt_at', `'infinity'`),
      `update webhooks.delivery_attempts set attempt = 0 where task_id = ${taskId}`,
      `insert into webhooks.delivery_attempts (tenant_id, task_id, endpoint_id, event_id, event_type, status, attempt)
       values ('${tenant.tenantId}', ${taskId}, ${hook.id}, 'evt_x', 'webhook.test', 'weird', 1)`,
    ]) {
      const error = await stack.sql(statement).then(
        () => undefined,
        (e: { code?: string }) => e,
      );
      expect([statement.replace(/\s+/g, ' ').slice(0, 160), error?.code ?? 'stored']).toEqual([
        statement.replace(/\s+/g, ' ').slice(0, 160),
        '23514',
      ]);
    }
    // What the API writes fits: the kept webhook still reads, lists and can be changed.
    expect((await tenant.request('GET', `/v1/webhooks/${hook.id}`)).status).toBe(200);
    expect((await tenant.request('GET', '/v1/webhooks')).status).toBe(200);
  });

  test('migration 0002 repairs rows that broke the bounds before it (scratch schema, then dropped)', async () => {
    const schema = `webhooks_repair_${crypto.randomUUID().slice(0, 8)}`;
    const { db, pool } = createDb<any>({ url: stack.databaseUrl, schema, max: 1 });
    const at = migrations.findIndex((m) => m.name === '0002_input_bounds');
    expect(at).toBeGreaterThan(0);
    try {
      await migrate(db, schema, migrations.slice(0, at));
      const run = (text: string) => sql.raw(text).execute(db);
      const rows = async (text: string) => (await sql.raw<any>(text).execute(db)).rows;
      await run(`insert into endpoints (id, tenant_id, url, description, events, enabled, secret, previous_secret, previous_secret_expires_at) values
        (1, 't', 'http://a.test/1', 'ok', '{contact.created}', true, 's', null, null),
        (2, 't', 'http://a.test/2', repeat('d', 300), '{contact.created,Bad,NULL,contact.created,order.created}', true, 's', 'p', 'infinity'),
        (3, 't', 'http://a.test/3', null, '{}', true, 's', null, null),
        (4, 't', 'http://a.test/4', null, '{nope,contact.updated,*}', true, 's', null, null),
        (5, 't', 'http://a.test/5', null, '{Nope}', true, 's', null, null),
        (6, 't', 'http://a.test/${'p'.repeat(2048)}', null, '{*}', true, 's', null, null),
        (${MAX_INT + 5}, 't', 'http://a.test/big', null, '{*}', true, 's', null, null)`);
      await run(`insert into events (id, tenant_id, type, data, occurred_at) values
        ('evt_1', 't', 'contact.created', '{}', now()), ('evt_2', 't', 'contact.created', '{}', 'infinity'),
        ('', 't', 'contact.created', '{}', now()), ('evt_3', 't', repeat('x', 300), '{}', now())`);
      await run(`insert into delivery_tasks (id, tenant_id, event_id, endpoint_id, status, attempts, queued_attempt_id) values
        (1, 't', 'evt_1', ${MAX_INT + 5}, 'weird', -2, ${MAX_INT + 9}), (2, 't', 'evt_2', 1, 'pending', 0, null),
        (3, 't', 'evt_3', 1, 'pending', 0, null)`);
      await run(`insert into delivery_attempts (id, tenant_id, task_id, endpoint_id, event_id, event_type, attempt, status, status_code,
          response_excerpt, duration_ms, created_at, next_attempt_at) values
        (1, 't', 2, 1, 'evt_2', 'contact.created', 1, 'delivered', 200, 'ok', 5, now(), null),
        (${MAX_INT + 9}, 't', 1, ${MAX_INT + 5}, 'evt_1', 'contact.created', 0, 'odd', 42, repeat('r', 3000), -1, 'infinity', '-infinity')`);
      await run(`select setval('endpoints_id_seq', ${MAX_INT + 5})`);
      await run(`select setval('delivery_attempts_id_seq', ${MAX_INT + 9})`);

      expect(await migrate(db, schema, migrations.slice(0, at + 1))).toEqual(['0002_input_bounds']);

      const endpoints = await rows(
        'select id, url, char_length(description) as description_length, events, enabled, disabled_reason, previous_secret from endpoints order by id',
      );
      expect(endpoints.map((e: any) => [e.id, e.url, e.description_length, e.events, e.enabled])).toEqual([
        [1, 'http://a.test/1', 2, ['contact.created'], true],
        [2, 'http://a.test/2', 255, ['contact.created', 'order.created'], true],
        [3, 'http://a.test/3', null, ['*'], false],
        [4, 'http://a.test/4', null, ['*'], true],
        [5, 'http://a.test/5', null, ['*'], false],
        [6, 'http://a.test/big', null, ['*'], true],
      ]);
      expect(endpoints[1].previous_secret).toBeNull();
      expect(endpoints[2].disabled_reason).toContain('event filter');
      expect(endpoints[0].disabled_reason).toBeNull();
      // The renumbered endpoint (after the highest valid id, 5: the over-long URL went first) keeps its
      // queue and log; the renumbered attempt is still the task's queued one; the sequence continues below the bound.
      expect(await rows('select id, endpoint_id, status, attempts, queued_attempt_id from delivery_tasks order by id')).toEqual([
        { id: 1, endpoint_id: 6, status: 'failed', attempts: 0, queued_attempt_id: 2 },
        { id: 2, endpoint_id: 1, status: 'pending', attempts: 0, queued_attempt_id: null },
      ]);
      const attempts = await rows(
        'select id, endpoint_id, attempt, status, status_code, char_length(response_excerpt) as excerpt_length, duration_ms, next_attempt_at from delivery_attempts order by id',
      );
      expect(attempts).toEqual([
        {
          id: 1,
          endpoint_id: 1,
          attempt: 1,
          status: 'delivered',
          status_code: 200,
          excerpt_length: 2,
          duration_ms: 5,
          next_attempt_at: null,
        },
        {
          id: 2,
          endpoint_id: 6,
          attempt: 1,
          status: 'failed',
          status_code: null,
          excerpt_length: 2048,
          duration_ms: null,
          next_attempt_at: null,
        },
      ]);
      expect((await rows('select id from events order by id')).map((e: any) => e.id)).toEqual(['evt_1', 'evt_2']);
      const [evt2] = await rows(`select occurred_at from events where id = 'evt_2'`);
      expect(Number.isFinite(new Date(evt2.occurred_at).getTime())).toBe(true);
      const [next] = await rows(`insert into endpoints (tenant_id, url, secret) values ('t', 'http://a.test/new', 's') returning id`);
      expect(next.id).toBe(7);
    } finally {
      await sql.raw(`drop schema if exists "${schema}" cascade`).execute(db);
      await db.destroy().catch(() => pool.end());
    }
  });
});

describe('nothing from outside the API can poison the consumer or the worker', () => {
  let nc: NatsConnection;
  const codec = JSONCodec();

  beforeAll(async () => {
    nc = await connect({ servers: stack.natsUrl.replace(/^nats:\/\//, '') });
  });
  afterAll(async () => {
    await nc?.drain();
  });

  const publish = (envelope: Record<string, unknown>) =>
    nc.jetstream().publish(`${stack.subjectPrefix}.${String(envelope.type).replaceAll('\u0000', '_') || 'x'}`, codec.encode(envelope), {
      msgID: crypto.randomUUID(),
    });
  const webhooksLog = () => readFileSync(join(stack.logDir, 'webhooks.log'), 'utf8');
  /** The service's `event terminated` log lines naming `marker`, once there are `count`. */
  async function terminatedLines(marker: string, count: number): Promise<string[]> {
    return pollUntil(
      `${count} 'event terminated' lines naming ${marker}`,
      async () =>
        webhooksLog()
          .split('\n')
          .filter((line) => line.includes(marker) && line.includes('event terminated')),
      (lines) => lines.length >= count,
      { timeoutMs: 15_000, everyMs: 200 },
    );
  }

  test('an event whose payload holds U+0000 or an unpaired surrogate is stored and delivered with U+FFFD, signed', async () => {
    const t = await stack.createTenant();
    const target = await createWebhook(t, { url: `${receiver.url}/odd`, events: ['contact.created'] });
    const id = newEventId();
    await publish({
      id,
      type: 'contact.created',
      tenant_id: t.tenantId,
      occurred_at: new Date().toISOString(),
      data: contactData({
        name: 'A\u0000B',
        comments: 'lone \ud800 high',
        extra_fields: { 'key\u0000': ['x\u0000', 'lone \ud800 high', 'lone \udc00 low', 'pair \ud83d\ude00 ok'], n: 3 },
      }),
    });
    const got = (await receiver.waitFor((all) => all.some((r) => r.body.id === id))).find((r) => r.body.id === id)!;
    expect(got.body.data).toEqual(
      contactData({
        name: 'A\uFFFDB',
        comments: 'lone \uFFFD high',
        extra_fields: { 'key\uFFFD': ['x\uFFFD', 'lone \uFFFD high', 'lone \uFFFD low', 'pair \ud83d\ude00 ok'], n: 3 },
      }),
    );
    expect(got.verifiedWith).toEqual([target.secret]);
    const log = await deliveriesUntil(t, target.id, (rows) => rows.some((d) => d.status === 'delivered'));
    expect(log[0]).toMatchObject({ event_id: id, status: 'delivered', attempt: 1 });
    expect(webhooksLog()).toContain(id);
  });

  test('an envelope that can never be stored is terminated once, with a log line; later events still flow', async () => {
    const t = await stack.createTenant();
    const target = await createWebhook(t, { url: `${receiver.url}/after-poison`, events: ['contact.created'] });
    const marker = crypto.randomUUID().replaceAll('-', '');
    const now = new Date().toISOString();
    const poison = [
      { id: `evt_nul_id_${marker}\u0000`, type: 'contact.created', tenant_id: t.tenantId, occurred_at: now, data: contactData() },
      { id: `evt_nul_tenant_${marker}`, type: 'contact.created', tenant_id: `${t.tenantId}\u0000`, occurred_at: now, data: contactData() },
      { id: `evt_nul_type_${marker}`, type: 'contact.created\u0000', tenant_id: t.tenantId, occurred_at: now, data: contactData() },
      {
        id: `evt_bad_date_${marker}`,
        type: 'contact.created',
        tenant_id: t.tenantId,
        occurred_at: '2026-02-30T00:00:00Z',
        data: contactData(),
      },
      {
        id: `evt_year_0_${marker}`,
        type: 'contact.created',
        tenant_id: t.tenantId,
        occurred_at: '0001-01-01T00:00:00+01:00',
        data: contactData(),
      },
      { id: `evt_long_${marker}${'x'.repeat(300)}`, type: 'contact.created', tenant_id: t.tenantId, occurred_at: now, data: contactData() },
    ];
    for (const envelope of poison) await publish(envelope);
    const good = newEventId();
    await publish({ id: good, type: 'contact.created', tenant_id: t.tenantId, occurred_at: now, data: contactData() });
    await receiver.waitFor((all) => all.some((r) => r.body.id === good));

    const terminated = await terminatedLines(marker, poison.length);
    expect(terminated).toHaveLength(poison.length);
    // Each for its envelope (the payloads conform): the year 0 only when the database refuses it.
    expect(terminated.filter((line) => line.includes('does not match'))).toEqual([]);
    expect(terminated.find((line) => line.includes('evt_year_0_'))).toContain('event cannot be stored');
    // Each exactly once, never retried.
    expect(
      webhooksLog()
        .split('\n')
        .filter((line) => line.includes(marker) && line.includes('retried')),
    ).toEqual([]);
    expect(await stored(t)).toMatchObject({ endpoints: 1, events: 1, tasks: 1 });
    const log = await deliveriesUntil(t, target.id, (rows) => rows.some((d) => d.status === 'delivered'));
    expect(log.map((d) => d.event_id)).toEqual([good]);
  });

  test("a payload that does not match its event type's schema (or an unknown type) is terminated once, with a log line, never stored or delivered", async () => {
    const t = await stack.createTenant();
    const everything = await createWebhook(t, { url: `${receiver.url}/nonconforming` });
    const marker = crypto.randomUUID().replaceAll('-', '');
    const now = new Date().toISOString();
    const envelope = (name: string, type: string, data: unknown) => ({
      id: `evt_${name}_${marker}`,
      type,
      tenant_id: t.tenantId,
      occurred_at: now,
      data,
    });
    const nonConforming = [
      envelope('shape', 'contact.created', { ok: true }),
      envelope('null', 'contact.updated', null),
      envelope('wrong_type', 'contact.created', contactData({ id: 'one' })),
      envelope('no_created_at', 'contact.created', contactData({ created_at: undefined })),
      envelope('deleted_id', 'contact.deleted', { id: '7' }),
      envelope('test_shape', 'webhook.test', { webhook_id: everything.id }),
      envelope('unknown_type', 'contact.exploded', contactData()),
    ];
    for (const e of nonConforming) await publish(e);
    const good = envelope('good', 'contact.deleted', { id: 7 });
    await publish(good);
    await receiver.waitFor((all) => all.some((r) => r.body.id === good.id));

    const lines = await terminatedLines(marker, nonConforming.length);
    expect(lines).toHaveLength(nonConforming.length);
    for (const e of nonConforming) expect(lines.filter((line) => line.includes(e.id))).toHaveLength(1);
    expect(lines.find((line) => line.includes('evt_wrong_type_'))).toContain(
      'does not match the contact.created schema: /id: must be an integer',
    );
    expect(lines.find((line) => line.includes('evt_unknown_type_'))).toContain('contact.exploded is not a published event type');
    expect(
      webhooksLog()
        .split('\n')
        .filter((line) => line.includes(marker) && line.includes('retried')),
    ).toEqual([]);
    // What a consumer of this service sees: only the conforming event, delivered and in the feed.
    expect(receiver.received.filter((r) => String(r.body.id).includes(marker)).map((r) => r.body.id)).toEqual([good.id]);
    const listed = await pollUntil(
      'the feed to list an event',
      async (): Promise<string[]> => (await t.request('GET', '/v1/events')).body.data.map((e: { id: string }) => e.id),
      (ids) => ids.length > 0,
      { timeoutMs: 5_000 },
    );
    expect(listed).toEqual([good.id]);
    for (const e of nonConforming) expect((await t.request('GET', `/v1/events/${e.id}`)).status).toBe(404);
  });

  test("a receiver's answer holding NUL bytes is logged with U+FFFD (the attempt is recorded, not repeated)", async () => {
    const nul = await startReceiver({ reply: () => ({ status: 200, body: 'ok\u0000done\u0000' }) });
    try {
      const t = await stack.createTenant();
      const target = await createWebhook(t, { url: `${nul.url}/nul` });
      await t.request('POST', `/v1/webhooks/${target.id}/test`);
      const log = await deliveriesUntil(t, target.id, (rows) => rows.some((d) => d.status === 'delivered'));
      expect(log).toHaveLength(1);
      expect(log[0]).toMatchObject({ status: 'delivered', status_code: 200, response_excerpt: 'ok\uFFFDdone\uFFFD' });
      expect(nul.received).toHaveLength(1);
    } finally {
      await nul.close();
    }
  });
});

/** A contact.created / contact.updated payload that matches the contract's Contact schema. */
function contactData(overrides: Record<string, unknown> = {}) {
  return {
    id: 1,
    name: 'Acme',
    type: 'client',
    email: null,
    is_person: null,
    cif: null,
    phone: null,
    web: null,
    iban: null,
    comments: null,
    users: [],
    location: null,
    extra_fields: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}
