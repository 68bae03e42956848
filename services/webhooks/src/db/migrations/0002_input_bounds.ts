import type { Migration } from '@crm/db';
import { sql } from 'kysely';

// Contract §19: the database enforces the bounds the API checks, so no stored row can make a read,
// a list, a delete or a delivery fail. Rows that break them today are repaired first (see the
// README): out-of-range ids are renumbered (links follow), a description is cut to 255 characters,
// an event filter keeps its well-formed entries (an endpoint left with none is disabled, saying
// why), impossible timestamps and log values are reset or cleared, and a row nothing can repair (a
// URL outside 1..2048 characters — a cut URL points elsewhere —, an event whose id, tenant or type
// is empty or over 255 characters) is deleted. Frozen: never import application code here.

const MAX_INT = sql.lit(2147483647);
const MIN_TIME = sql.lit('0001-01-01 00:00:00+00');
const END_TIME = sql.lit('10000-01-01 00:00:00+00');

/** A timestamp column inside the RFC 3339 range 0001..9999 (`infinity` is outside). */
const inTimeRange = (column: string) =>
  sql`(${sql.ref(column)} >= ${MIN_TIME}::timestamptz and ${sql.ref(column)} < ${END_TIME}::timestamptz)`;

/** `*` or `resource.action` (lower case and underscores): the shape of every event type. */
const EVENT_ENTRY = `(\\*|[a-z][a-z_]*\\.[a-z][a-z_]*)`;
/**
 * An endpoint's event filter: 1..100 well-formed entries, one-dimensional, no null. The entries are
 * checked joined by commas; splitting the joined text again must give as many entries as the array
 * has, so no entry can hide a comma (`{"a.b,c.d"}`).
 */
const eventsFilterOk = sql`(array_ndims(events) = 1 and cardinality(events) between 1 and 100
  and array_position(events, null) is null
  and cardinality(string_to_array(array_to_string(events, ','), ',')) = cardinality(events)
  and array_to_string(events, ',') ~ ${sql.lit(`^${EVENT_ENTRY}(,${EVENT_ENTRY})*$`)})`;

const STATUSES = sql`('pending', 'delivered', 'failed')`;

/** Ids outside 1..2147483647 cannot be named in a path: renumber them after the highest valid id; the sequence stops there. */
async function renumberIds(db: Parameters<Migration['up']>[0], table: string, alsoUpdate?: (mapping: string) => ReturnType<typeof sql>) {
  const mapping = `${table}_renumbered`;
  await sql`create temporary table ${sql.table(mapping)} on commit drop as
    select id as old_id, (select coalesce(max(id), 0) from ${sql.table(table)} where id between 1 and ${MAX_INT})
      + row_number() over (order by id) as new_id
    from ${sql.table(table)} where id not between 1 and ${MAX_INT}`.execute(db);
  if (alsoUpdate) await alsoUpdate(mapping).execute(db);
  await sql`update ${sql.table(table)} t set id = m.new_id from ${sql.table(mapping)} m where t.id = m.old_id`.execute(db);
  const sequence = sql.table(`${table}_id_seq`);
  await sql`select setval(${`${table}_id_seq`}, least((select coalesce(max(id), 0) + 1 from ${sql.table(table)}), ${MAX_INT}), false)
    where (select last_value from ${sequence}) > ${MAX_INT}`.execute(db);
  await sql`alter sequence ${sequence} maxvalue ${MAX_INT}`.execute(db);
}

