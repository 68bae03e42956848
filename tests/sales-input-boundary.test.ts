// Contract §19 on the sales routes of users, contacts, contact types and opportunities: every
// class of malformed input is a 4xx naming the field, and a refused write leaves nothing behind.
import { beforeAll, describe, expect, test } from 'bun:test';
import { createDb, migrate } from '@crm/db';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';
import { migrations } from '../services/sales/src/db/migrations/index.ts';
import { isMarker, settledEvents } from './sales-feed.ts';

let stack: Stack;
let tenant: TestTenant;
let acme: { id: number; name: string };
let deal: { id: number };
const ANN = { email: 'ann@bounds.test', name: 'Ann Lee' };
const NUL = '\u0000';
const MAX_INT = 2_147_483_647;
const LISTS = ['/v1/users', '/v1/contacts', '/v1/opportunities'];

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant({ users: [ANN] });
  acme = (await tenant.request('POST', '/v1/contacts', { body: { name: 'Acme Ltd', type: 'client' } })).body.data;
  deal = (await tenant.request('POST', '/v1/opportunities', { body: { name: 'Deal', enterprise_identifier: 'Acme Ltd' } })).body.data;
}, 60_000);

/** What a refused write must not change: every contact (the feed's markers left out) and opportunity as listed, and the events. */
async function state(t: TestTenant) {
  const contacts = await t.request('GET', '/v1/contacts?per_page=100');
  const opportunities = await t.request('GET', '/v1/opportunities?per_page=100');
  return {
    contacts: contacts.body.data.filter((c: { name: string }) => !isMarker(c)),
    opportunities: opportunities.body,
    events: (await settledEvents(t)).map((e) => e.id),
  };
}

/** Runs refused writes and checks each answer, then that the tenant's data and events are unchanged. */
async function refusedWrites(t: TestTenant, writes: (() => Promise<void>)[]) {
  const before = await state(t);
  for (const write of writes) await write();
  expect(await state(t)).toEqual(before);
}

function expect422(res: { status: number; body: any; text: string }, details: { field: string; message?: string | RegExp }[]) {
  expect(res.status, res.text).toBe(422);
  expect(res.body.error.type).toBe('validation_error');
  const got = res.body.error.details as { field: string; message: string }[];
  expect(got.map((d) => d.field).sort()).toEqual(details.map((d) => d.field).sort());
  for (const { field, message } of details) {
    const detail = got.find((d) => d.field === field) as { message: string };
    if (typeof message === 'string') expect(detail.message).toBe(message);
    else if (message) expect(detail.message).toMatch(message);
    expect(res.body.error.message).toContain(field);
  }
}

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
const DATE_MESSAGE = 'must be a calendar date YYYY-MM-DD between 0001-01-01 and 9999-12-31';
const TIME_MESSAGE = 'must be an RFC 3339 timestamp with Z or a ±hh:mm offset';

