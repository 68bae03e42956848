// What PostgreSQL makes of a named prepared statement on real PostgreSQL, for the tests of each
// service's prepared statements (`*-prepared-plans.test.ts`): after five executions with their
// values PostgreSQL may run one with a generic plan, made without the values, so each must stay
// cheap under it and, where it is meant to be kept, be kept.
import { createDb, type Migration, migrate } from '@crm/db';
import { type Kysely, sql } from 'kysely';

/** The scratch schema a test's statements run in, and the database that holds it. */
export interface PlanScope {
  url: string;
  schema: string;
  pool: ReturnType<typeof createDb>['pool'];
  db: Kysely<any>;
}

/** A scratch schema `<prefix>_<pid>_<time>` with a service's migrations, for one test file (in its beforeAll). */
export async function openPlanScope(prefix: string, migrations: Migration[]): Promise<PlanScope> {
  const schema = `${prefix}_${process.pid}_${Date.now()}`;
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const { db, pool } = createDb<any>({ url, schema });
  await migrate(db, schema, migrations);
  return { url, schema, pool, db };
}

/** Drops the scratch schema and closes its pool (in the test file's afterAll). */
export async function closePlanScope({ db, schema }: PlanScope): Promise<void> {
  await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
  await db.destroy();
}

/**
 * Rows and pages of one execution of a statement (`text`, with parameters of `types`, executed with
 * the SQL literals `args`), under the generic plan of a connection of its own. With `meanwhile`,
 * the connection makes its plan first (one execution) and keeps it while `meanwhile` changes the
 * tables (nothing analyzes them here).
 */
export async function genericPlanOf(
  { pool, schema }: Pick<PlanScope, 'pool' | 'schema'>,
  text: string,
  types: string,
  args: string,
  meanwhile?: () => Promise<unknown>,
): Promise<{ rows: number; pages: number }> {
  const client = await pool.connect();
  try {
    await client.query(`set search_path to "${schema}"; set plan_cache_mode = force_generic_plan`);
    await client.query(`prepare under_test(${types}) as ${text}`);
    if (meanwhile) {
      await client.query(`execute under_test(${args})`);
      await meanwhile();
    }
    const explained = await client.query(`explain (analyze, buffers, format json) execute under_test(${args})`);
    const plan = explained.rows[0]['QUERY PLAN'][0].Plan as Record<string, number>;
    return { rows: plan['Actual Rows'] as number, pages: (plan['Shared Hit Blocks'] as number) + (plan['Shared Read Blocks'] as number) };
  } finally {
    await client.query('deallocate under_test; reset plan_cache_mode');
    client.release();
  }
}

/**
 * Runs `work` with a database of one connection, then returns the generic and custom plan counts
 * of `statement` on that connection (the statements `work` sent there).
 */
export async function plansOnOneConnection(
  { url, schema }: Pick<PlanScope, 'url' | 'schema'>,
  statement: string,
  work: (single: Kysely<any>) => Promise<unknown>,
): Promise<{ custom: number; generic: number }[]> {
  const single = createDb<any>({ url, schema, max: 1 });
  try {
    await work(single.db);
    const { rows } = await sql<{ generic_plans: string; custom_plans: string }>`select generic_plans, custom_plans
      from pg_prepared_statements where statement = ${statement}`.execute(single.db);
    return rows.map((p) => ({ custom: Number(p.custom_plans), generic: Number(p.generic_plans) }));
  } finally {
    await single.db.destroy();
  }
}
