// `npx bun loadtest/statement-cost.ts`: PostgreSQL CPU per statement of the write and event paths,
// each as it was sent before a change and as it is sent now. On a stack of its own (its
// migrations, one tenant with one contact and one webhook endpoint), one connection per case runs
// each form N times (default 3000), inside one transaction (rolled back) unless the form brings
// its own, alternating the two forms twice; the backend's CPU comes from /proc/<pid>/stat. Cases:
// - outbox: the outbox write with its NOTIFY (libs/events `WRITE_EVENTS`), unnamed (planned on
//   every call) against named (planned once per connection);
// - store event: an event stored with its delivery tasks (webhooks `STORE_EVENT`), the same;
// - claim: the delivery claim as the worker sends it, `begin; set local …; <claim>; commit` in one
//   simple-protocol round trip, against the same with `execute <name>` of a statement PREPAREd
//   once (`queryWithSettings(…, { prepared: true })`); it claims nothing (no task is due);
// - read-back: sales' full row of one contact by id (`contactRowsByIds`) with the id array as a
//   parameter (PostgreSQL plans every call: a custom plan for one id looks cheaper than the generic
//   one) against the array through a scalar subquery (the generic plan kept), both named;
// - contact types: the tenant's contact types, which every contact write checks, unnamed against named;
// - users: the users a contact or opportunity write names, the e-mails as an IN list (unnamed)
//   against the named lookup per e-mail (`findUsersByEmails`);
// - order total: the recomputation of an order's total every order write runs, unnamed against
//   named (`REFRESH_ORDER_TOTAL`; no order has the id, so it measures the statement, not the lines);
// - key check: what a keyed write sends before its handler runs (after `begin`), the key's lock,
//   the removal of an expired record and the read of the recorded answer as three unnamed
//   statements, against the lock and one statement for the other two, both named (libs/idempotency);
// - relay batch: an outbox relay's two round trips for a batch (`begin; set local …; <pending
//   rows>`, then `<marking>; commit`) with both statements in the text, against both PREPAREd
//   once and executed by name (nothing is pending: it measures what a batch costs besides its rows);
// - product read: catalog's `GET /v1/products/{reference}`, the product's row, then its rates and
//   its category, three unnamed statements (as the query builder sent them), against the one named
//   statement that reads all three (`PRODUCT_BY_REFERENCE`).
import { createDb, QUEUE_SCAN_SETTINGS, setLocal } from '@crm/db';
import { MARK_PUBLISHED, pendingRowsQuery, WRITE_EVENTS } from '@crm/events';
import { LOCK_KEY, RECORD_TTL_HOURS, RECORDED_ANSWER } from '@crm/idempotency';
import { startStack } from '@crm/testing';
import pg from 'pg';
import { PRODUCT_BY_REFERENCE } from '../services/catalog/src/products/repo.ts';
import { contactRowsByIds } from '../services/sales/src/contacts/repo.ts';
import { REFRESH_ORDER_TOTAL } from '../services/sales/src/orders/repo.ts';
import { USERS_BY_EMAILS } from '../services/sales/src/users/repo.ts';
import { STORE_EVENT } from '../services/webhooks/src/ingest/event-store.ts';
import { claimStatement } from '../services/webhooks/src/worker/task-queue.ts';
import { processTicks } from './lib/cpu.ts';

const N = Number(process.env.N ?? 3000);
const log = (m: string) => console.log(`[statement-cost] ${m}`);

