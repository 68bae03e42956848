// Sales' named prepared statements on real PostgreSQL (a scratch schema with sales' migrations):
// after a few executions PostgreSQL may run them with a generic plan, made without the values, so
// each must stay cheap under its generic plan however many contacts the tenant has.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createDb, migrate } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import { contactRowsByIds, findContactRows } from '../services/sales/src/contacts/repo.ts';
import { migrations } from '../services/sales/src/db/migrations/index.ts';
import { findUsersByEmails } from '../services/sales/src/users/repo.ts';

const schema = `sales_plans_${process.pid}_${Date.now()}`;
let db: Kysely<any>;
let pool: ReturnType<typeof createDb>['pool'];

beforeAll(async () => {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  ({ db, pool } = createDb<any>({ url, schema }));
  await migrate(db, schema, migrations);
  // One big tenant and a neighbour; nothing analyzes the table (as on a PostgreSQL without autovacuum).
  await sql`insert into contacts (tenant_id, name, type)
    select case when g % 10 = 0 then 'neighbour' else 'big' end, 'Contact ' || g, 'client' from generate_series(1, 4000) g`.execute(db);
}, 60_000);

afterAll(async () => {
  await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
  await db.destroy();
});

/**
 * Rows and pages of one execution of the rows-by-ids statement for `id` in the big tenant, under
 * the generic plan of a connection of its own. With `meanwhile`, the connection makes its plan
 * first (one execution) and keeps it while `meanwhile` changes the tables (nothing analyzes them here).
 */
async function underGenericPlan(id: number, meanwhile?: () => Promise<unknown>): Promise<{ rows: number; pages: number }> {
  const client = await pool.connect();
  try {
    await client.query(`set search_path to "${schema}"; set plan_cache_mode = force_generic_plan`);
    await client.query(`prepare by_ids(text, integer[]) as ${contactRowsByIds(db).sql}`);
    if (meanwhile) {
      await client.query(`execute by_ids('big', '{${id}}')`);
      await meanwhile();
    }
    const explained = await client.query(`explain (analyze, buffers, format json) execute by_ids('big', '{${id}}')`);
    const plan = explained.rows[0]['QUERY PLAN'][0].Plan as Record<string, number>;
    return { rows: plan['Actual Rows'] as number, pages: (plan['Shared Hit Blocks'] as number) + (plan['Shared Read Blocks'] as number) };
  } finally {
    await client.query('deallocate by_ids; reset plan_cache_mode');
    client.release();
  }
}

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
  // One connection, so every read below runs on the connection whose statement is inspected.
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const single = createDb<any>({ url, schema, max: 1 });
  try {
    const { rows } = await sql<{ id: number }>`select id from contacts where tenant_id = 'big' order by id limit 12`.execute(single.db);
    for (const { id } of rows) expect((await findContactRows(single.db, 'big', [id])).map((r) => r.id)).toEqual([id]);
    const plans = await sql<{ generic_plans: string; custom_plans: string }>`select generic_plans, custom_plans
      from pg_prepared_statements where statement = ${contactRowsByIds(db).sql}`.execute(single.db);
    // PostgreSQL plans the first five executions with their values, then compares. Given the
    // array itself, it judged one id ten times cheaper than the generic plan and planned all 12.
    expect(plans.rows.map((p) => [Number(p.custom_plans), Number(p.generic_plans)])).toEqual([[5, 7]]);
  } finally {
    await single.db.destroy();
  }
});

test('users are found by e-mail in any case, one index lookup per e-mail, and the plan is kept', async () => {
  // The tenant 'other' has 30,000 users by now (the test above).
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const single = createDb<any>({ url, schema, max: 1 });
  try {
    const found = await findUsersByEmails(single.db, 'other', [
      'User7@Example.test',
      'user7@example.TEST',
      'user9@example.test',
      'nobody@example.test',
    ]);
    expect(found.map((u) => u.email).sort()).toEqual(['user7@example.test', 'user9@example.test']);
    expect(await findUsersByEmails(single.db, 'big', ['user7@example.test'])).toEqual([]);
    for (let i = 0; i < 10; i++) await findUsersByEmails(single.db, 'other', [`user${i}@example.test`]);
    const statement = (
      await sql<{ statement: string; generic_plans: string; custom_plans: string }>`select statement, generic_plans,
      custom_plans from pg_prepared_statements where statement like '%from users where tenant_id = $1 and lower(email)%'`.execute(single.db)
    ).rows;
    // Five plans with the values, then the generic plan kept (a one-e-mail custom plan looked cheaper when given the array).
    expect(statement.map((p) => [Number(p.custom_plans), Number(p.generic_plans)])).toEqual([[5, 7]]);
    // Under the generic plan: the unique index, a few pages per e-mail, whatever the number of users.
    const client = await single.pool.connect();
    try {
      const text = statement[0]?.statement ?? '';
      await client.query(`set plan_cache_mode = force_generic_plan; prepare by_emails(text, text[]) as ${text}`);
      const explained = await client.query(
        "explain (analyze, buffers, format json) execute by_emails('other', '{user5@example.test,user6@example.test}')",
      );
      const plan = explained.rows[0]['QUERY PLAN'][0].Plan as Record<string, number>;
      expect(plan['Actual Rows']).toBe(2);
      expect((plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0)).toBeLessThan(20);
    } finally {
      await client.query('deallocate by_emails; reset plan_cache_mode');
      client.release();
    }
  } finally {
    await single.db.destroy();
  }
});
