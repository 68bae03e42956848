import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';

type Db = Kysely<GatewayDatabase>;

export interface TenantRow {
  id: string;
  name: string;
  read_per_minute: number;
  write_per_minute: number;
}

/** The tenant whose active key has this hash, with the key id, or undefined. */
export function findTenantByKeyHash(db: Db, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
    .select(['tenants.id', 'tenants.name', 'tenants.read_per_minute', 'tenants.write_per_minute', 'api_keys.id as key_id'])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
}

/** Inserts a tenant and its first key. */
export async function insertTenant(db: Db, tenant: TenantRow, key: { id: string; hash: string; prefix: string }) {
  await db
    .insertInto('tenants')
    .values({ ...tenant, updated_at: new Date() })
    .execute();
  await db
    .insertInto('api_keys')
    .values({ id: key.id, tenant_id: tenant.id, key_hash: key.hash, prefix: key.prefix, revoked_at: null })
    .execute();
}

/** The tenant by id, or undefined. */
export function findTenant(db: Db, id: string) {
  return db
    .selectFrom('tenants')
    .select(['id', 'name', 'read_per_minute', 'write_per_minute', 'created_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** All tenants, oldest first. */
export function listTenants(db: Db) {
  return db
    .selectFrom('tenants')
    .select(['id', 'name', 'read_per_minute', 'write_per_minute', 'created_at'])
    .orderBy('created_at')
    .execute();
}

/** Revokes the tenant's active key and stores a new one, atomically. */
export function replaceKey(db: Db, tenantId: string, key: { id: string; hash: string; prefix: string }) {
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('tenant_id', '=', tenantId)
      .where('revoked_at', 'is', null)
      .execute();
    await trx
      .insertInto('api_keys')
      .values({ id: key.id, tenant_id: tenantId, key_hash: key.hash, prefix: key.prefix, revoked_at: null })
      .execute();
  });
}

/** Updates the given limits of a tenant; returns the updated row or undefined. */
export function updateLimits(db: Db, tenantId: string, limits: { read_per_minute?: number; write_per_minute?: number }) {
  return db
    .updateTable('tenants')
    .set({ ...limits, updated_at: new Date() })
    .where('id', '=', tenantId)
    .returning(['id', 'name', 'read_per_minute', 'write_per_minute'])
    .executeTakeFirst();
}
