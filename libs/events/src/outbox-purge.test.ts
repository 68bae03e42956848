import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createDb } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import { outboxMigration } from './outbox.ts';
import { purgePublishedOutbox } from './outbox-purge.ts';

// Real PostgreSQL, a scratch schema of its own.
const schema = `outbox_purge_${process.pid}_${Date.now()}`;
let db: Kysely<any>;
let close: () => Promise<void>;

beforeAll(async () => {
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const created = createDb<any>({ url, schema });
  db = created.db;
  close = () => created.db.destroy();
  await sql`create schema ${sql.id(schema)}`.execute(db);
  await outboxMigration.up(db);
});

afterAll(async () => {
  await sql`drop schema ${sql.id(schema)} cascade`.execute(db);
  await close();
});

test('published rows older than the retention go, a batch at a time; recent and unpublished rows stay', async () => {
  const insert = (n: number, published: string | null) =>
    sql`insert into outbox (id, tenant_id, type, payload, published_at)
      select 'evt_' || md5(random()::text), 't', 'contact.deleted', '{"id":1}',
        ${published === null ? null : sql`now() - ${published}::interval`}
      from generate_series(1, ${n})`.execute(db);
  await insert(2500, '8 days');
  await insert(10, '6 days');
  await insert(5, null);
  expect(await purgePublishedOutbox(db, 7, 1000)).toBe(1000);
  expect(await purgePublishedOutbox(db, 7, 1000)).toBe(1000);
  expect(await purgePublishedOutbox(db, 7, 1000)).toBe(500);
  expect(await purgePublishedOutbox(db, 7, 1000)).toBe(0);
  const { rows } = await sql<{ published: number; pending: number }>`select
    count(*) filter (where published_at is not null)::int as published,
    count(*) filter (where published_at is null)::int as pending from outbox`.execute(db);
  expect(rows[0]).toEqual({ published: 10, pending: 5 });
});
