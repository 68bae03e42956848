// The batched statements of the webhooks pipeline, on real PostgreSQL in a scratch schema with the
// service's migrations: a batch of events stored with their delivery tasks in one statement, and a
// batch of attempts logged in one statement, give the same rows as one by one.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createDb, migrate, QUEUE_SCAN_SETTINGS, queryWithSettings, sqlPreparedName } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { WebhooksDatabase } from '../services/webhooks/src/db/database.ts';
import { migrations } from '../services/webhooks/src/db/migrations/index.ts';
import { type StorableEvent, storeEventsWithTasks } from '../services/webhooks/src/ingest/event-store.ts';
import {
  type AttemptToRecord,
  claimDueTasks,
  claimStatement,
  isPlainAttempt,
  recordAttempt,
  recordAttempts,
} from '../services/webhooks/src/worker/task-queue.ts';

const schema = `webhooks_batching_${process.pid}_${Date.now()}`;
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
let db: Kysely<WebhooksDatabase>;

beforeAll(async () => {
  db = createDb<WebhooksDatabase>({ url, schema }).db;
  await migrate(db, schema, migrations);
});

afterAll(async () => {
  await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
  await db.destroy();
});

const endpoint = async (tenant: string, events: string[], enabled = true) =>
  (
    await sql<{ id: string }>`insert into endpoints (tenant_id, url, events, enabled, secret)
      values (${tenant}, 'https://example.com/hook', ${events}::text[], ${enabled}, 'whsec_x') returning id`.execute(db)
  ).rows[0]?.id as string;

const event = (id: string, tenant: string, type: string, seq: number): StorableEvent => ({
  id,
  tenant_id: tenant,
  type,
  occurred_at: new Date('2026-11-23T10:00:00.000Z').toISOString(),
  data: { id: seq, name: `n ${seq}` },
  seq,
});

test('a batch of events is stored in one statement with one task per matching enabled endpoint; events seen before are skipped', async () => {
  const created = await endpoint('ta', ['contact.created']);
  const all = await endpoint('ta', ['*']);
  await endpoint('ta', ['*'], false);
  const other = await endpoint('tb', ['*']);

  const first = [
    event('evt_a1', 'ta', 'contact.created', 1),
    event('evt_a2', 'ta', 'contact.deleted', 2),
    event('evt_b1', 'tb', 'contact.created', 3),
  ];
  // a1 → created + all, a2 → all, b1 → other's endpoint.
  expect(await storeEventsWithTasks(db, first)).toBe(4);
  // Again (a redelivery), plus a new event and the same new event twice in the batch: only the new one counts, once.
  const again = [...first, event('evt_a3', 'ta', 'contact.created', 4), event('evt_a3', 'ta', 'contact.created', 5)];
  expect(await storeEventsWithTasks(db, again)).toBe(2);

  const events = await sql<{ id: string; seq: string; data: unknown }>`select id, seq, data from events order by seq`.execute(db);
  expect(events.rows.map((r) => [r.id, Number(r.seq)])).toEqual([
    ['evt_a1', 1],
    ['evt_a2', 2],
    ['evt_b1', 3],
    ['evt_a3', 4],
  ]);
  expect(events.rows[0]?.data).toEqual({ id: 1, name: 'n 1' });
  const tasks = await sql<{ event_id: string; endpoint_id: string }>`select event_id, endpoint_id from delivery_tasks order by id`.execute(
    db,
  );
  expect(tasks.rows.map((r) => [r.event_id, String(r.endpoint_id)])).toEqual([
    ['evt_a1', String(created)],
    ['evt_a1', String(all)],
    ['evt_a2', String(all)],
    ['evt_b1', String(other)],
    ['evt_a3', String(created)],
    ['evt_a3', String(all)],
  ]);

  // A stream position already taken by another event: the whole batch fails and stores nothing (the consumer then goes one by one).
  await expect(
    storeEventsWithTasks(db, [event('evt_a4', 'ta', 'contact.created', 6), event('evt_a5', 'ta', 'contact.created', 1)]),
  ).rejects.toThrow();
  const after = await sql<{ n: number }>`select count(*)::int as n from events where id in ('evt_a4', 'evt_a5')`.execute(db);
  expect(after.rows[0]?.n).toBe(0);
});