describe('U+0000 anywhere in the input → 422 naming the field, nothing written', () => {
  test('body strings and keys at every depth, single and batch', async () => {
    const t = await stack.createTenant({ users: [ANN] });
    await t.request('POST', '/v1/contacts', { body: { name: 'Acme Ltd', type: 'client' } });
    await refusedWrites(t, [
      async () =>
        expect422(await t.request('POST', '/v1/contacts', { body: { name: `A${NUL}B`, type: 'client' } }), [
          { field: 'name', message: NUL_MESSAGE },
        ]),
      async () =>
        expect422(await t.request('POST', '/v1/contacts', { body: { name: 'A', type: 'client', location: { city: `Ma${NUL}drid` } } }), [
          { field: 'location.city', message: NUL_MESSAGE },
        ]),
      async () =>
        expect422(await t.request('POST', '/v1/contacts', { body: { name: 'A', type: 'client', users: [`ann${NUL}@bounds.test`] } }), [
          { field: 'users[0]', message: NUL_MESSAGE },
        ]),
      async () =>
        expect422(
          await t.request('POST', '/v1/contacts', { body: { name: 'A', type: 'client', extra_fields: { [`k${NUL}`]: 1, v: `x${NUL}` } } }),
          [{ field: 'extra_fields.k\\u0000' }, { field: 'extra_fields.v', message: NUL_MESSAGE }],
        ),
      async () =>
        expect422(
          await t.request('POST', '/v1/contacts/batch', {
            body: {
              data: [
                { name: 'A', type: 'client' },
                { name: 'B', type: `client${NUL}` },
              ],
            },
          }),
          [{ field: 'data[1].type', message: NUL_MESSAGE }],
        ),
      async () =>
        expect422(await t.request('PUT', '/v1/contacts/Acme%20Ltd', { body: { comments: NUL } }), [
          { field: 'comments', message: NUL_MESSAGE },
        ]),
      async () =>
        expect422(await t.request('POST', '/v1/opportunities', { body: { name: 'X', enterprise_identifier: `Acme${NUL}` } }), [
          { field: 'enterprise_identifier', message: NUL_MESSAGE },
        ]),
      async () =>
        expect422(
          await t.request('POST', '/v1/opportunities/batch', {
            body: { data: [{ name: 'X', enterprise_identifier: 'Acme Ltd', currency: `EU${NUL}` }] },
          }),
          [{ field: 'data[0].currency', message: NUL_MESSAGE }],
        ),
    ]);
  });

  test('a contact identifier in the path → 422 on identifier (GET, PUT, PATCH, DELETE); a numeric opportunity id → 404', async () => {
    await refusedWrites(tenant, [
      async () => {
        for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
          const res = await tenant.request(
            method,
            '/v1/contacts/Acme%00Ltd',
            method === 'PUT' || method === 'PATCH' ? { body: { comments: 'x' } } : {},
          );
          expect422(res, [{ field: 'identifier', message: NUL_MESSAGE }]);
        }
      },
      async () => {
        for (const method of ['GET', 'PUT', 'DELETE']) {
          const res = await tenant.request(method, `/v1/opportunities/${deal.id}%00`, method === 'PUT' ? { body: { comments: 'x' } } : {});
          expect(res.status, res.text).toBe(404);
        }
      },
    ]);
  });

  test('query values, known and unknown parameters, on every list', async () => {
    for (const list of LISTS) {
      expect422(await tenant.request('GET', `${list}?sort=id%00`), [{ field: 'sort', message: NUL_MESSAGE }]);
      expect422(await tenant.request('GET', `${list}?utm_source=a%00b`), [{ field: 'utm_source', message: NUL_MESSAGE }]);
    }
    expect422(await tenant.request('GET', '/v1/contacts?q=Ac%00me'), [{ field: 'q', message: NUL_MESSAGE }]);
    expect422(await tenant.request('GET', '/v1/contacts?email=a%00&cif=b%00'), [
      { field: 'email', message: NUL_MESSAGE },
      { field: 'cif', message: NUL_MESSAGE },
    ]);
    expect422(await tenant.request('GET', '/v1/opportunities?status=open%00'), [{ field: 'status', message: NUL_MESSAGE }]);
  });
});

