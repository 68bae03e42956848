import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * Indexes for keyset list walks (contract §22, frozen): a page after a cursor is a range scan
 * of `(tenant_id, sort column, id)` from the cursor's position, and a page in page mode reads
 * the same index from either end. `reference` needs none: its unique `(tenant_id, reference)`
 * already orders the walk (a reference is unique, so `id` never breaks a tie). The category
 * list pages its roots only, so its indexes are partial (`parent_id is null`).
 * `products_tenant_updated (tenant_id, updated_at)` is replaced by the wider one that also
 * serves the `updated_since` filter.
 */
export const m0003ListIndexes: Migration = {
  name: '0003_list_indexes',
  async up(db) {
    await sql`create index products_tenant_id on products (tenant_id, id)`.execute(db);
    await sql`create index products_tenant_name_id on products (tenant_id, name, id)`.execute(db);
    await sql`create index products_tenant_created_id on products (tenant_id, created_at, id)`.execute(db);
    await sql`create index products_tenant_updated_id on products (tenant_id, updated_at, id)`.execute(db);
    await sql`drop index products_tenant_updated`.execute(db);
    for (const column of ['id', 'name', 'reference', 'created_at', 'updated_at']) {
      const columns = column === 'id' ? sql`tenant_id, id` : sql`tenant_id, ${sql.ref(column)}, id`;
      await sql`create index ${sql.id(`product_categories_roots_${column}`)} on product_categories (${columns}) where parent_id is null`.execute(
        db,
      );
    }
  },
};
