import { inIdOrder, type ListRequest, type PageOfIds, readPageIds } from '@crm/db';
import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { EndpointsTable, WebhooksDatabase } from '../db/database.ts';

type Db = Kysely<WebhooksDatabase>;

/** Inserts an endpoint and returns the row. */
export function insertEndpoint(db: Db, values: Insertable<EndpointsTable>) {
  return db.insertInto('endpoints').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The tenant's endpoint with this id, or undefined. */
export function findEndpoint(db: Db, tenantId: string, id: number) {
  return db.selectFrom('endpoints').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Updates the tenant's endpoint; undefined when it does not exist. */
export function updateEndpoint(db: Db, tenantId: string, id: number, values: Updateable<EndpointsTable>) {
  return db
    .updateTable('endpoints')
    .set({ ...values, updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the tenant's endpoint (its tasks and attempts go with it); whether it existed. */
export async function deleteEndpoint(db: Db, tenantId: string, id: number): Promise<boolean> {
  const result = await db.deleteFrom('endpoints').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Makes `secret` current and keeps the previous one valid until `graceUntil`. */
export function rotateEndpointSecret(db: Db, tenantId: string, id: number, secret: string, graceUntil: Date) {
  return db
    .updateTable('endpoints')
    .set({
      previous_secret: sql`secret`,
      previous_secret_expires_at: graceUntil,
      secret,
      updated_at: sql`now()`,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** The tenant's endpoint with this id, locked for a write until the transaction ends; undefined when it does not exist. */
export function lockEndpoint(db: Db, tenantId: string, id: number) {
  return db.selectFrom('endpoints').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** One page of the tenant's endpoints (page or cursor mode) and its rows in list order. */
export async function listEndpoints(
  db: Db,
  tenantId: string,
  request: ListRequest,
): Promise<{ page: PageOfIds; rows: Selectable<EndpointsTable>[] }> {
  let query = db.selectFrom('endpoints as e').where('e.tenant_id', '=', tenantId);
  if (request.updatedSince) query = query.where('e.updated_at', '>=', request.updatedSince);
  const page = await readPageIds(query, 'e', request.window);
  if (page.ids.length === 0) return { page, rows: [] };
  const rows = await db.selectFrom('endpoints').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', page.ids).execute();
  return { page, rows: inIdOrder(rows, page.ids) };
}
