import { type Kysely, sql } from 'kysely';
import type { DeliveryStatus, WebhooksDatabase } from '../db/database.ts';

type Db = Kysely<WebhooksDatabase>;

/** A due task with everything needed to make one attempt. */
export interface ClaimedTask {
  id: number;
  tenant_id: string;
  event_id: string;
  endpoint_id: number;
  attempts: number;
  queued_attempt_id: number | null;
  type: string;
  data: unknown;
  occurred_at: Date;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * Claims up to `limit` due tasks of enabled endpoints. Rows are picked with FOR UPDATE SKIP
 * LOCKED and leased by pushing `next_attempt_at` past the attempt's maximum duration, so
 * concurrent workers (any replica) never claim the same task, and a crashed worker's task
 * becomes due again when the lease runs out.
 */
export async function claimDueTasks(db: Db, limit: number, leaseMs: number): Promise<ClaimedTask[]> {
  const { rows } = await sql<ClaimedTask>`
    with due as (
      select t.id from delivery_tasks t join endpoints e on e.id = t.endpoint_id
      where t.status = 'pending' and t.next_attempt_at <= now() and e.enabled
      order by t.next_attempt_at, t.id
      limit ${limit}
      for update of t skip locked
    )
    update delivery_tasks t set next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000}), updated_at = now()
    from due, events ev, endpoints e
    where t.id = due.id and ev.id = t.event_id and e.id = t.endpoint_id
    returning t.id, t.tenant_id, t.event_id, t.endpoint_id, t.attempts, t.queued_attempt_id, ev.type, ev.data, ev.occurred_at,
      e.url, e.secret, e.previous_secret, e.previous_secret_expires_at`.execute(db);
  return rows;
}

/** The outcome of one attempt, as logged. */
export interface AttemptRecord {
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
  durationMs: number;
  nextAttemptAt: Date | null;
  /** Set when the endpoint answered 410 Gone: the reason it is disabled. */
  disableReason?: string;
}

/**
 * Logs an attempt (filling a manual retry's queued row, or adding a row) and moves the task
 * on: delivered, failed, or pending until `nextAttemptAt`, all in one transaction.
 */
export function recordAttempt(db: Db, task: ClaimedTask, record: AttemptRecord): Promise<void> {
  return db.transaction().execute(async (trx) => {
    const attempt = task.attempts + 1;
    const logged = {
      attempt,
      status: record.status,
      status_code: record.statusCode,
      error: record.error,
      response_excerpt: record.excerpt,
      duration_ms: record.durationMs,
      next_attempt_at: record.nextAttemptAt,
      created_at: new Date(),
    };
    if (task.queued_attempt_id !== null) {
      await trx.updateTable('delivery_attempts').set(logged).where('id', '=', task.queued_attempt_id).execute();
    } else {
      await trx
        .insertInto('delivery_attempts')
        .values({
          ...logged,
          tenant_id: task.tenant_id,
          task_id: task.id,
          endpoint_id: task.endpoint_id,
          event_id: task.event_id,
          event_type: task.type,
        })
        .execute();
    }
    await trx
      .updateTable('delivery_tasks')
      .set({
        attempts: attempt,
        status: record.status,
        next_attempt_at: record.nextAttemptAt ?? sql`now()`,
        queued_attempt_id: null,
        updated_at: sql`now()`,
      })
      .where('id', '=', task.id)
      .execute();
    if (record.disableReason) {
      await trx
        .updateTable('endpoints')
        .set({ enabled: false, disabled_reason: record.disableReason, updated_at: sql`now()` })
        .where('id', '=', task.endpoint_id)
        .execute();
    }
  });
}
