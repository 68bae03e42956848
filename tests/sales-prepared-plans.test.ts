// Sales' named prepared statements on real PostgreSQL (a scratch schema with sales' migrations):
// after a few executions PostgreSQL may run them with a generic plan, made without the values, so
// each must stay cheap under its generic plan however many contacts the tenant has.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { statementCount } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import { contactRowsByIds, findContactRows } from '../services/sales/src/contacts/repo.ts';
import { migrations } from '../services/sales/src/db/migrations/index.ts';
import { findOpportunityRows, OPPORTUNITIES_BY_IDS } from '../services/sales/src/opportunities/repo.ts';
import { getOpportunity } from '../services/sales/src/opportunities/service.ts';
import { presentOrder } from '../services/sales/src/orders/present.ts';
import {
  findOrderRow,
  findStoredOrder,
  LINES_BY_ORDERS,
  listOrders,
  ORDER_BY_REFERENCE,
  ORDERS_BY_IDS,
  REFRESH_ORDER_TOTAL,
  refreshOrderTotal,
  STATES_BY_ORDERS,
  withLinesAndStates,
} from '../services/sales/src/orders/repo.ts';
import { getOrder } from '../services/sales/src/orders/service.ts';
import { findUsersByEmails, USERS_BY_EMAILS } from '../services/sales/src/users/repo.ts';
import { closePlanScope, genericPlanOf, openPlanScope, type PlanScope, plansOnOneConnection } from './prepared-plans.ts';

let scope: PlanScope;
let db: Kysely<any>;

beforeAll(async () => {
  scope = await openPlanScope('sales_plans', migrations);
  db = scope.db;
  // One big tenant and a neighbour; nothing analyzes the table (as on a PostgreSQL without autovacuum).
  await sql`insert into contacts (tenant_id, name, type)
    select case when g % 10 = 0 then 'neighbour' else 'big' end, 'Contact ' || g, 'client' from generate_series(1, 4000) g`.execute(db);
}, 60_000);

afterAll(() => closePlanScope(scope));

/** The rows-by-ids statement for `id` in the big tenant under its generic plan (`genericPlanOf`). */
const underGenericPlan = (id: number, meanwhile?: () => Promise<unknown>) =>
  genericPlanOf(scope, contactRowsByIds(db).sql, 'text, integer[]', `'big', '{${id}}'`, meanwhile);

test("the full-row read by ids reads a few pages per id under its generic plan, whatever the tenant's size", async () => {
  const { rows } = await sql<{ id: number; tenant_id: string }>`select id, tenant_id from contacts order by id desc limit 2`.execute(db);
  const [mine, theirs] = [rows.find((r) => r.tenant_id === 'big'), rows.find((r) => r.tenant_id === 'neighbour')];
  if (!mine || !theirs) throw new Error('contacts missing');
  // Tenants stay apart: the neighbour's id is not read for the big tenant, and ids repeated are read once.
  const found = await findContactRows(db, 'big', [mine.id, mine.id, theirs.id]);
  expect(found.map((r) => r.id)).toEqual([mine.id]);
  // One index lookup and the row (a walk of the tenant's index read 76 pages here, more with every contact).
  const { rows: read, pages } = await underGenericPlan(mine.id);
  expect(read).toBe(1);
  expect(pages).toBeLessThan(12);
});