test('a batch of plain attempts is logged in one statement with the same rows as one by one; other attempts are refused', async () => {
  await sql`update delivery_tasks set next_attempt_at = now() - interval '1 second'`.execute(db);
  const claimed = await claimDueTasks(db, 100, 60_000);
  expect(claimed.length).toBe(6);
  const [one, two, three, ...rest] = claimed;
  if (!one || !two || !three) throw new Error('tasks missing');
  const retryAt = new Date(Date.now() + 5000);
  const delivered = { status: 'delivered', statusCode: 204, error: null, excerpt: '', durationMs: 7, nextAttemptAt: null } as const;
  const entries: AttemptToRecord[] = [
    { task: one, record: delivered },
    {
      task: two,
      record: { status: 'pending', statusCode: 503, error: null, excerpt: 'busy\u0000', durationMs: 9, nextAttemptAt: retryAt },
    },
    {
      task: three,
      record: { status: 'failed', statusCode: null, error: 'ECONNREFUSED', excerpt: null, durationMs: 1, nextAttemptAt: null },
    },
  ];
  await recordAttempts(db, entries);
  for (const task of rest) await recordAttempt(db, task, delivered);

  const attempts = await sql<any>`select task_id, event_id, event_type, attempt, status, status_code, error, response_excerpt, duration_ms,
    next_attempt_at from delivery_attempts order by task_id`.execute(db);
  const byTask = new Map(attempts.rows.map((r) => [String(r.task_id), r]));
  expect(attempts.rows.length).toBe(6);
  expect(byTask.get(String(one.id))).toMatchObject({
    event_id: one.event_id,
    event_type: one.type,
    attempt: 1,
    status: 'delivered',
    status_code: 204,
  });
  expect(byTask.get(String(two.id))).toMatchObject({ status: 'pending', status_code: 503, response_excerpt: 'busy\uFFFD', duration_ms: 9 });
  expect(new Date(byTask.get(String(two.id)).next_attempt_at).getTime()).toBe(retryAt.getTime());
  expect(byTask.get(String(three.id))).toMatchObject({ status: 'failed', status_code: null, error: 'ECONNREFUSED', next_attempt_at: null });
  // The batch's rows are shaped like recordAttempt's.
  const single = byTask.get(String(rest[0]?.id));
  expect(Object.keys(byTask.get(String(one.id))).sort()).toEqual(Object.keys(single).sort());
  expect({ ...byTask.get(String(one.id)), task_id: 0, event_id: '', event_type: '' }).toEqual({
    ...single,
    task_id: 0,
    event_id: '',
    event_type: '',
  });

  const tasks = await sql<any>`select id, status, attempts, next_attempt_at from delivery_tasks order by id`.execute(db);
  const task = (id: number) => tasks.rows.find((r) => String(r.id) === String(id));
  expect(task(one.id)).toMatchObject({ status: 'delivered', attempts: 1 });
  expect(task(two.id)).toMatchObject({ status: 'pending', attempts: 1 });
  expect(new Date(task(two.id).next_attempt_at).getTime()).toBe(retryAt.getTime());
  expect(task(three.id)).toMatchObject({ status: 'failed', attempts: 1 });

  // A manual retry's queued row, or a 410 that disables the endpoint, goes through recordAttempt.
  expect(isPlainAttempt({ task: { ...one, queued_attempt_id: 5 }, record: delivered })).toBe(false);
  expect(isPlainAttempt({ task: one, record: { ...delivered, disableReason: 'gone' } })).toBe(false);
  await expect(recordAttempts(db, [{ task: one, record: { ...delivered, disableReason: 'gone' } }])).rejects.toThrow();
});