describe('integers: 1..2147483647 (primary 0..), 422 in a body or query, 404 in a path', () => {
  test('location.primary: 0 and 2147483647 are stored; beyond either end, or a fraction, is named', async () => {
    const t = await stack.createTenant();
    for (const primary of [0, MAX_INT]) {
      const res = await t.request('POST', '/v1/contacts', { body: { name: `P${primary}`, type: 'client', location: { primary } } });
      expect(res.status, res.text).toBe(201);
      expect((await t.request('GET', `/v1/contacts/${res.body.data.id}`)).body.data.location.primary).toBe(primary);
    }
    await refusedWrites(t, [
      async () =>
        expect422(await t.request('POST', '/v1/contacts', { body: { name: 'A', type: 'client', location: { primary: MAX_INT + 1 } } }), [
          { field: 'location.primary', message: 'must be at most 2147483647' },
        ]),
      async () =>
        expect422(await t.request('POST', '/v1/contacts', { body: { name: 'A', type: 'client', location: { primary: 1e20 } } }), [
          { field: 'location.primary', message: 'must be at most 2147483647' },
        ]),
      async () =>
        expect422(await t.request('PUT', '/v1/contacts/P0', { body: { location: { primary: -1 } } }), [
          { field: 'location.primary', message: 'must be at least 0' },
        ]),
      async () =>
        expect422(await t.request('PATCH', '/v1/contacts/P0', { body: { location: { primary: 1.5 } } }), [
          { field: 'location.primary', message: 'must be an integer' },
        ]),
    ]);
  });

  test('probability is a whole percentage 0..100', async () => {
    await refusedWrites(tenant, [
      async () =>
        expect422(
          await tenant.request('POST', '/v1/opportunities', { body: { name: 'X', enterprise_identifier: 'Acme Ltd', probability: 101 } }),
          [{ field: 'probability', message: 'must be at most 100' }],
        ),
      async () =>
        expect422(await tenant.request('PUT', `/v1/opportunities/${deal.id}`, { body: { probability: -1 } }), [
          { field: 'probability', message: 'must be at least 0' },
        ]),
      async () =>
        expect422(await tenant.request('PUT', `/v1/opportunities/${deal.id}`, { body: { probability: 12.5 } }), [
          { field: 'probability', message: 'must be an integer' },
        ]),
    ]);
  });

  test('query integers: enterprise_id, page and per_page state the bound that failed', async () => {
    expect422(await tenant.request('GET', `/v1/opportunities?enterprise_id=${MAX_INT + 1}`), [
      { field: 'enterprise_id', message: 'must be at most 2147483647' },
    ]);
    expect422(await tenant.request('GET', '/v1/opportunities?enterprise_id=0'), [
      { field: 'enterprise_id', message: 'must be at least 1' },
    ]);
    expect422(await tenant.request('GET', '/v1/opportunities?enterprise_id=99999999999999999999999'), [
      { field: 'enterprise_id', message: 'must be at most 2147483647' },
    ]);
    expect422(await tenant.request('GET', '/v1/opportunities?enterprise_id=abc'), [
      { field: 'enterprise_id', message: 'must be an integer' },
    ]);
    const mine = await tenant.request('GET', `/v1/opportunities?enterprise_id=${acme.id}`);
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((o: any) => o.id)).toContain(deal.id);
    for (const list of LISTS) {
      expect422(await tenant.request('GET', `${list}?page=${MAX_INT + 1}`), [{ field: 'page', message: 'must be at most 2147483647' }]);
      expect422(await tenant.request('GET', `${list}?page=0&per_page=101`), [
        { field: 'page', message: 'must be at least 1' },
        { field: 'per_page', message: 'must be at most 100' },
      ]);
      expect422(await tenant.request('GET', `${list}?per_page=0`), [{ field: 'per_page', message: 'must be at least 1' }]);
      expect422(await tenant.request('GET', `${list}?sort=password`), [{ field: 'sort', message: /^must be one of id, / }]);
      // The last page number there is: past the end, an empty page with correct pagination.
      const last = await tenant.request('GET', `${list}?page=${MAX_INT}&per_page=100`);
      expect(last.status, last.text).toBe(200);
      expect(last.body.data).toEqual([]);
      expect(last.body.pagination).toMatchObject({ current_page: MAX_INT, per_page: 100, has_more: false });
    }
  });

  test('a path id outside 1..2147483647, or not a number, is simply not found', async () => {
    await refusedWrites(tenant, [
      async () => {
        for (const id of ['0', String(MAX_INT + 1), '99999999999999999999', '-1', '1.5', 'abc', '1e3'])
          for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
            const res = await tenant.request(
              method,
              `/v1/opportunities/${id}`,
              method === 'PUT' || method === 'PATCH' ? { body: { name: 'x' } } : {},
            );
            expect(res.status, `${method} ${id}: ${res.text}`).toBe(404);
            expect(res.body.error.type).toBe('not_found');
          }
      },
    ]);
    // A contact identifier of digits beyond the id range is no id: it is looked up as a name.
    expect((await tenant.request('GET', `/v1/contacts/${MAX_INT + 1}`)).status).toBe(404);
    const named = await tenant.request('POST', '/v1/contacts', { body: { name: String(MAX_INT + 1), type: 'lead' } });
    expect((await tenant.request('GET', `/v1/contacts/${MAX_INT + 1}`)).body.data.id).toBe(named.body.data.id);
    await tenant.request('DELETE', `/v1/contacts/${named.body.data.id}`);
  });
});