test("a contact's users are read by primary key, also under a generic plan made while there were few users", async () => {
  const { rows } = await sql<{ id: number }>`select id from contacts where tenant_id = 'big' order by id limit 1`.execute(db);
  const mine = rows[0] as { id: number };
  const inserted = await sql<{ id: number }>`insert into users (tenant_id, email, name)
    values ('big', 'u@example.test', 'U') returning id`.execute(db);
  const userId = inserted.rows[0]?.id as number;
  await sql`insert into contact_users (contact_id, user_id, position) values (${mine.id}, ${userId}, 0)`.execute(db);
  // The plan is made while the users table holds one row, then 30,000 users are added.
  const { rows: read, pages } = await underGenericPlan(mine.id, () =>
    sql`insert into users (tenant_id, email, name)
      select 'other', 'user' || g || '@example.test', 'User ' || g from generate_series(1, 30000) g`.execute(db),
  );
  expect(read).toBe(1);
  // The contact, its location and one user by primary key (12 pages seen); a scan of every user
  // reads over 300 (347 seen with the users joined by a hash join).
  expect(pages).toBeLessThan(30);
  const [found] = await findContactRows(db, 'big', [mine.id]);
  expect(found?.users).toEqual([{ id: userId, name: 'U', email: 'u@example.test' }]);
});

test('reads of one id keep the generic plan (PostgreSQL does not plan each one again)', async () => {
  const { rows } = await sql<{ id: number }>`select id from contacts where tenant_id = 'big' order by id limit 12`.execute(db);
  const plans = await plansOnOneConnection(scope, contactRowsByIds(db).sql, async (single) => {
    for (const { id } of rows) expect((await findContactRows(single, 'big', [id])).map((r) => r.id)).toEqual([id]);
  });
  // PostgreSQL plans the first five executions with their values, then compares. Given the
  // array itself, it judged one id ten times cheaper than the generic plan and planned all 12.
  expect(plans).toEqual([{ custom: 5, generic: 7 }]);
});

test('users are found by e-mail in any case, one index lookup per e-mail, and the plan is kept', async () => {
  // The tenant 'other' has 30,000 users by now (the test above).
  const found = await findUsersByEmails(db, 'other', [
    'User7@Example.test',
    'user7@example.TEST',
    'user9@example.test',
    'nobody@example.test',
  ]);
  expect(found.map((u) => u.email).sort()).toEqual(['user7@example.test', 'user9@example.test']);
  expect(await findUsersByEmails(db, 'big', ['user7@example.test'])).toEqual([]);
  const plans = await plansOnOneConnection(scope, USERS_BY_EMAILS.sql, async (single) => {
    for (let i = 0; i < 12; i++) await findUsersByEmails(single, 'other', [`user${i}@example.test`]);
  });
  // Five plans with the values, then the generic plan kept (a one-e-mail custom plan looked cheaper when given the array).
  expect(plans).toEqual([{ custom: 5, generic: 7 }]);
  // Under the generic plan: the unique index, a few pages per e-mail, whatever the number of users.
  const { rows, pages } = await genericPlanOf(
    scope,
    USERS_BY_EMAILS.sql,
    'text, text[]',
    "'other', '{user5@example.test,user6@example.test}'",
  );
  expect(rows).toBe(2);
  expect(pages).toBeLessThan(20);
});

test("an order's total is recomputed exactly, by a statement planned once per connection", async () => {
  const { rows } = await sql<{ id: number }>`insert into orders (tenant_id, reference, enterprise_id, user_id, date_limit, state)
    values ('big', 'ORD-PLAN-1', 1, 1, '2026-12-31', 1) returning id`.execute(db);
  const orderId = rows[0]?.id as number;
  await sql`insert into order_lines (order_id, position, product_id, reference, name, cost, price, discount, quantity)
    values (${orderId}, 0, 1, 'P1', 'One', 1, 10.00, 10, 3), (${orderId}, 1, 2, 'P2', 'Two', 1, 5.00, 0, 2)`.execute(db);
  const totals: string[] = [];
  const plans = await plansOnOneConnection(scope, REFRESH_ORDER_TOTAL.sql, async (single) => {
    for (let i = 0; i < 12; i++) totals.push(await refreshOrderTotal(single, orderId));
  });
  // 10.00 × 3 × 90 % + 5.00 × 2 = 37.00, every time.
  expect(new Set(totals)).toEqual(new Set(['37.00']));
  expect(plans).toEqual([{ custom: 5, generic: 7 }]);
  // Under the generic plan: the order by primary key and its lines by their index.
  const { pages } = await genericPlanOf(scope, REFRESH_ORDER_TOTAL.sql, 'integer', String(orderId));
  expect(pages).toBeLessThan(20);
});

