import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * The bounds of contract §19 in the gateway's tables, so no row can hold what the API refuses
 * or cannot read back. Rows that break them are repaired first (see the README):
 * - tenants: a limit below 1 becomes 1; a name is cut to 255 characters, an empty one becomes the id;
 * - audit_logs: a non-finite or negative duration becomes 0; a status that is no HTTP status
 *   (outside 100..599) cannot be repaired and the record is deleted;
 * - idempotency_keys (a 24-hour cache): records with a key the API refuses or an impossible
 *   status are deleted, which only makes the key usable again;
 * - rate_limits (unlogged budgets): a non-finite arrival time is deleted, i.e. a full budget.
 */
export const m0005InputBounds: Migration = {
  name: '0005_input_bounds',
  async up(db) {
    await sql`update tenants set read_per_minute = greatest(read_per_minute, 1), write_per_minute = greatest(write_per_minute, 1),
      name = case when name = '' then id else left(name, 255) end
      where read_per_minute < 1 or write_per_minute < 1 or name = '' or char_length(name) > 255`.execute(db);
    await sql`alter table tenants
      add constraint tenants_read_per_minute_range check (read_per_minute between 1 and 2147483647),
      add constraint tenants_write_per_minute_range check (write_per_minute between 1 and 2147483647),
      add constraint tenants_name_length check (char_length(name) between 1 and 255)`.execute(db);

    await sql`delete from audit_logs where status not between 100 and 599`.execute(db);
    // 'NaN' sorts above every number in PostgreSQL, so "< 'Infinity'" also excludes it.
    await sql`update audit_logs set duration_ms = 0 where not (duration_ms >= 0 and duration_ms < 'Infinity')`.execute(db);
    await sql`alter table audit_logs
      add constraint audit_logs_status_range check (status between 100 and 599),
      add constraint audit_logs_duration_finite check (duration_ms >= 0 and duration_ms < 'Infinity')`.execute(db);

    await sql`delete from idempotency_keys where key !~ '^[ -~]{1,255}$' or status not between 100 and 599`.execute(db);
    await sql`alter table idempotency_keys
      add constraint idempotency_keys_key_printable check (key ~ '^[ -~]{1,255}$'),
      add constraint idempotency_keys_status_range check (status between 100 and 599)`.execute(db);

    await sql`delete from rate_limits where not (tat_ms > '-Infinity' and tat_ms < 'Infinity')`.execute(db);
    await sql`alter table rate_limits add constraint rate_limits_tat_finite check (tat_ms > '-Infinity' and tat_ms < 'Infinity')`.execute(
      db,
    );
  },
};