describe('numbers: finite and bounded', () => {
  test('amount 0..999999999999.99: the bounds are stored exactly; beyond them, or non-finite, is named', async () => {
    const t = await stack.createTenant();
    await t.request('POST', '/v1/contacts', { body: { name: 'Acme Ltd', type: 'client' } });
    const top = await t.request('POST', '/v1/opportunities', {
      body: { name: 'Top', enterprise_identifier: 'Acme Ltd', amount: 999_999_999_999.99 },
    });
    expect(top.status, top.text).toBe(201);
    expect((await t.request('GET', `/v1/opportunities/${top.body.data.id}`)).body.data.amount).toBe(999_999_999_999.99);
    const raw = (amount: string) =>
      t.request('POST', '/v1/opportunities', {
        raw: `{"name":"X","enterprise_identifier":"Acme Ltd","amount":${amount}}`,
        headers: { 'content-type': 'application/json' },
      });
    await refusedWrites(t, [
      async () => expect422(await raw('1000000000000'), [{ field: 'amount', message: 'must be at most 999999999999.99' }]),
      async () => expect422(await raw('-0.01'), [{ field: 'amount', message: 'must be at least 0' }]),
      async () => expect422(await raw('1e400'), [{ field: 'amount', message: 'must be a finite number' }]),
      async () => expect422(await raw('-1e400'), [{ field: 'amount', message: 'must be a finite number' }]),
      async () =>
        expect422(await t.request('PUT', `/v1/opportunities/${top.body.data.id}`, { body: { amount: 1e15 } }), [
          { field: 'amount', message: 'must be at most 999999999999.99' },
        ]),
    ]);
  });
});

describe('dates and timestamps: real calendar values', () => {
  test('close_date: 0001-01-01 and 9999-12-31 round-trip; impossible or out-of-range days are named', async () => {
    for (const close_date of ['0001-01-01', '9999-12-31', '2028-02-29']) {
      const res = await tenant.request('PUT', `/v1/opportunities/${deal.id}`, { body: { close_date } });
      expect(res.status, res.text).toBe(200);
      expect((await tenant.request('GET', `/v1/opportunities/${deal.id}`)).body.data.close_date).toBe(close_date);
    }
    await refusedWrites(tenant, [
      async () => {
        for (const close_date of [
          '2026-02-30',
          '2027-02-29',
          '2026-13-01',
          '2026-04-31',
          '0000-01-01',
          '10000-01-01',
          '2026-2-3',
          '2026-01-01T00:00:00Z',
        ])
          expect422(await tenant.request('PUT', `/v1/opportunities/${deal.id}`, { body: { close_date } }), [
            { field: 'close_date', message: DATE_MESSAGE },
          ]);
      },
      async () =>
        expect422(
          await tenant.request('POST', '/v1/opportunities/batch', {
            body: {
              data: [
                { name: 'A', enterprise_identifier: 'Acme Ltd' },
                { name: 'B', enterprise_identifier: 'Acme Ltd', close_date: '2026-02-30' },
              ],
            },
          }),
          [{ field: 'data[1].close_date', message: DATE_MESSAGE }],
        ),
    ]);
  });

  test('updated_since on every list: an RFC 3339 instant with Z or an offset, on a real day', async () => {
    for (const list of LISTS) {
      for (const since of [
        '2026-02-30T00:00:00Z',
        '2026-01-01T00:00:00',
        '2026-01-01',
        'yesterday',
        '2026-01-01T24:00:00Z',
        '2026-01-01T10:00:00+25:00',
      ])
        expect422(await tenant.request('GET', `${list}?updated_since=${encodeURIComponent(since)}`), [
          { field: 'updated_since', message: TIME_MESSAGE },
        ]);
      for (const since of ['2000-01-01T00:00:00Z', '2000-01-01T01:00:00.123+01:00']) {
        const res = await tenant.request('GET', `${list}?updated_since=${encodeURIComponent(since)}`);
        expect(res.status, res.text).toBe(200);
        expect(res.body.pagination.total).toBeGreaterThan(0);
      }
    }
  });
});

describe('unknown fields are refused at every depth', () => {
  test('top level, inside location, inside batch items; PUT and PATCH too', async () => {
    await refusedWrites(tenant, [
      async () =>
        expect422(
          await tenant.request('POST', '/v1/contacts', { body: { name: 'A', type: 'client', location: { city: 'X', colour: 'red' } } }),
          [{ field: 'location.colour', message: 'is not a known field' }],
        ),
      async () =>
        expect422(await tenant.request('PATCH', '/v1/contacts/Acme%20Ltd', { body: { location: { id: 5 } } }), [
          { field: 'location.id', message: 'is not a known field' },
        ]),
      async () =>
        expect422(await tenant.request('POST', '/v1/contacts/batch', { body: { data: [{ name: 'A', type: 'client', extra: 1 }] } }), [
          { field: 'data[0].extra', message: 'is not a known field' },
        ]),
      async () =>
        expect422(await tenant.request('PUT', `/v1/opportunities/${deal.id}`, { body: { enterprise_id: acme.id } }), [
          { field: 'enterprise_id', message: 'is not a known field' },
        ]),
      async () =>
        expect422(
          await tenant.request('POST', '/v1/opportunities/batch', {
            body: { data: [{ name: 'A', enterprise_identifier: 'Acme Ltd' }], extra: true },
          }),
          [{ field: 'extra', message: 'is not a known field' }],
        ),
    ]);
  });
});