test('an order read by reference in one statement is the answer the separate reads give, in its own tenant only', async () => {
  // The order of the test above (two lines), 300 state entries at odd microseconds, and a second
  // order with no line and no state; another tenant's order with the same reference.
  await sql`insert into order_states (order_id, state, amount, created_at)
    select id, 1 + g % 3, (g * 1.37)::numeric(14,2), '2026-01-01T00:00:00Z'::timestamptz + g * interval '1.0009997 second' + random() * interval '1 day'
    from orders cross join generate_series(1, 300) g where reference = 'ORD-PLAN-1'`.execute(db);
  await sql`insert into orders (tenant_id, reference, enterprise_id, user_id, date_limit, state, comments, extra_fields)
    values ('big', 'ORD-PLAN-2', 1, 1, '2027-01-31', 2, 'none', '{"channel":"web"}'),
      ('neighbour', 'ORD-PLAN-1', 1, 1, '2026-12-31', 1, null, null)`.execute(db);
  const separately = async (reference: string) => {
    const row = await findOrderRow(db, 'big', reference);
    return row && presentOrder(((await withLinesAndStates(db, [row])) as [Parameters<typeof presentOrder>[0]])[0]);
  };
  for (const reference of ['ORD-PLAN-1', 'ORD-PLAN-2']) {
    const before = statementCount();
    const order = await getOrder(db, 'big', reference);
    expect(statementCount() - before).toBe(1);
    expect(order).toEqual((await separately(reference)) as NonNullable<typeof order>);
  }
  const one = await getOrder(db, 'big', 'ORD-PLAN-1');
  expect(one.products.map((p) => [p.reference, p.pivot.price, p.pivot.discount, p.pivot.quantity])).toEqual([
    ['P1', 10, 10, 3],
    ['P2', 5, 0, 2],
  ]);
  expect(one.states).toHaveLength(300);
  expect(one.states.map((s) => s.id)).toEqual([...one.states.map((s) => s.id)].sort((a, b) => a - b));
  expect((await getOrder(db, 'big', 'ORD-PLAN-2')).extra_fields).toEqual({ channel: 'web' });
  expect(await findStoredOrder(db, 'neighbour', 'ORD-PLAN-2')).toBeUndefined();
  expect((await getOrder(db, 'neighbour', 'ORD-PLAN-1')).states).toEqual([]);
  await expect(getOrder(db, 'big', 'ORD-NONE')).rejects.toMatchObject({ status: 404 });
  const plans = await plansOnOneConnection(scope, ORDER_BY_REFERENCE.sql, async (single) => {
    for (let i = 0; i < 12; i++) await findStoredOrder(single, 'big', i % 2 ? 'ORD-PLAN-1' : 'ORD-PLAN-2');
  });
  expect(plans).toEqual([{ custom: 5, generic: 7 }]);
  // Under the generic plan: the order by its unique reference, its lines and states by their indexes.
  const { rows, pages } = await genericPlanOf(scope, ORDER_BY_REFERENCE.sql, 'text, text', "'big', 'ORD-PLAN-2'");
  expect(rows).toBe(1);
  expect(pages).toBeLessThan(20);
});

