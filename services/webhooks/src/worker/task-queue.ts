import { QUEUE_SCAN_SETTING, queryWithSettings } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { DeliveryStatus, WebhooksDatabase } from '../db/database.ts';
import { storableText } from '../db/storable.ts';

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
  // `delivery_tasks_due` is walked in order, never through a bitmap (QUEUE_SCAN_SETTING).
  return queryWithSettings<ClaimedTask>(db, [QUEUE_SCAN_SETTING], claimStatement(limit, leaseMs));
}

/** The claim as one statement; its values are literals (it goes in one round trip with its setting), checked here. */
export function claimStatement(limit: number, leaseMs: number): string {
  if (!Number.isInteger(limit) || limit < 1 || !Number.isFinite(leaseMs) || leaseMs < 0) throw new Error('invalid claim limit or lease');
  return `with due as (
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
      e.url, e.secret, e.previous_secret, e.previous_secret_expires_at`;
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
 * on: delivered, failed, or pending until `nextAttemptAt`; a 410 also disables the endpoint.
 * One statement, so it is atomic and costs one round trip.
 */
export async function recordAttempt(db: Db, task: ClaimedTask, record: AttemptRecord): Promise<void> {
  const attempt = task.attempts + 1;
  const next = record.nextAttemptAt?.toISOString() ?? null;
  // A receiver's answer (or an error text quoting it) may hold a NUL byte, which PostgreSQL text
  // refuses: logged with U+FFFD instead, or the attempt could never be recorded and would repeat.
  const excerpt = storableText(record.excerpt);
  const error = storableText(record.error);
  await sql`
    with filled as (
      update delivery_attempts set attempt = ${attempt}, status = ${record.status}, status_code = ${record.statusCode}, error = ${error},
        response_excerpt = ${excerpt}, duration_ms = ${record.durationMs}, next_attempt_at = ${next}::timestamptz, created_at = now()
      where id = ${task.queued_attempt_id}::bigint
      returning id
    ), added as (
      insert into delivery_attempts (tenant_id, task_id, endpoint_id, event_id, event_type, attempt, status, status_code, error,
        response_excerpt, duration_ms, next_attempt_at)
      select ${task.tenant_id}::text, ${task.id}::bigint, ${task.endpoint_id}::bigint, ${task.event_id}::text, ${task.type}::text,
        ${attempt}::int, ${record.status}::text, ${record.statusCode}::int, ${error}::text, ${excerpt}::text,
        ${record.durationMs}::int, ${next}::timestamptz
      where ${task.queued_attempt_id}::bigint is null
      returning id
    ), moved as (
      update delivery_tasks set attempts = ${attempt}, status = ${record.status}, next_attempt_at = coalesce(${next}::timestamptz, now()),
        queued_attempt_id = null, updated_at = now()
      where id = ${task.id}
      returning id
    ), disabled as (
      update endpoints set enabled = false, disabled_reason = ${record.disableReason ?? null}::text, updated_at = now()
      where id = ${task.endpoint_id} and ${record.disableReason ?? null}::text is not null
      returning id
    )
    select (select count(*) from filled) + (select count(*) from added) as logged`.execute(db);
}

/** One finished attempt to log. */
export interface AttemptToRecord {
  task: ClaimedTask;
  record: AttemptRecord;
}

/** Whether `recordAttempts` can log this attempt: a new log row and the task moved on, nothing else. */
export const isPlainAttempt = (e: AttemptToRecord) => e.task.queued_attempt_id === null && !e.record.disableReason;

/**
 * Logs several plain attempts (`isPlainAttempt`; the others go through `recordAttempt`) in ONE
 * statement (one round trip, one commit): the same rows as `recordAttempt` one by one, or none.
 */
export async function recordAttempts(db: Db, plain: AttemptToRecord[]): Promise<void> {
  if (plain.some((e) => !isPlainAttempt(e))) throw new Error('recordAttempts takes plain attempts only');
  if (plain.length === 0) return;
  if (plain.length === 1) {
    const [only] = plain as [AttemptToRecord];
    return recordAttempt(db, only.task, only.record);
  }
  const column = <T>(pick: (e: AttemptToRecord) => T) => plain.map(pick);
  await sql`
    with input as (
      select * from unnest(${column((e) => e.task.id)}::bigint[], ${column((e) => e.task.tenant_id)}::text[],
        ${column((e) => e.task.endpoint_id)}::bigint[], ${column((e) => e.task.event_id)}::text[], ${column((e) => e.task.type)}::text[],
        ${column((e) => e.task.attempts + 1)}::int[], ${column((e) => e.record.status)}::text[], ${column((e) => e.record.statusCode)}::int[],
        ${column((e) => storableText(e.record.error))}::text[], ${column((e) => storableText(e.record.excerpt))}::text[],
        ${column((e) => e.record.durationMs)}::int[], ${column((e) => e.record.nextAttemptAt?.toISOString() ?? null)}::timestamptz[])
        as i(task_id, tenant_id, endpoint_id, event_id, event_type, attempt, status, status_code, error, response_excerpt, duration_ms,
          next_attempt_at)
    ), added as (
      insert into delivery_attempts (tenant_id, task_id, endpoint_id, event_id, event_type, attempt, status, status_code, error,
        response_excerpt, duration_ms, next_attempt_at)
      select tenant_id, task_id, endpoint_id, event_id, event_type, attempt, status, status_code, error, response_excerpt, duration_ms,
        next_attempt_at
      from input order by task_id
      returning id
    )
    update delivery_tasks t set attempts = i.attempt, status = i.status, next_attempt_at = coalesce(i.next_attempt_at, now()),
      queued_attempt_id = null, updated_at = now()
    from input i where t.id = i.task_id`.execute(db);
}
