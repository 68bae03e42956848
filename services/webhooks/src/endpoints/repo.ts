import { fetchPage, type PageRequest } from '@crm/db';
import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
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

/** One page of the tenant's endpoints and the total count. */
export async function listEndpoints(db: Db, tenantId: string, page: PageRequest) {
  let query = db.selectFrom('endpoints').where('tenant_id', '=', tenantId);
  if (page.updatedSince) query = query.where('updated_at', '>=', page.updatedSince);
  return fetchPage(query, page, (q) => q.selectAll());
}