describe('one 422 names every failing field: schema and database rules together', () => {
  test('an unknown contact type, an unknown user and a too-large primary in one answer', async () => {
    await refusedWrites(tenant, [
      async () =>
        expect422(
          await tenant.request('POST', '/v1/contacts', {
            body: { name: 'A', type: 'nope', users: ['ghost@bounds.test'], location: { primary: MAX_INT + 1 }, extra_fields: [] },
          }),
          [
            { field: 'type', message: /contact type/ },
            { field: 'users[0]', message: /user/ },
            { field: 'location.primary', message: 'must be at most 2147483647' },
            { field: 'extra_fields', message: 'must be an object whose JSON is at most 16 KB' },
          ],
        ),
      async () =>
        expect422(
          await tenant.request('POST', '/v1/opportunities', {
            body: {
              name: '',
              enterprise_identifier: 'Nobody',
              user_email: 'ghost@bounds.test',
              currency: 'eur',
              status: 'maybe',
              close_date: '2026-02-30',
            },
          }),
          [
            { field: 'name', message: 'must not be empty' },
            { field: 'enterprise_identifier', message: 'does not designate a contact of this account' },
            { field: 'user_email', message: 'is not the e-mail of a user of this account' },
            { field: 'currency', message: 'must be an ISO 4217 code of three capital letters' },
            { field: 'status', message: 'must be one of open, won, lost' },
            { field: 'close_date', message: DATE_MESSAGE },
          ],
        ),
    ]);
  });
});

