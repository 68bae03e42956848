import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * Indexes for keyset walks of the order list (contract §22, frozen): a page after a cursor is a
 * range scan of `(tenant_id, sort column, id)` from the cursor's position, and a page in page
 * mode reads the same index from either end. `reference` needs none: the unique
 * `(tenant_id, reference)` already orders the walk (a reference is unique, so `id` never breaks
 * a tie). The `enterprise_id` and `updated_at` indexes of 0010 are replaced by wider ones that
 * also give the id order after an equality filter or a tie; `opportunity_id` (a filter) had none.
 * Opportunities need nothing: 0003 already has `(tenant_id, …, id)` for each sort and filter.
 */
export const m0031OrdersKeyset: Migration = {
  name: '0031_orders_keyset',
  async up(db) {
    await sql`create index orders_tenant_id on orders (tenant_id, id)`.execute(db);
    for (const column of ['created_at', 'updated_at', 'date_limit', 'state', 'enterprise_id', 'opportunity_id'])
      await sql`create index ${sql.id(`orders_tenant_${column}_id`)} on orders (tenant_id, ${sql.ref(column)}, id)`.execute(db);
    await sql`drop index orders_tenant_updated`.execute(db);
    await sql`drop index orders_tenant_enterprise`.execute(db);
  },
};
