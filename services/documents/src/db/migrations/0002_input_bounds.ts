import type { Migration } from '@crm/db';
import { sql } from 'kysely';

// Contract §19: the database enforces the bounds the API checks, so no stored row can make a read,
// a list or a delete fail. Rows that break them today are repaired first (see the README):
// out-of-range ids are renumbered (links follow through ON UPDATE CASCADE), names are cut to 255
// characters or filled, impossible sizes, contact links and timestamps are cleared or reset, and
// attachments to impossible opportunity ids are removed. A repaired row gets a new updated_at so
// clients syncing with updated_since see the change. Frozen: never import application code here.

const MAX_INT = 2147483647;
const MIN_TIME = sql.lit('0001-01-01 00:00:00+00');
const END_TIME = sql.lit('10000-01-01 00:00:00+00');

/** A timestamp column inside the RFC 3339 range 0001..9999 (`infinity` is outside). */
const inTimeRange = (column: string) =>
  sql`${sql.ref(column)} >= ${MIN_TIME}::timestamptz and ${sql.ref(column)} < ${END_TIME}::timestamptz`;

export const m0002InputBounds: Migration = {
  name: '0002_input_bounds',
  async up(db) {
    // Links follow a renumbered id instead of blocking it.
    await sql`alter table documents drop constraint documents_category_id_fkey,
      add constraint documents_category_id_fkey foreign key (category_id) references document_categories (id) on update cascade`.execute(
      db,
    );
    await sql`alter table document_opportunities drop constraint document_opportunities_document_id_fkey,
      add constraint document_opportunities_document_id_fkey foreign key (document_id) references documents (id)
        on delete cascade on update cascade`.execute(db);

    for (const table of ['document_categories', 'documents']) {
      // Ids outside 1..2147483647 cannot be named in a path: renumber them after the highest valid id.
      await sql`update ${sql.table(table)} t set id = m.new_id, updated_at = now()
        from (select id, (select coalesce(max(id), 0) from ${sql.table(table)} where id between 1 and ${sql.lit(MAX_INT)})
                         + row_number() over (order by id) as new_id
              from ${sql.table(table)} where id not between 1 and ${sql.lit(MAX_INT)}) m
        where t.id = m.id`.execute(db);
      const sequence = sql.table(`${table}_id_seq`);
      await sql`select setval(${`${table}_id_seq`}, least((select coalesce(max(id), 0) + 1 from ${sql.table(table)}), ${sql.lit(MAX_INT)}), false)
        where (select last_value from ${sequence}) > ${sql.lit(MAX_INT)}`.execute(db);
      await sql`alter sequence ${sequence} maxvalue ${sql.lit(MAX_INT)}`.execute(db);
      await sql`update ${sql.table(table)} set created_at = now() where not (${inTimeRange('created_at')})`.execute(db);
      await sql`update ${sql.table(table)} set updated_at = now() where not (${inTimeRange('updated_at')})`.execute(db);
    }

    // Category names are unique per tenant: a repaired name carries the id so it cannot collide.
    await sql`update document_categories set name = left(name, 200) || ' (' || id || ')', updated_at = now()
      where char_length(name) > 255`.execute(db);
    await sql`update document_categories set name = 'Category (' || id || ')', updated_at = now() where char_length(name) = 0`.execute(db);
    await sql`update documents set name = left(name, 255), updated_at = now() where char_length(name) > 255`.execute(db);
    await sql`update documents set name = 'Untitled', updated_at = now() where char_length(name) = 0`.execute(db);
    // Unknown size: include=metadata looks it up in storage again.
    await sql`update documents set size_bytes = null, updated_at = now() where size_bytes not between 0 and 9007199254740991`.execute(db);
    // An id outside the range names no contact or opportunity.
    await sql`update documents set contact_id = null, updated_at = now() where contact_id not between 1 and ${sql.lit(MAX_INT)}`.execute(
      db,
    );
    await sql`with gone as (delete from document_opportunities where opportunity_id not between 1 and ${sql.lit(MAX_INT)} returning document_id)
      update documents set updated_at = now() where id in (select document_id from gone)`.execute(db);

    await sql`alter table document_categories
      add constraint document_categories_id_range check (id between 1 and ${sql.lit(MAX_INT)}),
      add constraint document_categories_name_length check (char_length(name) between 1 and 255),
      add constraint document_categories_created_at_range check (${inTimeRange('created_at')}),
      add constraint document_categories_updated_at_range check (${inTimeRange('updated_at')})`.execute(db);
    await sql`alter table documents
      add constraint documents_id_range check (id between 1 and ${sql.lit(MAX_INT)}),
      add constraint documents_name_length check (char_length(name) between 1 and 255),
      add constraint documents_size_bytes_range check (size_bytes between 0 and 9007199254740991),
      add constraint documents_contact_id_range check (contact_id between 1 and ${sql.lit(MAX_INT)}),
      add constraint documents_category_id_range check (category_id between 1 and ${sql.lit(MAX_INT)}),
      add constraint documents_created_at_range check (${inTimeRange('created_at')}),
      add constraint documents_updated_at_range check (${inTimeRange('updated_at')})`.execute(db);
    await sql`alter table document_opportunities
      add constraint document_opportunities_opportunity_id_range check (opportunity_id between 1 and ${sql.lit(MAX_INT)})`.execute(db);
  },
};
