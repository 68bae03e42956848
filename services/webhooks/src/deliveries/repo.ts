import { inIdOrder, inTransaction, type ListRequest, type PageOfIds, readPageIds } from '@crm/db';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { DeliveryAttemptsTable, DeliveryStatus, WebhooksDatabase } from '../db/database.ts';

type Db = Kysely<WebhooksDatabase>;

export interface DeliveryFilters {
  eventId?: string;
  status?: DeliveryStatus;
}

/** One page of an endpoint's attempt log (page or cursor mode) and its rows in list order; `updated_since` applies to `created_at`. */
export async function listAttempts(
  db: Db,
  tenantId: string,
  endpointId: number,
  filters: DeliveryFilters,
  request: ListRequest,
): Promise<{ page: PageOfIds; rows: Selectable<DeliveryAttemptsTable>[] }> {
  let query = db.selectFrom('delivery_attempts as a').where('a.tenant_id', '=', tenantId).where('a.endpoint_id', '=', endpointId);
  if (filters.eventId) query = query.where('a.event_id', '=', filters.eventId);
  if (filters.status) query = query.where('a.status', '=', filters.status);
  if (request.updatedSince) query = query.where('a.created_at', '>=', request.updatedSince);
  const page = await readPageIds(query, 'a', request.window);
  if (page.ids.length === 0) return { page, rows: [] };
  const rows = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('endpoint_id', '=', endpointId)
    .where('id', 'in', page.ids)
    .execute();
  return { page, rows: inIdOrder(rows, page.ids) };
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
 * Undefined when the task is gone (its event purged or its endpoint deleted since it was read).
 */
export function queueManualAttempt(db: Db, taskId: number) {
  return inTransaction(db, async (trx) => {
    const task = await trx.selectFrom('delivery_tasks').selectAll().where('id', '=', taskId).forUpdate().executeTakeFirst();
    // Gone meanwhile: its event was purged (retention) or its endpoint deleted.
    if (!task) return undefined;
    if (task.queued_attempt_id !== null) {
      return trx.selectFrom('delivery_attempts').selectAll().where('id', '=', task.queued_attempt_id).executeTakeFirstOrThrow();
    }
    const event = await trx.selectFrom('events').select('type').where('id', '=', task.event_id).executeTakeFirst();
    if (!event) return undefined;
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