export const m0002InputBounds: Migration = {
  name: '0002_input_bounds',
  async up(db) {
    // The delivery log and queue follow a renumbered endpoint instead of blocking it.
    await sql`alter table delivery_tasks drop constraint delivery_tasks_endpoint_id_fkey,
      add constraint delivery_tasks_endpoint_id_fkey foreign key (endpoint_id) references endpoints (id)
        on delete cascade on update cascade`.execute(db);
    await sql`alter table delivery_attempts drop constraint delivery_attempts_endpoint_id_fkey,
      add constraint delivery_attempts_endpoint_id_fkey foreign key (endpoint_id) references endpoints (id)
        on delete cascade on update cascade`.execute(db);

    // endpoints: the resource of /webhooks/{id}.
    await sql`delete from endpoints where char_length(url) not between 1 and 2048`.execute(db);
    await renumberIds(db, 'endpoints');
    await sql`update endpoints set description = left(description, 255), updated_at = now() where char_length(description) > 255`.execute(
      db,
    );
    // A filter keeps its well-formed entries (first 100 distinct, in order); `*` among them means all.
    // One left with nothing is disabled rather than widened to everything behind the customer's back.
    await sql`with fixed as (
        select id, array(
          select e from unnest(events) with ordinality as u(e, n)
          where e is not null and e ~ ${sql.lit(`^${EVENT_ENTRY}$`)}
          group by e order by min(n) limit 100) as kept
        from endpoints where ${eventsFilterOk} is not true
      )
      update endpoints p set
        events = case when '*' = any(f.kept) or cardinality(f.kept) = 0 then '{*}'::text[] else f.kept end,
        enabled = p.enabled and cardinality(f.kept) > 0,
        disabled_reason = case when cardinality(f.kept) = 0
          then 'Its event filter held no valid event type; set events and enable it again' else p.disabled_reason end,
        updated_at = now()
      from fixed f where p.id = f.id`.execute(db);
    await sql`update endpoints set previous_secret = null, previous_secret_expires_at = null
      where not ${inTimeRange('previous_secret_expires_at')}`.execute(db);
    await sql`update endpoints set created_at = now() where not ${inTimeRange('created_at')}`.execute(db);
    await sql`update endpoints set updated_at = now() where not ${inTimeRange('updated_at')}`.execute(db);
    await sql`alter table endpoints
      add constraint endpoints_id_range check (id between 1 and ${MAX_INT}),
      add constraint endpoints_url_length check (char_length(url) between 1 and 2048),
      add constraint endpoints_description_length check (char_length(description) <= 255),
      add constraint endpoints_events_filter check ${eventsFilterOk},
      add constraint endpoints_previous_secret_expires_at_range check ${inTimeRange('previous_secret_expires_at')},
      add constraint endpoints_created_at_range check ${inTimeRange('created_at')},
      add constraint endpoints_updated_at_range check ${inTimeRange('updated_at')}`.execute(db);

    // events: what the consumer stores (its envelope check uses the same bounds); occurred_at is
    // the delivered `timestamp`, so it must be an instant JSON can carry.
    await sql`delete from events where char_length(id) not between 1 and 255 or char_length(tenant_id) not between 1 and 255
      or char_length(type) not between 1 and 255`.execute(db);
    await sql`update events set received_at = now() where not ${inTimeRange('received_at')}`.execute(db);
    await sql`update events set occurred_at = received_at where not ${inTimeRange('occurred_at')}`.execute(db);
    await sql`alter table events
      add constraint events_id_length check (char_length(id) between 1 and 255),
      add constraint events_tenant_id_length check (char_length(tenant_id) between 1 and 255),
      add constraint events_type_length check (char_length(type) between 1 and 255),
      add constraint events_occurred_at_range check ${inTimeRange('occurred_at')},
      add constraint events_received_at_range check ${inTimeRange('received_at')}`.execute(db);

    // delivery_tasks: an unknown status is failed (nothing more is attempted).
    await sql`update delivery_tasks set status = 'failed', updated_at = now() where status not in ${STATUSES}`.execute(db);
    await sql`update delivery_tasks set attempts = 0, updated_at = now() where attempts < 0`.execute(db);
    await sql`alter table delivery_tasks
      add constraint delivery_tasks_status_known check (status in ${STATUSES}),
      add constraint delivery_tasks_attempts_range check (attempts >= 0)`.execute(db);

    // delivery_attempts: the Delivery of /webhooks/{id}/deliveries; its id is `{delivery_id}`.
    await renumberIds(
      db,
      'delivery_attempts',
      (mapping) => sql`update delivery_tasks t set queued_attempt_id = m.new_id from ${sql.table(mapping)} m
        where t.queued_attempt_id = m.old_id`,
    );
    await sql`update delivery_attempts set
        attempt = greatest(attempt, 1),
        status = case when status in ${STATUSES} then status else 'failed' end,
        status_code = case when status_code between 100 and 999 then status_code end,
        duration_ms = case when duration_ms >= 0 then duration_ms end,
        response_excerpt = left(response_excerpt, 2048),
        event_id = left(event_id, 255),
        event_type = left(event_type, 255),
        created_at = case when ${inTimeRange('created_at')} then created_at else now() end,
        next_attempt_at = case when ${inTimeRange('next_attempt_at')} then next_attempt_at end
      where attempt < 1 or status not in ${STATUSES} or status_code not between 100 and 999 or duration_ms < 0
        or char_length(response_excerpt) > 2048 or char_length(event_id) > 255 or char_length(event_type) > 255
        or not ${inTimeRange('created_at')} or not ${inTimeRange('next_attempt_at')}`.execute(db);
    await sql`alter table delivery_attempts
      add constraint delivery_attempts_id_range check (id between 1 and ${MAX_INT}),
      add constraint delivery_attempts_attempt_range check (attempt >= 1),
      add constraint delivery_attempts_status_known check (status in ${STATUSES}),
      add constraint delivery_attempts_status_code_range check (status_code between 100 and 999),
      add constraint delivery_attempts_duration_ms_range check (duration_ms >= 0),
      add constraint delivery_attempts_response_excerpt_length check (char_length(response_excerpt) <= 2048),
      add constraint delivery_attempts_event_id_length check (char_length(event_id) <= 255),
      add constraint delivery_attempts_event_type_length check (char_length(event_type) <= 255),
      add constraint delivery_attempts_created_at_range check ${inTimeRange('created_at')},
      add constraint delivery_attempts_next_attempt_at_range check ${inTimeRange('next_attempt_at')}`.execute(db);
  },
};
