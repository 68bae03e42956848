import type { EventEnvelope } from '@crm/contracts';
import { type Kysely, sql } from 'kysely';
import type { WebhooksDatabase } from '../db/database.ts';

type Db = Kysely<WebhooksDatabase>;

/**
 * Stores an event once (its id is the primary key) and, in the same transaction, one delivery
 * task per enabled endpoint of the event's tenant whose filter matches. Returns how many tasks
 * were queued; 0 for an event seen before (its tasks were committed together with it).
 */
export function storeEventWithTasks(db: Db, event: EventEnvelope): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('events')
      .values({
        id: event.id,
        tenant_id: event.tenant_id,
        type: event.type,
        data: JSON.stringify(event.data ?? null),
        occurred_at: event.occurred_at,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) return 0;
    const { rows } = await sql<{ id: number }>`
      insert into delivery_tasks (tenant_id, event_id, endpoint_id)
      select ${event.tenant_id}, ${event.id}, e.id from endpoints e
      where e.tenant_id = ${event.tenant_id} and e.enabled and (${event.type} = any(e.events) or '*' = any(e.events))
      on conflict (event_id, endpoint_id) do nothing
      returning id`.execute(trx);
    return rows.length;
  });
}

/** Stores a `webhook.test` event for one endpoint, whatever its filter, and queues its delivery. */
export function storeTestEvent(db: Db, tenantId: string, endpointId: number, event: { id: string; data: unknown }): Promise<void> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('events')
      .values({ id: event.id, tenant_id: tenantId, type: 'webhook.test', data: JSON.stringify(event.data), occurred_at: new Date() })
      .execute();
    await trx
      .insertInto('delivery_tasks')
      .values({ tenant_id: tenantId, event_id: event.id, endpoint_id: endpointId, queued_attempt_id: null })
      .execute();
  });
}
