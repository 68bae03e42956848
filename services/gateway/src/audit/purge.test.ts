import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createDb, migrate } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';
import { migrations } from '../db/migrations/index.ts';
import { purgeExpiredAuditLogs } from './purge.ts';

// Real PostgreSQL, a scratch schema of its own with the gateway's migrations. The job that runs
// this on a schedule is tested end to end in tests/gateway-audit.test.ts.
const schema = `audit_purge_${process.pid}_${Date.now()}`;
let db: Kysely<GatewayDatabase>;

beforeAll(async () => {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  db = createDb<GatewayDatabase>({ url, schema, max: 3 }).db;
  await migrate(db, schema, migrations);
});

afterAll(async () => {
  await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
  await db.destroy();
});

/** `n` records of `age` ago (spread over a minute, so batches take the oldest first). */
const insert = (n: number, age: string, path: string) =>
  sql`insert into audit_logs (occurred_at, request_id, tenant_id, method, path, status, duration_ms)
    select now() - ${age}::interval - make_interval(secs => i), gen_random_uuid()::text, 't', 'GET', ${path}, 200, 1
    from generate_series(1, ${n}) as i`.execute(db);

const count = async (path: string) =>
  Number((await sql<{ n: number }>`select count(*)::int as n from audit_logs where path = ${path}`.execute(db)).rows[0]?.n);

test('records older than the retention go in batches of at most the batch size, oldest first; newer ones stay', async () => {
  await insert(2500, '91 days', '/old');
  await insert(10, '89 days', '/recent');
  const batches: number[] = [];
  for (let deleted = -1; deleted !== 0; ) {
    deleted = await purgeExpiredAuditLogs(db, 90, 1000);
    batches.push(deleted);
  }
  expect(batches).toEqual([1000, 1000, 500, 0]);
  expect(await count('/old')).toBe(0);
  expect(await count('/recent')).toBe(10);
  // Another retention is another cut-off.
  expect(await purgeExpiredAuditLogs(db, 30, 1000)).toBe(10);
});

test('purges running at once on several replicas skip each other’s rows and together delete each record once', async () => {
  await insert(3000, '100 days', '/parallel');
  const replica = async () => {
    let total = 0;
    for (let deleted = -1; deleted !== 0; total += deleted) deleted = await purgeExpiredAuditLogs(db, 90, 250);
    return total;
  };
  const totals = await Promise.all([replica(), replica(), replica()]);
  expect(totals.reduce((a, b) => a + b, 0)).toBe(3000);
  expect(await count('/parallel')).toBe(0);
});

test('the purge finds the oldest records on the occurred_at index (migration 0007), not by scanning the table', async () => {
  // A table like a live one: many recent records, a few expired.
  await insert(50_000, '1 day', '/live');
  await insert(100, '100 days', '/expired');
  await sql`analyze audit_logs`.execute(db);
  const { rows } = await sql<{ 'QUERY PLAN': string }>`explain select id from audit_logs
    where occurred_at < now() - make_interval(days => 90) order by occurred_at limit 1000`.execute(db);
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  expect(plan).toContain('audit_logs_occurred_at');
  expect(plan).not.toContain('Seq Scan');
});
