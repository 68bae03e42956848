import type { AccountUser } from '@crm/contracts';
import { AppError, type ErrorDetail, type InternalClient, notFound, validationError } from '@crm/http';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import type { GatewayDatabase } from '../db/database.ts';
import { generateApiKey, hashApiKey } from './api-key.ts';
import { findTenant, insertTenant, replaceKey, updateLimits } from './repo.ts';

/** NATS subject on which every gateway replica hears that a tenant's key or limits changed. */
export const TENANT_CHANGED_SUBJECT = 'crm.gateway.tenant.changed';

export const DEFAULT_LIMITS = { read_per_minute: 120, write_per_minute: 30 };

export interface TenantDeps {
  db: Kysely<GatewayDatabase>;
  nc: NatsConnection;
  sales: InternalClient;
}

interface Limits {
  read_per_minute: number;
  write_per_minute: number;
}

const limitsOf = (row: Limits) => ({ read_per_minute: row.read_per_minute, write_per_minute: row.write_per_minute });

async function newKey() {
  const apiKey = generateApiKey();
  return { apiKey, record: { id: `key_${crypto.randomUUID()}`, hash: await hashApiKey(apiKey), prefix: apiKey.slice(0, 8) } };
}

/**
 * Creates or updates an account user in sales (which owns users). A user sales refuses is a
 * 422 naming the fields (under `field`, e.g. `users[1].`), not a 503.
 */
export async function addTenantUser(
  deps: TenantDeps,
  tenantId: string,
  user: { email: string; name: string },
  requestId: string,
  field = '',
) {
  const response = await deps.sales<{ data: AccountUser } & { error?: { details?: ErrorDetail[] } }>('POST', '/internal/users', {
    tenantId,
    requestId,
    body: user,
  });
  const refused = response.status === 422 ? (response.body.error?.details ?? []) : [];
  if (refused.length > 0) throw validationError(refused.map((d) => ({ field: `${field}${d.field}`, message: d.message })));
  if (response.status !== 201) throw new AppError('service_unavailable', 'Could not store the user in the sales service');
  return response.body.data;
}

/**
 * Creates a tenant with its API key and users. Users are stored in sales first, so a failure
 * there leaves no tenant behind (orphan users of an unknown tenant are unreachable).
 */
export async function createTenant(
  deps: TenantDeps,
  input: { name: string; users?: { email: string; name: string }[]; limits?: Partial<Limits> },
  requestId: string,
) {
  const id = crypto.randomUUID();
  const users: AccountUser[] = [];
  for (const [i, user] of (input.users ?? []).entries()) users.push(await addTenantUser(deps, id, user, requestId, `users[${i}].`));
  const limits = { ...DEFAULT_LIMITS, ...input.limits };
  const { apiKey, record } = await newKey();
  await deps.db.transaction().execute((trx) => insertTenant(trx, { id, name: input.name, ...limits }, record));
  return { tenant_id: id, name: input.name, api_key: apiKey, users, limits };
}

/** Replaces the tenant's key; every replica drops the old one from its cache at once. */
export async function rotateTenantKey(deps: TenantDeps, tenantId: string) {
  if (!(await findTenant(deps.db, tenantId))) throw notFound('Tenant');
  const { apiKey, record } = await newKey();
  await replaceKey(deps.db, tenantId, record);
  deps.nc.publish(TENANT_CHANGED_SUBJECT, tenantId);
  await deps.nc.flush();
  return { api_key: apiKey };
}

/** Changes a tenant's rate limits; replicas pick the change up within the cache lifetime or at once via NATS. */
export async function setTenantLimits(deps: TenantDeps, tenantId: string, limits: Partial<Limits>) {
  const row = await updateLimits(deps.db, tenantId, limits);
  if (!row) throw notFound('Tenant');
  deps.nc.publish(TENANT_CHANGED_SUBJECT, tenantId);
  return { tenant_id: row.id, name: row.name, limits: limitsOf(row) };
}

/** The tenant as the admin API shows it. */
export async function getTenant(deps: TenantDeps, tenantId: string) {
  const row = await findTenant(deps.db, tenantId);
  if (!row) throw notFound('Tenant');
  return { tenant_id: row.id, name: row.name, limits: limitsOf(row), created_at: row.created_at.toISOString() };
}