const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
try {
  const tenant = await stack.createTenant();
  // Loopback is allowed for the test stack's webhooks; nothing is delivered (no task becomes due in a rolled-back transaction).
  const hook = await tenant.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hook', events: ['contact.created'] } });
  if (hook.status !== 201) throw new Error(`webhook creation failed: ${hook.status} ${JSON.stringify(hook.body)}`);
  const contact = await tenant.request('POST', '/v1/contacts', { body: { name: 'Cost Ltd', type: 'client' } });
  if (contact.status !== 201) throw new Error(`contact creation failed: ${contact.status} ${JSON.stringify(contact.body)}`);
  const contactId = contact.body.data.id as number;
  const category = await tenant.request('POST', '/v1/product-categories', { body: { name: 'Tools', reference: 'tools' } });
  const product = await tenant.request('POST', '/v1/products', {
    body: {
      reference: 'COST-1',
      name: 'Cost product',
      vat: 21,
      product_category_ref: 'tools',
      rates: [
        { sku: 'COST-1-A', cost: 1, price: 2 },
        { sku: 'COST-1-B', cost: 3, price: 4 },
      ],
    },
  });
  if (category.status !== 201 || product.status !== 201) throw new Error(`product creation failed: ${product.status} ${product.text}`);
  const productRow = product.body.data as { id: number; product_category_id: number };
  let n = 0;
  const id = () => `evt_cost_${process.pid}_${n++}`;
  const claim = claimStatement(32, 50_000);
  // The read-back's text only needs the query builder (nothing connects).
  const builder = createDb<any>({ url: stack.env.DATABASE_URL as string, schema: 'sales' });
  const readBack = contactRowsByIds(builder.db).sql;
  await builder.db.destroy();
  const readBackBefore = readBack.replace('unnest((select $2::integer[]))', 'unnest($2::integer[])');
  if (readBackBefore === readBack) throw new Error('the read-back statement no longer has the form this case compares');
  type Form = 'before' | 'now';
  /** A statement with parameters, sent unnamed (planned each call) or under `name` (prepared once). */
  const parameterized = (text: string, name: string, values: () => unknown[]) => (form: Form) =>
    form === 'now' ? [{ name, text, values: values() }] : [{ text, values: values() }];
  const key = () => `cost-key-${n++}`;
  const cases: { label: string; schema: string; queries: (form: Form) => pg.QueryConfig[]; prepare?: string; ownTransactions?: boolean }[] =
    [
      {
        label: 'outbox',
        schema: 'sales',
        queries: parameterized(WRITE_EVENTS.sql, 'cost_outbox', () => [[id()], [tenant.tenantId], ['contact.created'], ['{"id":1}']]),
      },
      {
        label: 'store event',
        schema: 'webhooks',
        queries: parameterized(STORE_EVENT.sql, 'cost_store', () => [
          id(),
          tenant.tenantId,
          'contact.created',
          '{"id":1}',
          new Date().toISOString(),
          1e9 + n,
        ]),
      },
      {
        label: 'claim',
        schema: 'webhooks',
        queries: (form) => [{ text: `begin; ${setLocal(QUEUE_SCAN_SETTINGS)}; ${form === 'now' ? 'execute cost_claim' : claim}; commit` }],
        prepare: `prepare cost_claim as ${claim}`,
        ownTransactions: true,
      },
      {
        label: 'read-back',
        schema: 'sales',
        queries: (form) => [
          { name: `cost_read_back_${form}`, text: form === 'now' ? readBack : readBackBefore, values: [tenant.tenantId, [contactId]] },
        ],
      },
      {
        label: 'contact types',
        schema: 'sales',
        queries: parameterized('select id, reference, name from contact_types where tenant_id = $1 order by id', 'cost_types', () => [
          tenant.tenantId,
        ]),
      },
      {
        label: 'users',
        schema: 'sales',
        queries: (form) =>
          form === 'now'
            ? [{ name: 'cost_users', text: USERS_BY_EMAILS.sql, values: [tenant.tenantId, ['someone@example.test']] }]
            : [
                {
                  text: 'select "id", "email", "name" from "users" where "tenant_id" = $1 and lower(email) in ($2)',
                  values: [tenant.tenantId, 'someone@example.test'],
                },
              ],
      },
      {
        label: 'order total',
        schema: 'sales',
        queries: (form) =>
          form === 'now'
            ? [{ name: 'cost_order_total', text: REFRESH_ORDER_TOTAL.sql, values: [0] }]
            : [{ text: REFRESH_ORDER_TOTAL.sql.replace('where id = $1', 'where id = $2'), values: [0, 0] }],
      },
      {
        label: 'key check',
        schema: 'sales',
        queries: (form) => {
          const k = key();
          if (form === 'now')
            return [
              { name: 'cost_lock', text: LOCK_KEY.sql, values: [tenant.tenantId, k] },
              { name: 'cost_recorded', text: RECORDED_ANSWER.sql, values: [tenant.tenantId, k] },
            ];
          return [
            { text: 'select pg_advisory_xact_lock(hashtextextended($1, $2))', values: [`${tenant.tenantId}:${k}`, 0] },
            {
              text: 'delete from idempotency_records where tenant_id = $1 and key = $2 and created_at <= now() - make_interval(hours => $3)',
              values: [tenant.tenantId, k, RECORD_TTL_HOURS],
            },
            {
              text: 'select fingerprint, status, body, headers from idempotency_records where tenant_id = $1 and key = $2',
              values: [tenant.tenantId, k],
            },
          ];
        },
      },
      {
        label: 'relay batch',
        schema: 'sales',
        queries: (form) => {
          const seq = 1e12 + n++;
          const settings = `begin; set local synchronous_commit = off; ${setLocal(QUEUE_SCAN_SETTINGS)}`;
          if (form === 'now')
            return [
              { text: `${settings}; set local plan_cache_mode = force_generic_plan; execute cost_pending` },
              { text: `execute cost_mark('{${seq}}'); commit` },
            ];
          return [
            { text: `${settings}; ${pendingRowsQuery(200)}` },
            { text: `update outbox set published_at = now() where seq = any('{${seq}}'::bigint[]); commit` },
          ];
        },
        prepare: `prepare cost_pending as ${pendingRowsQuery(200)}; prepare cost_mark(bigint[]) as ${MARK_PUBLISHED}`,
        ownTransactions: true,
      },
      {
        label: 'product read',
        schema: 'catalog',
        queries: (form) =>
          form === 'now'
            ? [{ name: 'cost_product', text: PRODUCT_BY_REFERENCE.sql, values: [tenant.tenantId, 'COST-1'] }]
            : [
                {
                  text: 'select "id", "reference", "name", "description", "vat_id", "product_category_id", "services", "stock", "created_at", "updated_at" from "products" where "tenant_id" = $1 and "reference" = $2',
                  values: [tenant.tenantId, 'COST-1'],
                },
                {
                  text: 'select "id", "product_id", "sku", "cost", "price", "is_primary" from "product_rates" where "product_id" in ($1) order by "product_id", "position"',
                  values: [productRow.id],
                },
                {
                  text: 'select "c"."id", "c"."name", "c"."reference", "c"."parent_id", "c"."created_at", "c"."updated_at", exists (select 1 from products p where p.product_category_id = c.id) as "has_products" from "product_categories" as "c" where "c"."tenant_id" = $1 and "c"."id" in ($2)',
                  values: [tenant.tenantId, productRow.product_category_id],
                },
              ],
      },
    ];
  for (const c of cases) {
    for (const form of ['before', 'now', 'before', 'now'] as const satisfies readonly Form[]) {
      const client = new pg.Client({ connectionString: stack.env.DATABASE_URL, options: `-c search_path=${c.schema},public` });
      await client.connect();
      try {
        const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid as number;
        if (form === 'now' && c.prepare) await client.query(c.prepare);
        if (!c.ownTransactions) await client.query('begin');
        let roundTrips = 0;
        const run = async (count: number) => {
          for (let i = 0; i < count; i++)
            for (const query of c.queries(form)) {
              await client.query(query);
              roundTrips += 1;
            }
        };
        await run(20);
        roundTrips = 0;
        const before = processTicks(pid) as number;
        const started = performance.now();
        await run(N);
        const cpuUs = (((processTicks(pid) as number) - before) * 10_000) / N;
        const wallUs = ((performance.now() - started) * 1000) / N;
        if (!c.ownTransactions) await client.query('rollback');
        log(
          `${c.label.padEnd(14)} ${form.padEnd(7)} ${Math.round(cpuUs)} µs of PostgreSQL CPU, ${roundTrips / N} round trip(s) in ${Math.round(wallUs)} µs`,
        );
      } finally {
        await client.end();
      }
    }
  }
} finally {
  await stack.stop();
}
