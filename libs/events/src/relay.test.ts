import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createDb, poolConfig, QUEUE_SCAN_SETTINGS, setLocal, sqlPreparedName } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import { connect, type NatsConnection } from 'nats';
import type { Logger } from './logger.ts';
import { ensureStream } from './nats.ts';
import { outboxMigration, writeEvents } from './outbox.ts';
import { BATCH_BEGIN, MARK_PUBLISHED, pendingRowsQuery, startOutboxRelay } from './relay.ts';

// Real PostgreSQL (a scratch schema of its own) and NATS (a stream of its own).
const id = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const schema = `relay_test_${id}`;
const stream = `RELAY_TEST_${id.toUpperCase()}`;
const prefix = `relaytest${id}.events`;
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
let db: Kysely<any>;
let pool: ReturnType<typeof createDb>['pool'];
let nc: NatsConnection;

beforeAll(async () => {
  ({ db, pool } = createDb<any>({ url, schema }));
  await sql`create schema ${sql.id(schema)}`.execute(db);
  await outboxMigration.up(db);
  nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
  await ensureStream(nc, stream, prefix);
});

afterAll(async () => {
  await (await nc.jetstreamManager()).streams.delete(stream).catch(() => {});
  await nc.close();
  await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
  await db.destroy();
});

/** A relay that only NOTIFY wakes: its poll interval is far beyond any test's time. */
const startNotifiedRelay = (options: { batchSize?: number } = {}) =>
  startOutboxRelay({
    pool,
    listenConfig: poolConfig({ url, schema }),
    schema,
    nc,
    stream,
    subjectPrefix: prefix,
    logger: quiet,
    pollMs: 600_000,
    ...options,
  });

/**
 * A relay whose LISTEN connection cannot open: every batch runs on `pool` (one connection in the
 * tests), whose prepared statements a test can then read. A short poll starts the batches.
 */
const startPoolRelay = (relayPool: typeof pool, relaySchema: string) =>
  startOutboxRelay({
    pool: relayPool,
    listenConfig: poolConfig({ url: Object.assign(new URL(url), { port: '1' }).toString(), schema: relaySchema }),
    schema: relaySchema,
    nc,
    stream,
    subjectPrefix: prefix,
    logger: quiet,
    pollMs: 20,
  });

