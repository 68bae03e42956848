import type { Migration } from '@crm/db';
import { sql } from 'kysely';

// Contract §22: a list sorted on a field is walked over a (tenant_id, field, id) index, so a page —
// by offset from either end, or by keyset after a cursor's (field, id) — reads only its own index
// entries. `documents_tenant_id` (0001) already serves the id sort. Categories need none: a tenant
// has a handful (General plus what an operator adds), found through document_categories_tenant_name.
// Frozen: never import application code here.

export const m0003ListIndexes: Migration = {
  name: '0003_list_indexes',
  async up(db) {
    for (const column of ['name', 'created_at', 'updated_at']) {
      await sql`create index ${sql.id(`documents_tenant_${column}_id`)} on documents (tenant_id, ${sql.ref(column)}, id)`.execute(db);
    }
  },
};
