import { newEventId, type TypedEvent } from '@crm/contracts';
import { type Migration, preparedStatement } from '@crm/db';
import { type Kysely, sql } from 'kysely';

/** The outbox table every event-publishing service includes in its migrations (frozen). */
export const outboxMigration: Migration = {
  name: '0000_outbox',
  async up(db) {
    await sql`create table outbox (
      seq bigserial primary key,
      id text not null unique,
      tenant_id text not null,
      type text not null,
      payload jsonb not null,
      created_at timestamptz not null default now(),
      published_at timestamptz
    )`.execute(db);
    await sql`create index outbox_pending on outbox (seq) where published_at is null`.execute(db);
  },
};

/** An event to write: its type decides the shape of `data` (libs/contracts `eventPayloads`). */
export type NewEvent = { tenantId: string } & TypedEvent;

/**
 * The outbox write: the rows, and a NOTIFY that wakes the relay, in ONE statement (a
 * data-modifying WITH runs to completion whether or not the outer query reads it; the outer query
 * notifies once), sent as a named prepared statement: each connection parses and plans it once
 * (0.21 → 0.09 ms of PostgreSQL CPU per write, measured on the 2-core bench machine).
 */
export const WRITE_EVENTS = preparedStatement(`with written as (
    insert into outbox (id, tenant_id, type, payload)
    select * from unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])
  )
  select pg_notify('crm_outbox_' || current_schema(), '')`);

/**
 * Writes events to the outbox inside the caller's transaction and wakes the relay on commit
 * (NOTIFY is delivered only when the transaction commits, so a rollback publishes nothing).
 */
export async function writeEvents(trx: Kysely<any>, events: NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newEventId());
  await WRITE_EVENTS.execute(trx, [
    ids,
    events.map((e) => e.tenantId),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.data)),
  ]);
  return ids;
}

/** Writes one event to the outbox inside the caller's transaction. */
export async function writeEvent(trx: Kysely<any>, event: NewEvent): Promise<string> {
  const [id] = await writeEvents(trx, [event]);
  return id as string;
}