test('the delivery claim does not grow with the finished tasks VACUUM has not removed yet', async () => {
  // Nothing else due: only the finished tasks below are in the index's way.
  await sql`update delivery_tasks set status = 'failed'`.execute(db);
  const hook = await endpoint('tc', ['*']);
  await sql`insert into events (id, tenant_id, type, data, occurred_at)
    select 'evt_c' || g, 'tc', 'contact.created', '{}', now() from generate_series(1, 5000) g`.execute(db);
  await sql`insert into delivery_tasks (tenant_id, event_id, endpoint_id)
    select 'tc', 'evt_c' || g, ${hook}::bigint from generate_series(1, 5000) g`.execute(db);
  // Delivered: each task leaves a dead entry in delivery_tasks_due (nothing vacuums here).
  await sql`update delivery_tasks set status = 'delivered' where tenant_id = 'tc'`.execute(db);
  expect(await claimDueTasks(db, 16, 60_000)).toEqual([]);
  // The claim's own statement under its own settings (nothing is due, so it changes nothing): the pages it reads.
  const pagesRead = async () => {
    const [row] = await queryWithSettings<{ 'QUERY PLAN': { Plan: Record<string, number> }[] }>(
      db,
      QUEUE_SCAN_SETTINGS,
      `explain (analyze, buffers, format json) ${claimStatement(16, 60_000)}`,
    );
    const plan = row?.['QUERY PLAN'][0]?.Plan ?? {};
    return (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
  };
  await pagesRead();
  // A plain index scan walks the index's pages of marked entries (6 seen); a bitmap scan reads
  // the heap page of each finished task as well (74 seen), more with every delivery.
  expect(await pagesRead()).toBeLessThan(30);

  // The claim as the worker runs it: PREPAREd once per connection, its plan kept (one connection here).
  const single = createDb<WebhooksDatabase>({ url, schema, max: 1 }).db;
  try {
    for (let i = 0; i < 3; i++) expect(await claimDueTasks(single, 16, 60_000)).toEqual([]);
    const name = sqlPreparedName(claimStatement(16, 60_000));
    const prepared = await queryWithSettings<{ name: string; generic_plans: string; custom_plans: string }>(
      single,
      [],
      'select name, generic_plans, custom_plans from pg_prepared_statements where from_sql',
    );
    // Planned at the first EXECUTE, then that plan reused: no plan made per claim.
    expect(prepared.map((p) => ({ ...p, generic_plans: Number(p.generic_plans), custom_plans: Number(p.custom_plans) }))).toEqual([
      { name, generic_plans: 3, custom_plans: 0 },
    ]);
    // The kept plan, made under the claim's settings, walks the index like a fresh one.
    const [row] = await queryWithSettings<{ 'QUERY PLAN': { Plan: Record<string, number> }[] }>(
      single,
      QUEUE_SCAN_SETTINGS,
      `explain (analyze, buffers, format json) execute ${name}`,
    );
    const plan = row?.['QUERY PLAN'][0]?.Plan ?? {};
    expect((plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0)).toBeLessThan(30);
  } finally {
    await single.destroy();
  }
});

test("the delivery claim's plan, made while the tables were empty, still walks the index once 5,000 tasks are finished", async () => {
  // A new database: the worker's connection makes the claim's plan at its first claim, over empty
  // tables, and keeps it (nothing analyzes or vacuums them here, so no statistics replace it).
  const fresh = `${schema}_fresh`;
  const single = createDb<WebhooksDatabase>({ url, schema: fresh, max: 1 }).db;
  try {
    await migrate(single, fresh, migrations);
    expect(await claimDueTasks(single, 16, 60_000)).toEqual([]);
    const hook = (
      await sql<{ id: string }>`insert into endpoints (tenant_id, url, events, enabled, secret)
        values ('tf', 'https://example.com/hook', '{*}', true, 'whsec_x') returning id`.execute(single)
    ).rows[0]?.id as string;
    await sql`insert into events (id, tenant_id, type, data, occurred_at)
      select 'evt_f' || g, 'tf', 'contact.created', jsonb_build_object('id', g, 'pad', repeat('x', 200)), now() from generate_series(1, 5000) g`.execute(
      single,
    );
    await sql`insert into delivery_tasks (tenant_id, event_id, endpoint_id, status)
      select 'tf', 'evt_f' || g, ${hook}::bigint, 'delivered' from generate_series(1, 5000) g`.execute(single);
    // One task due among them.
    await sql`insert into events (id, tenant_id, type, data, occurred_at) values ('evt_f_due', 'tf', 'contact.created', '{}', now())`.execute(
      single,
    );
    await sql`insert into delivery_tasks (tenant_id, event_id, endpoint_id) values ('tf', 'evt_f_due', ${hook}::bigint)`.execute(single);
    // The kept plan, run on that connection under the claim's settings: it claims the due task.
    const name = sqlPreparedName(claimStatement(16, 60_000));
    const [row] = await queryWithSettings<{ 'QUERY PLAN': { Plan: Record<string, number> }[] }>(
      single,
      QUEUE_SCAN_SETTINGS,
      `explain (analyze, buffers, format json) execute ${name}`,
    );
    const plan = row?.['QUERY PLAN'][0]?.Plan ?? {};
    expect(plan['Actual Rows']).toBe(1);
    // Sequential scans of the 5,000 tasks and events read hundreds of pages; the due index, a few.
    expect((plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0)).toBeLessThan(40);
  } finally {
    await sql`drop schema ${sql.id(fresh)} cascade`.execute(single);
    await single.destroy();
  }
});