test('opportunities by ids: the rows of the IN-list read, in id order, in their own tenant only, with the generic plan kept', async () => {
  await sql`insert into opportunities (tenant_id, name, enterprise_id, amount, status, probability, close_date, extra_fields)
    select case when g % 10 = 0 then 'neighbour' else 'big' end, 'Deal ' || g, g, g * 10.5, 'open', g % 100,
      case when g % 2 = 0 then '2027-01-01'::date + g end, case when g % 3 = 0 then '{"k":1}'::jsonb end
    from generate_series(1, 3000) g`.execute(db);
  const { rows } = await sql<{ id: number; tenant_id: string }>`select id, tenant_id from opportunities order by id desc limit 20`.execute(
    db,
  );
  const ids = rows.map((r) => r.id);
  const mine = rows.filter((r) => r.tenant_id === 'big').map((r) => r.id);
  const found = await findOpportunityRows(db, 'big', [...ids, ids[0] as number]);
  // The same rows as the query builder's IN list (its locking form), each once, in id order.
  expect(found).toEqual(await findOpportunityRows(db, 'big', ids, { lock: true }));
  expect(found.map((r) => r.id)).toEqual([...mine].sort((a, b) => a - b));
  expect((await getOpportunity(db, 'big', mine[0] as number)).id).toBe(mine[0] as number);
  const theirs = rows.find((r) => r.tenant_id === 'neighbour')?.id as number;
  await expect(getOpportunity(db, 'big', theirs)).rejects.toMatchObject({ status: 404 });
  const plans = await plansOnOneConnection(scope, OPPORTUNITIES_BY_IDS.sql, async (single) => {
    for (const id of mine.slice(0, 12)) expect((await findOpportunityRows(single, 'big', [id])).map((r) => r.id)).toEqual([id]);
  });
  expect(plans).toEqual([{ custom: 5, generic: 7 }]);
  // Under the generic plan: one index lookup per id, not a walk of the tenant's 2,700 opportunities.
  const { rows: read, pages } = await genericPlanOf(scope, OPPORTUNITIES_BY_IDS.sql, 'text, integer[]', `'big', '{${mine[0]},${mine[1]}}'`);
  expect(read).toBe(2);
  expect(pages).toBeLessThan(16);
});

test("an order list page's orders, lines and states by ids: the orders read one by one, in their own tenant only, each generic plan kept", async () => {
  // The orders of the tests above: ORD-PLAN-1 (two lines, 300 states) and ORD-PLAN-2 of 'big', ORD-PLAN-1 of 'neighbour'.
  const { page, orders } = await listOrders(
    db,
    'big',
    {},
    { window: { perPage: 25, sortField: 'id', sortType: 'integer', descending: false, page: 1 }, digest: '' },
  );
  expect(orders.map((o) => o.order.reference)).toEqual(['ORD-PLAN-1', 'ORD-PLAN-2']);
  expect(page.ids).toEqual(orders.map((o) => o.order.id));
  for (const order of orders) expect(order).toEqual((await findStoredOrder(db, 'big', order.order.reference)) as (typeof orders)[number]);
  const ids = orders.map((o) => o.order.id);
  const neighbour = (await sql<{ id: number }>`select id from orders where tenant_id = 'neighbour'`.execute(db)).rows.map((r) => r.id);
  expect((await ORDERS_BY_IDS.execute(db, ['big', [...ids, ...neighbour]])).rows.map((r) => r.id).sort((a, b) => a - b)).toEqual(ids);
  const cases = [
    { statement: ORDERS_BY_IDS, values: ['big', [ids[1]]], types: 'text, integer[]', args: `'big', '{${ids[1]}}'` },
    { statement: LINES_BY_ORDERS, values: [[ids[0]]], types: 'integer[]', args: `'{${ids[0]}}'` },
    { statement: STATES_BY_ORDERS, values: [[ids[1]]], types: 'integer[]', args: `'{${ids[1]}}'` },
  ];
  for (const { statement, values, types, args } of cases) {
    const plans = await plansOnOneConnection(scope, statement.sql, async (single) => {
      for (let i = 0; i < 12; i++) await statement.execute(single, values);
    });
    expect(plans).toEqual([{ custom: 5, generic: 7 }]);
    expect((await genericPlanOf(scope, statement.sql, types, args)).pages).toBeLessThan(20);
  }
});
