import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';

export interface AuditFilter {
  from?: Date;
  to?: Date;
  status?: number;
  method?: string;
  path?: string;
  limit: number;
  offset: number;
}

/** A tenant's audit records matching the filter, newest first, with the total count. */
export async function listAuditLogs(db: Kysely<GatewayDatabase>, tenantId: string, filter: AuditFilter) {
  let query = db.selectFrom('audit_logs').where('tenant_id', '=', tenantId);
  if (filter.from) query = query.where('occurred_at', '>=', filter.from);
  if (filter.to) query = query.where('occurred_at', '<', filter.to);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.method) query = query.where('method', '=', filter.method);
  if (filter.path?.endsWith('*')) query = query.where('path', 'like', `${filter.path.slice(0, -1).replace(/[\\%_]/g, '\\$&')}%`);
  else if (filter.path) query = query.where('path', '=', filter.path);
  const [{ total }, rows] = await Promise.all([
    query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
    query.selectAll().orderBy('occurred_at', 'desc').orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute(),
  ]);
  return {
    total: Number(total),
    rows: rows.map((r) => ({ ...r, id: Number(r.id), occurred_at: r.occurred_at.toISOString(), duration_ms: Number(r.duration_ms) })),
  };
}