test('every committed event is published by NOTIFY alone, also those committed while a batch is being published (no poll needed)', async () => {
  // A poll interval far beyond the test's time: an event whose NOTIFY were missed would stay pending.
  const relay = startNotifiedRelay({ batchSize: 5 });
  const pending = async () =>
    Number((await sql<{ n: string }>`select count(*) as n from outbox where published_at is null`.execute(db)).rows[0]?.n);
  // Let the relay's LISTEN connection start (it drains once when it does): it is named once it listens.
  const listening = sql`select 1 from pg_stat_activity where application_name = ${`crm-outbox-relay:${schema}`}`;
  for (let i = 0; i < 100 && (await listening.execute(db)).rows.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  // 40 transactions from 8 writers, one after another each: most commit while the relay publishes an earlier batch.
  const ids: string[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async (_, w) => {
      for (let t = 0; t < 5; t++) {
        const written = await db.transaction().execute((trx) =>
          writeEvents(
            trx,
            Array.from({ length: 3 }, (_, n) => ({ tenantId: 't', type: 'contact.deleted' as const, data: { id: w * 100 + t * 10 + n } })),
          ),
        );
        ids.push(...written);
      }
    }),
  );
  for (let i = 0; i < 200 && (await pending()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(await pending()).toBe(0);
  const info = await (await nc.jetstreamManager()).streams.info(stream);
  expect(info.state.messages).toBe(ids.length);
  expect(new Set(ids).size).toBe(120);
  await relay.stop();
});

test('an event committed while the relay is marking a batch is published right after it, not at the next poll', async () => {
  // Marking a batch takes 300 ms here, so the second event's NOTIFY arrives while the relay is busy.
  await sql`create function slow_marking() returns trigger language plpgsql as $$ begin perform pg_sleep(0.3); return null; end $$`.execute(
    db,
  );
  await sql`create trigger slow_marking before update on outbox for each statement execute function slow_marking()`.execute(db);
  const relay = startNotifiedRelay();
  const before = (await (await nc.jetstreamManager()).streams.info(stream)).state.messages;
  const write = () => db.transaction().execute((trx) => writeEvents(trx, [{ tenantId: 't', type: 'contact.deleted', data: { id: 1 } }]));
  const [first] = await write();
  // Wait until the relay is marking the first event (its update waits in the trigger).
  for (let i = 0; i < 100; i++) {
    const marking =
      await sql`select 1 from pg_stat_activity where application_name = ${`crm-outbox-relay:${schema}`} and wait_event = 'PgSleep'`.execute(
        db,
      );
    if (marking.rows.length > 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const [second] = await write();
  const published = async (eventId: string | undefined) =>
    (await sql`select 1 from outbox where id = ${eventId} and published_at is not null`.execute(db)).rows.length === 1;
  for (let i = 0; i < 100 && !(await published(second)); i++) await new Promise((r) => setTimeout(r, 50));
  expect(await published(first)).toBe(true);
  expect(await published(second)).toBe(true);
  expect((await (await nc.jetstreamManager()).streams.info(stream)).state.messages).toBe(before + 2);
  await relay.stop();
});

test("the relay's scan for pending rows does not grow with the published rows VACUUM has not removed yet", async () => {
  await sql`drop trigger if exists slow_marking on outbox`.execute(db);
  // 3,000 events published: each leaves a dead entry in the outbox_pending index (nothing vacuums here).
  for (let t = 0; t < 30; t++) {
    await db.transaction().execute((trx) =>
      writeEvents(
        trx,
        Array.from({ length: 100 }, (_, n) => ({ tenantId: 't', type: 'contact.deleted' as const, data: { id: t * 100 + n } })),
      ),
    );
  }
  const relay = startNotifiedRelay();
  const pending = async () =>
    Number((await sql<{ n: string }>`select count(*) as n from outbox where published_at is null`.execute(db)).rows[0]?.n);
  for (let i = 0; i < 200 && (await pending()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(await pending()).toBe(0);
  await relay.stop();
  // The batch's own statement, with its own settings: pages it reads to find that nothing is pending.
  const pagesRead = async () => {
    const client = await pool.connect();
    try {
      await client.query(`set search_path to "${schema}"; begin; ${setLocal(QUEUE_SCAN_SETTINGS)}`);
      const { rows } = await client.query(`explain (analyze, buffers, format json) ${pendingRowsQuery(200)}`);
      const plan = rows[0]['QUERY PLAN'][0].Plan as { 'Shared Hit Blocks': number; 'Shared Read Blocks': number };
      return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
    } finally {
      await client.query('rollback');
      client.release();
    }
  };
  await pagesRead();
  // A plain index scan walks the index's leaf pages of marked entries (16 pages seen); a bitmap
  // scan reads the heap page of each published row as well (62 seen), more with every event.
  expect(await pagesRead()).toBeLessThan(30);
});

test("a batch's two statements are planned once per connection, not on every batch", async () => {
  const single = createDb<any>({ url, schema, max: 1 });
  const relay = startPoolRelay(single.pool, schema);
  try {
    // Eight batches of one event each: the next event is written once the last one is published.
    for (let i = 0; i < 8; i++) {
      const [eventId] = await db
        .transaction()
        .execute((trx) => writeEvents(trx, [{ tenantId: 't', type: 'contact.deleted', data: { id: i } }]));
      const published = async () =>
        (await sql`select 1 from outbox where id = ${eventId} and published_at is not null`.execute(db)).rows.length === 1;
      for (let w = 0; w < 100 && !(await published()); w++) await new Promise((r) => setTimeout(r, 20));
      expect(await published()).toBe(true);
    }
    await relay.stop();
    const { rows } = await sql<{ statement: string; generic_plans: string; custom_plans: string }>`select statement,
      generic_plans, custom_plans from pg_prepared_statements where from_sql`.execute(single.db);
    const plans = rows
      .map((r) => ({ statement: r.statement.split(' ')[3], generic: Number(r.generic_plans), custom: Number(r.custom_plans) }))
      .sort((a, b) => String(a.statement).localeCompare(String(b.statement)));
    // The pending rows (no parameters: one plan, kept) and the marking of one seq per batch, under
    // its generic plan from the first batch on (PostgreSQL would plan a one-seq batch every time).
    expect(plans.map((p) => [p.statement, p.custom])).toEqual([
      ['select', 0],
      ['update', 0],
    ]);
    expect(plans.every((p) => p.generic >= 8)).toBe(true);
  } finally {
    await single.db.destroy();
  }
});

test("a batch's plans, made while the outbox was nearly empty, still walk indexes once it holds 20,000 published rows", async () => {
  // A new outbox (a new database): the relay makes its plans at its first batch, over one row,
  // and its connection keeps them (nothing analyzes or vacuums the table here, and no statistics
  // change would replace them). A sequential scan would read every row ever written on every batch.
  const fresh = `${schema}_fresh`;
  const single = createDb<any>({ url, schema: fresh, max: 1 });
  await sql`create schema ${sql.id(fresh)}`.execute(single.db);
  await outboxMigration.up(single.db);
  const relay = startPoolRelay(single.pool, fresh);
  try {
    const [eventId] = await single.db
      .transaction()
      .execute((trx) => writeEvents(trx, [{ tenantId: 't', type: 'contact.deleted', data: { id: 1 } }]));
    const published = async () =>
      (await sql`select 1 from outbox where id = ${eventId} and published_at is not null`.execute(single.db)).rows.length === 1;
    for (let w = 0; w < 100 && !(await published()); w++) await new Promise((r) => setTimeout(r, 20));
    expect(await published()).toBe(true);
    await relay.stop();
    await sql`insert into outbox (id, tenant_id, type, payload, published_at)
      select 'evt_old_' || g, 't', 'contact.deleted', jsonb_build_object('id', g, 'pad', repeat('x', 200)), now()
      from generate_series(1, 20000) g`.execute(single.db);
    const waiting = await single.db.transaction().execute((trx) =>
      writeEvents(trx, [
        { tenantId: 't', type: 'contact.deleted', data: { id: 2 } },
        { tenantId: 't', type: 'contact.deleted', data: { id: 3 } },
      ]),
    );
    const seqs = (await sql<{ seq: string }>`select seq from outbox where id in (${sql.join(waiting)})`.execute(single.db)).rows.map(
      (r) => r.seq,
    );
    // The relay's own connection and prepared statements, under a batch's own settings.
    const client = await single.pool.connect();
    try {
      const pagesOf = async (statement: string) => {
        const results = (await client.query(`${BATCH_BEGIN}; explain (analyze, buffers, format json) ${statement}`)) as unknown as {
          rows: { 'QUERY PLAN': { Plan: Record<string, number> }[] }[];
        }[];
        await client.query('rollback');
        const plan = results.at(-1)?.rows[0]?.['QUERY PLAN'][0]?.Plan ?? {};
        return { rows: plan['Actual Rows'], pages: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0) };
      };
      const pending = await pagesOf(`execute ${sqlPreparedName(pendingRowsQuery(200))}`);
      expect(pending.rows).toBe(2);
      expect(pending.pages).toBeLessThan(30);
      // A sequential scan of the 20,000 rows reads hundreds of pages; the primary key, a few per seq.
      const marking = await pagesOf(`execute ${sqlPreparedName(MARK_PUBLISHED)}('{${seqs.join(',')}}')`);
      expect(marking.pages).toBeLessThan(30);
    } finally {
      client.release();
    }
  } finally {
    await sql`drop schema ${sql.id(fresh)} cascade`.execute(single.db);
    await single.db.destroy();
  }
});