describe('JSON endpoints take JSON only', () => {
  test('multipart, urlencoded and text bodies → 400, nothing written', async () => {
    const form = new FormData();
    form.set('name', 'Acme Form');
    form.set('type', 'client');
    await refusedWrites(tenant, [
      async () => {
        for (const [method, path] of [
          ['POST', '/v1/contacts'],
          ['POST', '/v1/contacts/batch'],
          ['PUT', '/v1/contacts/Acme%20Ltd'],
          ['POST', '/v1/opportunities'],
          ['PATCH', `/v1/opportunities/${deal.id}`],
        ] as const) {
          for (const request of [
            { raw: form },
            { raw: 'name=Acme+Form&type=client', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
            { raw: '{"name":"Acme Form","type":"client"}', headers: { 'content-type': 'text/plain' } },
          ]) {
            const res = await tenant.request(method, path, request);
            expect(res.status, `${method} ${path}: ${res.text}`).toBe(400);
            expect(res.body.error.type).toBe('bad_request');
          }
        }
      },
    ]);
  });

  test('malformed JSON, invalid UTF-8, unpaired surrogates and deep nesting → 400', async () => {
    const json = { 'content-type': 'application/json' };
    await refusedWrites(tenant, [
      async () => {
        for (const raw of [
          '{"name":"A","type":',
          new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
          '{"name":"\\ud800","type":"client"}',
          `{"name":"A","type":"client","extra_fields":${'{"a":'.repeat(70)}1${'}'.repeat(70)}}`,
        ]) {
          const res = await tenant.request('POST', '/v1/contacts', { raw, headers: json });
          expect(res.status, res.text).toBe(400);
        }
      },
    ]);
  });
});

describe('the database enforces the same bounds', () => {
  async function refused(text: string, params: unknown[]) {
    const error = await stack.sql(text, params).then(
      () => undefined,
      (e: { code?: string }) => e,
    );
    expect(error?.code, text).toBe('23514'); // check_violation
  }

  test('out-of-bounds values cannot be stored even by direct SQL', async () => {
    const tid = tenant.tenantId;
    const contact = 'insert into sales.contacts (tenant_id, name, type, extra_fields) values ($1, $2, $3, $4)';
    await refused(contact, [tid, '', 'client', null]);
    await refused(contact, [tid, 'x'.repeat(256), 'client', null]);
    await refused(contact, [tid, 'A', 'client', '[1]']);
    await refused(contact, [tid, 'A', 'client', '"text"']);
    await refused('insert into sales.contact_locations (contact_id, "primary") values ($1, $2)', [acme.id, -1]);
    await refused('insert into sales.contact_locations (contact_id, city) values ($1, $2)', [acme.id, 'c'.repeat(256)]);
    const opportunity = `insert into sales.opportunities (tenant_id, name, enterprise_id, amount, currency, status, probability, close_date)
      values ($1, 'X', $2, $3, $4, $5, $6, $7)`;
    const ok = [tid, acme.id, 1, 'EUR', 'open', 50, '2026-01-01'];
    const withValue = (i: number, v: unknown) => ok.map((x, j) => (j === i ? v : x));
    await refused(opportunity, withValue(1, 0));
    await refused(opportunity, withValue(2, -0.01));
    await refused(opportunity, withValue(3, 'eur'));
    await refused(opportunity, withValue(4, 'pending'));
    await refused(opportunity, withValue(5, 101));
    await refused(opportunity, withValue(5, -1));
    await refused(opportunity, withValue(6, '10000-01-01'));
    await refused(opportunity, withValue(6, '0001-01-01 BC'));
    await refused('insert into sales.users (tenant_id, email, name) values ($1, $2, $3)', [tid, `${'u'.repeat(250)}@x.test`, 'U']);
    await refused('insert into sales.users (tenant_id, email, name) values ($1, $2, $3)', [tid, 'u@x.test', '']);
    // The bounds themselves are storable.
    const { rows } = await stack.sql(`${opportunity} returning id`, [tid, acme.id, 999_999_999_999.99, 'USD', 'won', 100, '9999-12-31']);
    await stack.sql('delete from sales.opportunities where id = $1', [rows[0].id]);
  });

  test('migration 0020 repairs rows that broke the bounds before it', async () => {
    const schema = `sales_repair_${crypto.randomUUID().slice(0, 8)}`;
    const { db, pool } = createDb({ url: stack.databaseUrl, schema, max: 1 });
    try {
      const at = migrations.findIndex((m) => m.name === '0020_input_bounds');
      expect(at).toBeGreaterThan(0);
      await migrate(db, schema, migrations.slice(0, at));
      const q = (text: string, params: unknown[] = []) => pool.query(text, params);
      const [blank, long] = (
        await q(`insert into contacts (tenant_id, name, type, comments, extra_fields, updated_at) values
          ('t', '', '', null, '[1]', '2000-01-01'), ('t', repeat('n', 300), 'client', repeat('c', 70000), '{"a":1}', '2000-01-01') returning id`)
      ).rows.map((r) => r.id as number);
      await q(`insert into contact_locations (contact_id, "primary", city) values ($1, -5, repeat('m', 300)), ($2, 3, 'Madrid')`, [
        blank,
        long,
      ]);
      await q(`insert into opportunities (tenant_id, name, enterprise_id, user_id, amount, currency, status, probability, close_date) values
        ('t', 'keep', 1, 0, -3, 'eur', 'weird', 140, '10000-01-01'), ('t', 'orphan', 0, null, 1, 'EUR', 'open', 5, null)`);
      await q(`insert into users (tenant_id, email, name) values ('t', repeat('e', 300), 'Long'), ('t', 'a@b.test', '')`);

      await migrate(db, schema, migrations);

      const contacts = (await q('select id, name, type, comments, extra_fields, updated_at from contacts order by id')).rows;
      expect(contacts.map((c) => [c.name, c.type, c.comments?.length ?? null, c.extra_fields])).toEqual([
        [`Contact ${blank}`, 'client', null, null],
        ['n'.repeat(255), 'client', 65535, { a: 1 }],
      ]);
      for (const c of contacts) expect(new Date(c.updated_at).getFullYear()).toBeGreaterThan(2000);
      expect((await q('select contact_id, "primary", city from contact_locations order by contact_id')).rows).toEqual([
        { contact_id: blank, primary: null, city: 'm'.repeat(255) },
        { contact_id: long, primary: 3, city: 'Madrid' },
      ]);
      expect((await q('select name, user_id, amount, currency, status, probability, close_date from opportunities')).rows).toEqual([
        { name: 'keep', user_id: null, amount: '0.00', currency: 'EUR', status: 'open', probability: 100, close_date: null },
      ]);
      expect((await q('select email, name from users')).rows).toEqual([{ email: 'a@b.test', name: 'a@b.test' }]);
    } finally {
      await pool.query(`drop schema if exists "${schema}" cascade`);
      await db.destroy();
    }
  });
});
