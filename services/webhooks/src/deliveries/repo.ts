import { fetchPage, type PageRequest } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { DeliveryStatus, WebhooksDatabase } from '../db/database.ts';

type Db = Kysely<WebhooksDatabase>;

export interface DeliveryFilters {
  eventId?: string;
  status?: DeliveryStatus;
}

/** One page of an endpoint's attempt log and the total count. */
export async function listAttempts(db: Db, tenantId: string, endpointId: number, filters: DeliveryFilters, page: PageRequest) {
  let query = db.selectFrom('delivery_attempts').where('tenant_id', '=', tenantId).where('endpoint_id', '=', endpointId);
  if (filters.eventId) query = query.where('event_id', '=', filters.eventId);
  if (filters.status) query = query.where('status', '=', filters.status);
  if (page.updatedSince) query = query.where('created_at', '>=', page.updatedSince);
  return fetchPage(query, page, (q) => q.selectAll());
}

/** An attempt of the tenant's endpoint, or undefined. */
export function findAttempt(db: Db, tenantId: string, endpointId: number, attemptId: number) {
  return db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', attemptId)
    .executeTakeFirst();
}

/**
 * Queues a manual attempt for a task: a pending log row that the worker fills in, and the task
 * due now. A manual retry already queued and not yet made is returned instead of a second one.
 */
export function queueManualAttempt(db: Db, taskId: number) {
  return db.transaction().execute(async (trx) => {
    const task = await trx.selectFrom('delivery_tasks').selectAll().where('id', '=', taskId).forUpdate().executeTakeFirstOrThrow();
    if (task.queued_attempt_id !== null) {
      return trx.selectFrom('delivery_attempts').selectAll().where('id', '=', task.queued_attempt_id).executeTakeFirstOrThrow();
    }
    const event = await trx.selectFrom('events').select('type').where('id', '=', task.event_id).executeTakeFirstOrThrow();
    const queued = await trx
      .insertInto('delivery_attempts')
      .values({
        tenant_id: task.tenant_id,
        task_id: task.id,
        endpoint_id: task.endpoint_id,
        event_id: task.event_id,
        event_type: event.type,
        attempt: task.attempts + 1,
        status: 'pending',
        status_code: null,
        error: null,
        response_excerpt: null,
        duration_ms: null,
        next_attempt_at: sql<Date>`now()`,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('delivery_tasks')
      .set({ status: 'pending', next_attempt_at: sql`now()`, queued_attempt_id: queued.id, updated_at: sql`now()` })
      .where('id', '=', task.id)
      .execute();
    return queued;
  });
}
