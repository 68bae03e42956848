import { preparedStatement, QUEUE_SCAN_SETTINGS, queryWithSettings } from '@crm/db';
import type { Kysely } from 'kysely';
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
  // `delivery_tasks_due` is walked in order, never through a bitmap nor a sequential scan
  // (QUEUE_SCAN_SETTINGS); each connection plans the claim once per limit (planning was 0.6 of
  // its 0.7 ms of PostgreSQL CPU).
  return queryWithSettings<ClaimedTask>(db, QUEUE_SCAN_SETTINGS, claimStatement(limit, leaseMs), { prepared: true });
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
  await RECORD_ATTEMPT.execute(db, [
    attempt,
    record.status,
    record.statusCode,
    error,
    excerpt,
    record.durationMs,
    next,
    task.queued_attempt_id,
    task.tenant_id,
    task.id,
    task.endpoint_id,
    task.event_id,
    task.type,
    record.disableReason ?? null,
  ]);
}

/** `recordAttempt`'s statement, sent as a named prepared statement (each connection plans it once); every row it touches is found by its key. */
const RECORD_ATTEMPT = preparedStatement(`
    with filled as (
      update delivery_attempts set attempt = $1::int, status = $2::text, status_code = $3::int, error = $4::text,
        response_excerpt = $5::text, duration_ms = $6::int, next_attempt_at = $7::timestamptz, created_at = now()
      where id = $8::bigint
      returning id
    ), added as (
      insert into delivery_attempts (tenant_id, task_id, endpoint_id, event_id, event_type, attempt, status, status_code, error,
        response_excerpt, duration_ms, next_attempt_at)
      select $9::text, $10::bigint, $11::bigint, $12::text, $13::text, $1::int, $2::text, $3::int, $4::text, $5::text, $6::int,
        $7::timestamptz
      where $8::bigint is null
      returning id
    ), moved as (
      update delivery_tasks set attempts = $1::int, status = $2::text, next_attempt_at = coalesce($7::timestamptz, now()),
        queued_attempt_id = null, updated_at = now()
      where id = $10::bigint
      returning id
    ), disabled as (
      update endpoints set enabled = false, disabled_reason = $14::text, updated_at = now()
      where id = $11::bigint and $14::text is not null
      returning id
    )
    select (select count(*) from filled) + (select count(*) from added) as logged`);

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
  await RECORD_ATTEMPTS.execute(db, [
    column((e) => e.task.id),
    column((e) => e.task.tenant_id),
    column((e) => e.task.endpoint_id),
    column((e) => e.task.event_id),
    column((e) => e.task.type),
    column((e) => e.task.attempts + 1),
    column((e) => e.record.status),
    column((e) => e.record.statusCode),
    column((e) => storableText(e.record.error)),
    column((e) => storableText(e.record.excerpt)),
    column((e) => e.record.durationMs),
    column((e) => e.record.nextAttemptAt?.toISOString() ?? null),
  ]);
}

/** `recordAttempts`' statement over column arrays (`unnest`), sent as a named prepared statement (each connection plans it once). */
const RECORD_ATTEMPTS = preparedStatement(`
    with input as (
      select * from unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::int[], $7::text[], $8::int[], $9::text[],
        $10::text[], $11::int[], $12::timestamptz[])
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
    from input i where t.id = i.task_id`);
