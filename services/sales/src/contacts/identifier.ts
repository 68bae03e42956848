import { type Kysely, sql } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';

const MAX_ID = 2_147_483_647; // ids are Postgres `integer`

/**
 * Resolves a contact `{identifier}` inside one tenant (contract §11): an all-digit identifier
 * naming an existing id wins; else the lowest-id exact `name`; else the lowest-id `email`
 * (case-insensitive); else the lowest-id `cif`; else undefined. One query, each branch
 * served by a tenant-leading index.
 */
export async function resolveContactIdentifier(
  db: Kysely<SalesDatabase>,
  tenantId: string,
  identifier: string,
): Promise<number | undefined> {
  const asId = /^\d+$/.test(identifier) && Number(identifier) <= MAX_ID ? Number(identifier) : null;
  const { rows } = await sql<{ id: number }>`
    select id from (
      select id, 0 as rank from contacts where tenant_id = ${tenantId} and id = ${asId}::integer
      union all
      (select id, 1 from contacts where tenant_id = ${tenantId} and name = ${identifier} order by id limit 1)
      union all
      (select id, 2 from contacts where tenant_id = ${tenantId} and lower(email) = lower(${identifier}) order by id limit 1)
      union all
      (select id, 3 from contacts where tenant_id = ${tenantId} and cif = ${identifier} order by id limit 1)
    ) matches
    order by rank, id
    limit 1`.execute(db);
  return rows[0]?.id;
}
