import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * The exact number of a tenant's contacts without counting them (issue 18: an unfiltered
 * `GET /contacts` in page mode counted 100 000 index entries per request, 10–20 ms).
 *
 * `contact_counts` holds, per tenant, up to 64 partial counts ("slots"); the tenant's total is
 * their sum. Statement-level triggers keep them in step with `contacts` in the same transaction
 * as the change, so a reader's snapshot sees the count of the rows it sees: exact, never
 * approximated. Each statement adds its net change to the slot of its own backend
 * (`pg_backend_pid() % 64`): concurrent writers of one tenant update different rows, so they do
 * not queue on one counter row (two backends that share a slot wait for each other's commit, as
 * two inserts of one unique value would). A transaction only ever touches its backend's slot, and
 * every write is tenant-scoped, so no two transactions can lock counter rows in opposite orders.
 *
 * Inserts, deletes and TRUNCATE are followed; moving a contact to another tenant (which the API
 * never does, and a statement-level trigger cannot follow cheaply) is refused. The existing rows are counted here, under a lock that keeps writers out
 * until the migration's transaction commits.
 */
export const m0032ContactCounts: Migration = {
  name: '0032_contact_counts',
  async up(db) {
    await sql`create table contact_counts (
      tenant_id text not null,
      slot integer not null,
      n bigint not null,
      primary key (tenant_id, slot)
    ) with (fillfactor = 50)`.execute(db);
    // Transition tables need one trigger per event, so each event has its own function.
    await sql`create function contact_counts_insert() returns trigger language plpgsql
      set search_path from current as $$
      begin
        insert into contact_counts as c (tenant_id, slot, n)
          select tenant_id, pg_backend_pid() % 64, count(*) from new_rows group by tenant_id
          on conflict (tenant_id, slot) do update set n = c.n + excluded.n;
        return null;
      end $$`.execute(db);
    await sql`create function contact_counts_delete() returns trigger language plpgsql
      set search_path from current as $$
      begin
        insert into contact_counts as c (tenant_id, slot, n)
          select tenant_id, pg_backend_pid() % 64, -count(*) from old_rows group by tenant_id
          on conflict (tenant_id, slot) do update set n = c.n + excluded.n;
        return null;
      end $$`.execute(db);
    await sql`create function contacts_keep_tenant() returns trigger language plpgsql as $$
      begin
        raise exception 'a contact never moves to another tenant' using errcode = 'check_violation';
      end $$`.execute(db);
    await sql`create function contact_counts_clear() returns trigger language plpgsql
      set search_path from current as $$
      begin
        delete from contact_counts;
        return null;
      end $$`.execute(db);
    await sql`lock table contacts in share row exclusive mode`.execute(db);
    await sql`create trigger contact_counts_insert after insert on contacts
      referencing new table as new_rows for each statement execute function contact_counts_insert()`.execute(db);
    await sql`create trigger contact_counts_delete after delete on contacts
      referencing old table as old_rows for each statement execute function contact_counts_delete()`.execute(db);
    await sql`create trigger contacts_keep_tenant before update of tenant_id on contacts
      for each row when (old.tenant_id is distinct from new.tenant_id) execute function contacts_keep_tenant()`.execute(db);
    await sql`create trigger contact_counts_clear after truncate on contacts
      for each statement execute function contact_counts_clear()`.execute(db);
    await sql`insert into contact_counts (tenant_id, slot, n) select tenant_id, 0, count(*) from contacts group by tenant_id`.execute(db);
  },
};
